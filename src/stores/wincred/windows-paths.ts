/**
 * Windows paths as WSL maps them, without asking WSL: pure, so the helper needs neither
 * `wslpath` nor `wslvar` (which are missing from some distributions, and slow).
 */

/** Where WSL mounts the Windows drives when /etc/wsl.conf does not say. */
const DEFAULT_MOUNT_ROOT = "/mnt/";

/**
 * The `root` of `[automount]` in the text of /etc/wsl.conf (`undefined`: no such file), as
 * WSL reads it: the last one wins, with or without quotes, and always ends with "/".
 * Comments start with "#" or ";"; section and key names are case-insensitive.
 */
export function automountRoot(wslConf: string | undefined): string {
  let section = "";
  let root: string | undefined;
  for (const raw of (wslConf ?? "").split(/\r?\n/)) {
    const line = raw.replace(/\s[#;].*$/, "").trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[\s*([^\]]*?)\s*\]$/.exec(line);
    if (header !== null) {
      section = (header[1] ?? "").toLowerCase();
      continue;
    }
    const [, key = "", given = ""] = /^([^=]+?)\s*=\s*(.*)$/.exec(line) ?? [];
    if (section === "automount" && key.toLowerCase() === "root") {
      const value = given.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
      if (value.startsWith("/")) root = value;
    }
  }
  return root === undefined ? DEFAULT_MOUNT_ROOT : root.endsWith("/") ? root : `${root}/`;
}

/**
 * The Linux path of the Windows path `windows` (`C:\Users\Jörg Müller\AppData\Roaming`),
 * as `wslpath -u` gives it: the drive's letter in lower case under `mountRoot`, "\" as "/",
 * every other character kept. `undefined` for what has no drive letter (a UNC path, a
 * relative one): WSL mounts only drives.
 */
export function linuxPathOf(windows: string, mountRoot: string): string | undefined {
  const [, letter, path = ""] = /^([A-Za-z]):(?:[\\/](.*))?$/s.exec(windows) ?? [];
  if (letter === undefined) return undefined;
  const rest = path
    .split(/[\\/]+/)
    .filter((part) => part !== "")
    .join("/");
  return `${mountRoot}${letter.toLowerCase()}${rest === "" ? "" : `/${rest}`}`;
}
