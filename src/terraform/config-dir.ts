import { CliError } from "../errors.ts";
import {
  findCredentialsBlockItems,
  findCredentialsBlocks,
  findCredentialsHelpers,
  type CredentialsBlock,
} from "./cli-config.ts";
import { parseCredentialsFile } from "./credentials-file.ts";

/**
 * Besides its main CLI config file, Terraform merges every `*.tfrc` and `*.tfrc.json` file in
 * its config directory (`~/.terraform.d`, `%APPDATA%\terraform.d`), `credentials.tfrc.json`
 * included, unless TF_CLI_CONFIG_FILE is set (Terraform's `cliconfig.LoadConfig` and
 * `loadConfigDir`). A `credentials_helper` there counts as much as one in ~/.terraformrc:
 * with two different ones, Terraform refuses the whole config ("No more than one
 * credentials_helper block may be specified") and runs no helper at all.
 */
export function configDirFileNames(names: readonly string[]): string[] {
  // Go's ReadDir returns names sorted; the merge order follows it.
  return names.filter((name) => name.endsWith(".tfrc") || name.endsWith(".tfrc.json")).sort();
}

/** What one CLI config file contributes that matters to the helper. */
export interface ConfigFileContent {
  /** The names of its credentials_helper blocks. */
  readonly helpers: readonly string[];
  /** The hosts of its credentials blocks, as written: each wins over the helper. */
  readonly credentialsHosts: readonly string[];
}

/**
 * Reads a CLI config file's helpers and credentials, in HCL (`.tfrc`) or JSON (`.tfrc.json`)
 * syntax. Throws a `CliError` naming the file when it cannot be read as either.
 */
export function readConfigFile(file: string, text: string): ConfigFileContent {
  if (!file.endsWith(".json")) {
    return {
      helpers: findCredentialsHelpers(text).map(({ name }) => name),
      credentialsHosts: findCredentialsBlocks(text),
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON`);
  }
  const helperBlock =
    typeof parsed === "object" && parsed !== null
      ? (parsed as Record<string, unknown>).credentials_helper
      : undefined;
  const helpers =
    typeof helperBlock === "object" && helperBlock !== null ? Object.keys(helperBlock) : [];
  return {
    helpers,
    credentialsHosts: parseCredentialsFile(text, file).hosts.map(({ name }) => name),
  };
}

/**
 * The credentials blocks of a CLI config file (`~/.terraformrc` and its family, `*.tfrc`,
 * `*.tfrc.json`). A file in JSON syntax (by name, or by content as HCL 1 decides) lists its
 * hosts with no token and no extent: this tool never edits JSON syntax. Throws a `CliError`
 * when native syntax cannot be scanned; JSON that is not the credentials shape has none.
 */
export function credentialsBlocksIn(file: string, text: string): CredentialsBlock[] {
  if (!file.endsWith(".json") && !/^\p{White_Space}*\{/u.test(text)) {
    return findCredentialsBlockItems(text);
  }
  try {
    return parseCredentialsFile(text, file).hosts.map(({ name }) => ({
      host: name,
      token: undefined,
      start: 0,
      end: 0,
    }));
  } catch {
    return [];
  }
}
