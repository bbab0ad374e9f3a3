import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { ESLint } from "eslint";
import tseslint from "typescript-eslint";

/**
 * Each layer rule of eslint.config.js, held by planting an import that breaks it (and one
 * beside it that keeps it) into a file of that folder and linting the text. The planted
 * files are never written: ESLint lints them as text under their would-be paths, without
 * type information (the layer rules need none).
 */
const ROOT = path.join(import.meta.dirname, "../../..");
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: [{ files: ["**/*.ts"], ...tseslint.configs.disableTypeChecked }],
});

const LAYER_RULES = new Set(["@typescript-eslint/no-restricted-imports", "no-restricted-syntax"]);

/** The layer rules' messages for `source` planted in `file` (a path from the repository). */
async function layerFindings(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: file });
  return (result?.messages ?? [])
    .filter(({ ruleId }) => ruleId !== null && LAYER_RULES.has(ruleId))
    .map(({ message }) => message);
}

const plant = (specifier: string) => `export { x } from "${specifier}";\n`;
const plantDynamic = (specifier: string) =>
  `export const load = async () => import("${specifier}");\n`;

// [what the rule says, the planted file, an import that breaks it, one that keeps it]
const RULES: readonly (readonly [string, string, string, string])[] = [
  ["protocol/ imports no store", "src/protocol/x.ts", "../stores/registry.ts", "./hostname.ts"],
  [
    "protocol/ imports no command",
    "src/protocol/x.ts",
    "../commands/doctor.ts",
    "../system/quote.ts",
  ],
  [
    "protocol/ imports not terraform/",
    "src/protocol/x.ts",
    "../terraform/locations.ts",
    "../errors.ts",
  ],
  ["protocol/ imports not cli/", "src/protocol/x.ts", "../cli/run.ts", "./verbs.ts"],
  [
    "a store imports no command",
    "src/stores/pass/x.ts",
    "../../commands/doctor.ts",
    "../../system/deadline.ts",
  ],
  ["a store imports not cli/", "src/stores/secret-service/x.ts", "../../cli/run.ts", "./wire.ts"],
  [
    "the registry imports no command",
    "src/stores/registry.ts",
    "../commands/options.ts",
    "./pass/description.ts",
  ],
  [
    "a store imports no other store's folder",
    "src/stores/pass/x.ts",
    "../secret-service/probe.ts",
    "../store-description.ts",
  ],
  [
    "terraform/ imports no command",
    "src/terraform/x.ts",
    "../commands/install.ts",
    "../protocol/hostname.ts",
  ],
  ["terraform/ imports not cli/", "src/terraform/x.ts", "../cli/run.ts", "./locations.ts"],
  [
    "terraform/ imports no store",
    "src/terraform/x.ts",
    "../stores/registry.ts",
    "../system/quote.ts",
  ],
  ["system/ imports no store", "src/system/x.ts", "../stores/registry.ts", "./deadline.ts"],
  ["system/ imports no command", "src/system/x.ts", "../commands/options.ts", "./io.ts"],
  ["system/ imports not protocol/", "src/system/x.ts", "../protocol/hostname.ts", "../errors.ts"],
  ["commands/ import not cli/", "src/commands/x.ts", "../cli/run.ts", "../stores/registry.ts"],
  ["commands/ name no store", "src/commands/x.ts", "../stores/pass/pass-probe.ts", "./options.ts"],
  [
    "cli/ names no store",
    "src/cli/x.ts",
    "../stores/secret-service/probe.ts",
    "../commands/options.ts",
  ],
  [
    "main.ts names no store",
    "src/main.ts",
    "./stores/macos-keychain/keychain-calls.ts",
    "./stores/registry.ts",
  ],
  ["nothing imports main.ts", "src/cli/x.ts", "../main.ts", "./run.ts"],
];

describe("the layer rules of eslint.config.js", () => {
  for (const [rule, file, breaking, keeping] of RULES) {
    test(`${rule}: a planted import fails lint, static or dynamic, and its neighbour passes`, async () => {
      assert.notDeepEqual(await layerFindings(file, plant(breaking)), [], `${breaking} in ${file}`);
      assert.notDeepEqual(
        await layerFindings(file, plantDynamic(breaking)),
        [],
        `import("${breaking}") in ${file}`,
      );
      assert.deepEqual(await layerFindings(file, plant(keeping)), [], `${keeping} in ${file}`);
    });
  }
});
