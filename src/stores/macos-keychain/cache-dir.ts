import path from "node:path";
import { CliError } from "../../errors.ts";

const APP_DIR = "terraform-credentials-keychain";

/**
 * The per-user cache directory where the single executable unpacks its native addon:
 * `$XDG_CACHE_HOME` (when absolute, as the XDG spec requires) or `~/.cache` on Linux and
 * other Unixes, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows.
 *
 * Throws a `CliError` when the home directory it would fall back to is empty or relative
 * (`HOME=`): the cache would then lie under the working directory, which for Terraform may
 * be an untrusted clone, and a library planted there would be loaded.
 */
export function addonCacheDir(
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform,
  homedir: string,
): string {
  if (platform === "win32") {
    const local = env.LOCALAPPDATA;
    // An empty or relative value would unpack the addon relative to the working directory.
    if (local !== undefined && isAbsoluteWindowsPath(local)) {
      return path.win32.join(local, APP_DIR, "cache");
    }
    if (!isAbsoluteWindowsPath(homedir)) throw relativeHome(homedir, "LOCALAPPDATA");
    return path.win32.join(homedir, "AppData", "Local", APP_DIR, "cache");
  }
  if (platform === "darwin") {
    if (!path.posix.isAbsolute(homedir)) throw relativeHome(homedir);
    return path.posix.join(homedir, "Library", "Caches", APP_DIR);
  }
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && path.posix.isAbsolute(xdg)) return path.posix.join(xdg, APP_DIR);
  if (!path.posix.isAbsolute(homedir)) throw relativeHome(homedir, "XDG_CACHE_HOME");
  return path.posix.join(homedir, ".cache", APP_DIR);
}

// A drive letter or a UNC share: "\\x" alone is relative to the current drive.
function isAbsoluteWindowsPath(value: string): boolean {
  return /^(?:[A-Za-z]:[\\/]|[\\/]{2}[^\\/])/.test(value);
}

function relativeHome(homedir: string, alternative?: string): CliError {
  const what = homedir === "" ? "empty" : `relative (${JSON.stringify(homedir)})`;
  const instead = alternative === undefined ? "" : `, or set ${alternative} to an absolute path`;
  return new CliError(
    `the home directory is ${what}, so the keychain addon has no safe cache directory: set HOME to your absolute home directory${instead}`,
  );
}
