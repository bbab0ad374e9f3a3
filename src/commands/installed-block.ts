import { findCredentialsHelpers } from "../terraform/cli-config.ts";
import { readTextIfExists } from "../system/files.ts";
import { HELPER_BLOCK_NAME, locationsOf } from "./install.ts";
import type { Machine } from "../system/io.ts";

/** Our credentials_helper block as the CLI config in effect has it. */
interface InstalledBlock {
  /** The CLI config file it is in. */
  readonly file: string;
  /** Its args (empty when it has none); `undefined` when they are not plain strings. */
  readonly args: readonly string[] | undefined;
}

/**
 * The `credentials_helper "keychain"` block of the CLI config Terraform reads
 * (`TF_CLI_CONFIG_FILE`, else ~/.terraformrc), else of OpenTofu's (~/.tofurc or its XDG
 * tofurc), as `terraformLocations` chooses them; `undefined` when neither has one. A file
 * that cannot be read or scanned counts as having none: `doctor` reports it.
 */
export function installedBlock(machine: Machine): InstalledBlock | undefined {
  const locations = locationsOf(machine);
  for (const file of new Set([locations.terraformConfigFile, locations.tofuConfigFile])) {
    let ours;
    try {
      const text = readTextIfExists(file);
      if (text === undefined) continue;
      ours = findCredentialsHelpers(text).find((helper) => helper.name === HELPER_BLOCK_NAME);
    } catch {
      continue;
    }
    if (ours !== undefined)
      return { file, args: ours.argsUnparsed ? undefined : (ours.args ?? []) };
  }
  return undefined;
}
