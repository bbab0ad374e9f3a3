import path from "node:path";

const APP_DIR = "terraform-credentials-keychain";

/**
 * The per-user cache directory where the single executable unpacks its native addon:
 * `$XDG_CACHE_HOME` (when absolute, as the XDG spec requires) or `~/.cache` on Linux and
 * other Unixes, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows.
 */
export function addonCacheDir(
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform,
  homedir: string,
): string {
  if (platform === "win32") {
    const local = env.LOCALAPPDATA;
    // An empty or relative value would unpack the addon relative to the working directory.
    const base =
      local !== undefined && path.win32.isAbsolute(local)
        ? local
        : path.win32.join(homedir, "AppData", "Local");
    return path.win32.join(base, APP_DIR, "cache");
  }
  if (platform === "darwin") return path.posix.join(homedir, "Library", "Caches", APP_DIR);
  const xdg = env.XDG_CACHE_HOME;
  const base =
    xdg !== undefined && path.posix.isAbsolute(xdg) ? xdg : path.posix.join(homedir, ".cache");
  return path.posix.join(base, APP_DIR);
}
