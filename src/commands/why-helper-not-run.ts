import type { Situation } from "../fixes.ts";
import { quote } from "../system/quote.ts";
import { whereIs, type TerraformView } from "../terraform/view.ts";
import { HELPER_BLOCK_NAME } from "./cli-config-edits.ts";

/** Why Terraform would not ask this helper for a host's token, and the fix's situation. */
interface NotRun {
  readonly reason: string;
  readonly situation: Situation;
}

/**
 * Why the tool of `view` would not run this helper (its `credentials_helper "keychain"`
 * block, with an executable of that name in the tool's plugin directories), as the view's
 * `helperChoice` says; `undefined` when it would. `import` refuses on it and doctor says it:
 * a token moved into a store the tool never asks is a token it stops sending.
 */
export function whyHelperNotRun(view: TerraformView): NotRun | undefined {
  const { tool, helperChoice: choice } = view;
  const plugin = (name: string) => quote(`terraform-credentials-${name}`);
  const dirs = view.pluginDirs.join(" or ");
  switch (choice.kind) {
    case "none":
      return {
        reason: `${tool} runs no credentials helper: ${view.mainFile} and the files it merges set no credentials_helper`,
        situation: "helper-not-run",
      };
    case "missing": {
      const { name } = choice.helper;
      const where = `credentials_helper ${quote(name)} (${whereIs(choice.helper)})`;
      // ResolvePluginPaths lowercases plugin names; WithName compares the label exactly.
      const lowercased =
        name !== name.toLowerCase()
          ? `; ${tool} lowercases plugin names, so a label must be lowercase`
          : "";
      return {
        reason: `${tool} runs no credentials helper: it finds no ${plugin(name)} for ${where} in ${dirs}${lowercased}`,
        situation:
          name.toLowerCase() === HELPER_BLOCK_NAME ? "helper-not-run" : "install-over-other-helper",
      };
    }
    case "runs":
      if (choice.helper.name === HELPER_BLOCK_NAME) return undefined;
      return {
        reason: `${tool} runs the credentials helper ${quote(choice.helper.name)} (${whereIs(choice.helper)}), not this one`,
        situation: "install-over-other-helper",
      };
    case "random": {
      const each = choice.outcomes.map(
        ({ helper, plugin: found }) =>
          `${quote(helper.name)} (${whereIs(helper)}${found === undefined ? `, no ${plugin(helper.name)} found, so no helper at all` : ""})`,
      );
      return {
        reason: `${tool} merges ${choice.outcomes.length} credentials_helper blocks and runs one at random each time: ${each.join(", ")}`,
        situation: "several-helpers",
      };
    }
  }
}
