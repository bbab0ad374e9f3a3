// terraform/view.ts's helperChoice against Terraform's rules: cliconfig
// Config.CredentialsSource (the merged credentials_helper map's first label, and no helper
// when its plugin is missing), cliconfig GlobalPluginDirs, and plugin/discovery
// findPluginPaths, ResolvePluginPaths, PluginMetaSet.WithName and Newest. The real terraform
// referees the same rules in test/e2e/terraform-svchost.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { terraformViews, type HelperChoice } from "../../../src/terraform/view.ts";

const HOME = "/home/me";
const RC = `${HOME}/.terraformrc`;
const DIR = `${HOME}/.terraform.d`;
const PLUGINS = `${DIR}/plugins`;
const ARCH_PLUGINS = `${PLUGINS}/linux_amd64`;

/** The views of `files` (a path ending in "/" is a directory); plugin files are "". */
function views(files: Record<string, string>, env: Record<string, string> = {}) {
  const parent = (file: string) => file.slice(0, file.replace(/\/$/, "").lastIndexOf("/"));
  const dirs = new Set<string>();
  for (const file of Object.keys(files)) {
    if (file.endsWith("/")) dirs.add(file.slice(0, -1));
    for (let dir = parent(file); dir.length > 1; dir = parent(dir)) dirs.add(dir);
  }
  return terraformViews({
    env,
    platform: "linux",
    arch: "x64",
    homedir: HOME,
    files: {
      exists: (file) => file in files || dirs.has(file),
      isFile: (file) => file in files && !file.endsWith("/"),
      list: (dir) =>
        dirs.has(dir)
          ? [...Object.keys(files), ...dirs]
              .filter((file) => parent(file) === dir)
              .map((file) => file.slice(dir.length + 1).replace(/\/$/, ""))
          : undefined,
      read: (file) => (file.endsWith("/") ? undefined : files[file]),
    },
  });
}

/** The choice in short: "none", "runs NAME PLUGIN", "missing NAME", "random A=… B=…". */
function choice(files: Record<string, string>, env: Record<string, string> = {}): string {
  return describeChoice(views(files, env).Terraform.helperChoice);
}

function describeChoice(chosen: HelperChoice): string {
  const short = (file: string | undefined) => file?.slice(PLUGINS.length + 1) ?? "none";
  switch (chosen.kind) {
    case "none":
      return "none";
    case "runs":
      return `runs ${chosen.helper.name} ${short(chosen.plugin)}`;
    case "missing":
      return `missing ${chosen.helper.name}`;
    case "random":
      return `random ${chosen.outcomes.map(({ helper, plugin }) => `${helper.name}=${short(plugin)}`).join(" ")}`;
  }
}

const ours = 'credentials_helper "keychain" {}\n';
const other = 'credentials_helper "other" {}\n';
const plugin = (name: string) => ({ [`${PLUGINS}/${name}`]: "" });

describe("helperChoice: the helper Terraform runs", () => {
  test("no credentials_helper block: none, whatever the plugin directory holds", () => {
    assert.equal(choice({ [RC]: "", ...plugin("terraform-credentials-keychain") }), "none");
  });

  test("the block and its plugin: it runs", () => {
    assert.equal(
      choice({ [RC]: ours, ...plugin("terraform-credentials-keychain") }),
      "runs keychain terraform-credentials-keychain",
    );
  });

  test("our block in a drop-in, no executable in the plugin directories: none (issue 42, cause 5)", () => {
    assert.equal(choice({ [RC]: "", [`${DIR}/keychain.tfrc`]: ours }), "missing keychain");
  });

  test("two labels in two files: one at random each run, the one without a plugin asking none (issue 42, cause 5)", () => {
    assert.equal(
      choice({
        [RC]: other,
        [`${DIR}/keychain.tfrc`]: ours,
        ...plugin("terraform-credentials-keychain"),
      }),
      "random other=none keychain=terraform-credentials-keychain",
    );
  });

  test("two blocks of one label are one map entry: the last file's", () => {
    const views_ = views({
      [RC]: ours,
      [`${DIR}/a.tfrc`]: 'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}\n',
      ...plugin("terraform-credentials-keychain"),
    });
    const chosen = views_.Terraform.helperChoice;
    if (chosen.kind !== "runs") assert.fail(`runs nothing: ${chosen.kind}`);
    assert.deepEqual(chosen.helper.args, ["--backend", "pass"]);
  });

  test("the <os>_<arch> subdirectory is searched too", () => {
    assert.equal(
      choice({ [RC]: ours, [`${ARCH_PLUGINS}/terraform-credentials-keychain`]: "" }),
      "runs keychain linux_amd64/terraform-credentials-keychain",
    );
  });

  test("the file name's prefix is case-sensitive, the plugin name is lowercased, the label compared exactly", () => {
    assert.equal(
      choice({ [RC]: ours, ...plugin("Terraform-credentials-keychain") }),
      "missing keychain",
    );
    assert.equal(
      choice({ [RC]: ours, ...plugin("terraform-credentials-KeyChain") }),
      "runs keychain terraform-credentials-KeyChain",
    );
    assert.equal(
      choice({
        [RC]: 'credentials_helper "Keychain" {}\n',
        ...plugin("terraform-credentials-Keychain"),
      }),
      "missing Keychain",
    );
  });

  test("a directory of the plugin's name is no plugin; a versioned file is", () => {
    assert.equal(
      choice({ [RC]: ours, [`${PLUGINS}/terraform-credentials-keychain/`]: "" }),
      "missing keychain",
    );
    assert.equal(
      choice({ [RC]: ours, ...plugin("terraform-credentials-keychain_v1.2.3_x5") }),
      "runs keychain terraform-credentials-keychain_v1.2.3_x5",
    );
  });

  test("several versions: the newest, a legacy name counting as 0.0.0", () => {
    assert.equal(
      choice({
        [RC]: ours,
        ...plugin("terraform-credentials-keychain"),
        ...plugin("terraform-credentials-keychain_v0.10.0"),
        ...plugin("terraform-credentials-keychain_v0.9.0"),
      }),
      "runs keychain terraform-credentials-keychain_v0.10.0",
    );
  });

  test("another helper's plugin runs it, not ours", () => {
    assert.equal(
      choice({ [RC]: other, ...plugin("terraform-credentials-other") }),
      "runs other terraform-credentials-other",
    );
  });

  test("OpenTofu also searches $XDG_DATA_HOME/opentofu/plugins; Terraform does not", () => {
    const files = {
      [RC]: ours,
      [`${HOME}/.local/share/opentofu/plugins/terraform-credentials-keychain`]: "",
    };
    const both = views(files, { XDG_DATA_HOME: `${HOME}/.local/share` });
    assert.equal(describeChoice(both.Terraform.helperChoice), "missing keychain");
    assert.equal(both.OpenTofu.helperChoice.kind, "runs");
  });
});
