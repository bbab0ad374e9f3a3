import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { HELPER_NAME } from "../terraform/locations.ts";
import type { Machine } from "../system/io.ts";

/**
 * How `install` puts the helper at hand, so that people run `terraform-credentials-keychain
 * doctor` by name (Terraform itself finds it in its plugin directory, never on PATH):
 * - `link`: a symlink in a user directory already on PATH (~/.local/bin, as pipx and uv do,
 *   else ~/bin) to the installed file, made (`added`) or already there (`unchanged`);
 * - `taken`: that name is already something else there, which is left alone;
 * - `on-path`: the installed file's own directory is on PATH (Windows);
 * - `none`: no such directory is on PATH; `hint` says in one line how to get one.
 */
export type CommandLink =
  | { readonly kind: "link"; readonly path: string; readonly change: "added" | "unchanged" }
  | { readonly kind: "taken"; readonly path: string }
  | { readonly kind: "on-path" }
  | { readonly kind: "none"; readonly hint: string };

/**
 * What `install` would do to put `target` (the installed helper) on PATH.
 *
 * Windows gets no link: a symlink needs developer mode or an elevated prompt there, and a
 * `.cmd` shim would run through cmd.exe, which re-parses the arguments people pass to
 * `exec`. Nor is the user PATH written behind their back (it lives in the registry and only
 * new terminals see it): the hint gives the one PowerShell line that adds Terraform's plugin
 * directory, which holds the real executable, to the user PATH.
 */
export function planCommandLink(
  machine: Machine,
  target: string,
  installAgain: string,
): CommandLink {
  const onPath = pathDirs(machine);
  if (machine.platform === "win32") {
    const dir = path.win32.dirname(target);
    if (onPath.some((entry) => entry.toLowerCase() === dir.toLowerCase()))
      return { kind: "on-path" };
    const ps = (text: string) => `'${text.replace(/'/g, "''")}'`;
    return {
      kind: "none",
      hint: `to run it by name, add its folder to your user PATH (PowerShell): [Environment]::SetEnvironmentVariable('Path', [Environment]::GetEnvironmentVariable('Path', 'User') + ${ps(`;${dir}`)}, 'User'); then open a new terminal`,
    };
  }
  const dir = userBinDirs(machine).find((candidate) => onPath.includes(candidate));
  if (dir === undefined) {
    return {
      kind: "none",
      hint: `to run it by name, put ~/.local/bin on PATH (in your shell's profile: export PATH="$HOME/.local/bin:$PATH"), open a new shell and run "${installAgain}": it links the helper there`,
    };
  }
  const link = path.posix.join(dir, HELPER_NAME);
  const now = linkState(link, target);
  if (now === "ours") return { kind: "link", path: link, change: "unchanged" };
  // A dangling symlink (to a copy since deleted) is replaced; anything else is someone's.
  if (now === "absent" || now === "dangling") return { kind: "link", path: link, change: "added" };
  return { kind: "taken", path: link };
}

/**
 * The links to `target` that `install` may have made, for `uninstall` to remove: in every
 * user directory it links into, whether or not it is on PATH now. Only a symlink that leads
 * to `target` counts.
 */
export function linksTo(machine: Machine, target: string): string[] {
  if (machine.platform === "win32") return [];
  return userBinDirs(machine)
    .map((dir) => path.posix.join(dir, HELPER_NAME))
    .filter((link) => linkState(link, target) === "ours");
}

/**
 * How to name the installed helper in a command a person runs: by name when that name on
 * PATH is this file (a link to it, or its directory), else by its full path.
 */
export function helperCommand(machine: Machine, target: string): string {
  const names = machine.platform === "win32" ? [`${HELPER_NAME}.exe`, HELPER_NAME] : [HELPER_NAME];
  const real = realPath(target);
  if (real === undefined) return target;
  for (const dir of pathDirs(machine)) {
    for (const name of names) {
      const found = (machine.platform === "win32" ? path.win32 : path.posix).join(dir, name);
      if (!existsSync(found)) continue;
      // The first one on PATH is what the shell runs.
      return realPath(found) === real ? HELPER_NAME : target;
    }
  }
  return target;
}

/** ~/.local/bin, then ~/bin. */
function userBinDirs(machine: Machine): string[] {
  return [
    path.posix.join(machine.homedir, ".local", "bin"),
    path.posix.join(machine.homedir, "bin"),
  ];
}

/** PATH's directories, absolute ones only (a relative entry depends on where one stands). */
function pathDirs(machine: Machine): string[] {
  const windows = machine.platform === "win32";
  // Windows spells it Path; its environment is case-insensitive, a copy of it is not.
  const key = Object.keys(machine.env).find((name) =>
    windows ? name.toUpperCase() === "PATH" : name === "PATH",
  );
  const value = key === undefined ? undefined : machine.env[key];
  const flavour = windows ? path.win32 : path.posix;
  return (value ?? "")
    .split(windows ? ";" : ":")
    .filter((entry) => entry !== "" && flavour.isAbsolute(entry))
    .map((entry) => flavour.resolve(entry));
}

function linkState(link: string, target: string): "absent" | "ours" | "dangling" | "other" {
  let stats;
  try {
    stats = lstatSync(link);
  } catch {
    return "absent";
  }
  if (!stats.isSymbolicLink()) return "other";
  if (path.posix.resolve(path.posix.dirname(link), readlinkSync(link)) === target) return "ours";
  return existsSync(link) ? "other" : "dangling";
}

function realPath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}
