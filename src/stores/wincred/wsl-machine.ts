import { readFileSync } from "node:fs";
import path from "node:path";
import { automountRoot } from "./windows-paths.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A test stand-in: the directory the helper looks for WSL under instead of "/"
 * (`DIR/proc/sys/fs/binfmt_misc/WSLInterop`, `DIR/etc/wsl.conf`, `DIR/mnt/c`).
 */
const WSL_ROOT_VARIABLE = "TF_CREDENTIALS_KEYCHAIN_WSL_ROOT";

/**
 * A test stand-in: the command (words split at spaces) that runs each Windows program, as
 * `COMMAND PROGRAM ARGS` (`wine64`). Real WSL needs none: the kernel hands a Windows
 * program to WSL's interop.
 */
const WSL_LAUNCHER_VARIABLE = "TF_CREDENTIALS_KEYCHAIN_WSL_LAUNCHER";

/** Where interop is registered (WSL 2 registers it late, under the second name, when systemd runs). */
const INTEROP_FILES = [
  "/proc/sys/fs/binfmt_misc/WSLInterop",
  "/proc/sys/fs/binfmt_misc/WSLInterop-late",
] as const;

/** What the helper knows of the WSL it runs in, read from files only. */
export interface WslMachine {
  /** "/" on WSL; the stand-in's directory under test. */
  readonly root: string;
  /**
   * Whether WSL runs Windows programs: "enabled" or "disabled" as its binfmt_misc entry says,
   * `undefined` where there is no such entry (not WSL, or Docker on WSL 2, whose
   * /proc/version says "microsoft" too).
   */
  readonly interop: "enabled" | "disabled" | undefined;
  /** Where the Windows drives are mounted, as seen from `root`, ending with "/" ("/mnt/"). */
  readonly mountRoot: string;
  /** The words that run a Windows program before its own, none on WSL. */
  readonly launcher: readonly string[];
}

/** The WSL this helper runs in, under `TF_CREDENTIALS_KEYCHAIN_WSL_ROOT` when it is set. */
export function wslMachine(env: Env): WslMachine {
  const root = env[WSL_ROOT_VARIABLE] || "/";
  const states = INTEROP_FILES.map((file) => readIfThere(path.join(root, file)));
  // Either entry enabled will do: systemd's binfmt service may have registered the late one.
  const interop = states.some((text) => firstLine(text) === "enabled")
    ? "enabled"
    : states.some((text) => text !== undefined)
      ? "disabled"
      : undefined;
  return {
    root,
    interop,
    mountRoot: automountRoot(readIfThere(path.join(root, "etc/wsl.conf"))),
    launcher: (env[WSL_LAUNCHER_VARIABLE] ?? "").split(" ").filter((word) => word !== ""),
  };
}

/** `linuxPath` (a path WSL gives, under "/") as this machine reaches it: under `root`. */
export function underRoot(machine: WslMachine, linuxPath: string): string {
  return path.join(machine.root, linuxPath);
}

function firstLine(text: string | undefined): string | undefined {
  return text?.split("\n", 1)[0]?.trim();
}

function readIfThere(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
