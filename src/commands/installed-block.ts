import type { Machine } from "../system/io.ts";
import { helperInEffect } from "../terraform/view.ts";
import { HELPER_BLOCK_NAME } from "./cli-config-edits.ts";
import { viewsOf } from "./read-view.ts";

/** Our credentials_helper block as the CLI config in effect has it. */
interface InstalledBlock {
  /** The CLI config file it is in. */
  readonly file: string;
  /** Its args (empty when it has none); `undefined` when they are not plain strings. */
  readonly args: readonly string[] | undefined;
}

/**
 * The `credentials_helper "keychain"` block in effect for Terraform (its main CLI config
 * file, `TF_CLI_CONFIG_FILE`, `TERRAFORM_CONFIG` or ~/.terraformrc, merged with the config
 * directory's drop-ins, the last block winning), else for OpenTofu, as the one view of
 * `terraform/view.ts` reads them; `undefined` when neither has one. A file that cannot be
 * read or scanned counts as having none: `doctor` reports it.
 */
export function installedBlock(machine: Machine): InstalledBlock | undefined {
  const helper = helperInEffect(viewsOf(machine), HELPER_BLOCK_NAME);
  return helper === undefined ? undefined : { file: helper.file, args: helper.args };
}
