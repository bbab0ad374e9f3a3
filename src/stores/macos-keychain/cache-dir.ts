import path from "node:path";
import { CliError } from "../../errors.ts";

/**
 * The per-user cache directory where the single executable unpacks its native addon:
 * `~/Library/Caches/terraform-credentials-keychain`, as macOS wants caches kept.
 *
 * Throws a `CliError` when the home directory is empty or relative (`HOME=`): the cache
 * would then lie under the working directory, which for Terraform may be an untrusted
 * clone, and a library planted there would be loaded.
 */
export function addonCacheDir(homedir: string): string {
  if (!path.posix.isAbsolute(homedir)) {
    const what = homedir === "" ? "empty" : `relative (${JSON.stringify(homedir)})`;
    throw new CliError(
      `the home directory is ${what}, so the keychain addon has no safe cache directory: set HOME to your absolute home directory`,
    );
  }
  return path.posix.join(homedir, "Library", "Caches", "terraform-credentials-keychain");
}
