import { existsSync } from "node:fs";
import path from "node:path";
import { CliError, ExitCode } from "../../errors.ts";
import type { Situation } from "../../fixes.ts";
import { oneLine, quote } from "../../system/quote.ts";
import { HELPER_NAME } from "../../terraform/locations.ts";
import type { Deadline } from "../../system/deadline.ts";
import { linuxPathOf } from "./windows-paths.ts";
import { runWindowsProgram, type WindowsRun } from "./windows-program.ts";
import { underRoot, wslMachine, type WslMachine } from "./wsl-machine.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The Windows helper as the WSL side reaches it. */
export interface WindowsHelper {
  readonly machine: WslMachine;
  /** Its path on Windows, for messages: `C:\Users\...\terraform-credentials-keychain.exe`. */
  readonly windowsPath: string;
  /** The same file as a path here, which interop runs. */
  readonly path: string;
  /**
   * Runs it with `args` (its options, a verb, a host), `input` on its stdin, until it exits
   * or the deadline, when it is ended. Throws a `CliError` when it cannot be started.
   */
  run(args: readonly string[], input?: string): Promise<Extract<WindowsRun, { kind: "exited" }>>;
}

/**
 * The Windows helper that `install` put in `%APPDATA%\terraform.d\plugins` on the Windows
 * side, found as WSL finds things: the WSL interop entry says `enabled`, cmd.exe gives
 * %APPDATA% (not `wslvar`, which is not on every distribution), and the path is mapped as
 * `wslpath -u` maps it. Every step is bounded by `deadline`. Throws a one-line `CliError`
 * that says what to do when this is not WSL, interop is off, or the helper is missing.
 */
export async function findWindowsHelper(env: Env, deadline: Deadline): Promise<WindowsHelper> {
  const machine = wslMachine(env);
  if (machine.interop === undefined) {
    throw new CliError(
      "--backend wincred works only in WSL (Linux on Windows), and this is not WSL: /proc/sys/fs/binfmt_misc/WSLInterop is missing; use --backend keychain or pass here",
    );
  }
  if (machine.interop === "disabled") {
    throw windowsSideError(
      "WSL interop is switched off, so the Windows helper cannot run from here",
      "wsl-interop-off",
    );
  }
  const drive = underRoot(machine, `${machine.mountRoot}c`);
  const cwd = existsSync(drive) ? drive : undefined;
  const windowsRun: WindowsRunner = async (program, args, more = {}) => {
    const run = await runWindowsProgram(machine, program, args, {
      deadline,
      env,
      ...(cwd === undefined ? {} : { cwd }),
      ...more,
    });
    if (run.kind === "timed out") {
      throw windowsSideError(
        `the Windows side did not answer within ${deadline.seconds} s (${path.win32.basename(program)} was ended)`,
        "windows-side-hung",
      );
    }
    if (run.kind === "too much output") {
      throw new CliError(
        `${path.win32.basename(program)} wrote more than ${run.limit} to ${run.stream}, more than any answer holds, and was ended`,
      );
    }
    if (run.kind === "not started") {
      throw windowsSideError(
        `WSL could not start ${program} (${run.reason})`,
        "wsl-interop-failing",
      );
    }
    return run;
  };
  const appData = await windowsAppData(cmdExe(machine, env), windowsRun);
  const windowsPath = path.win32.join(appData, "terraform.d", "plugins", `${HELPER_NAME}.exe`);
  const linuxPath = linuxPathOf(windowsPath, machine.mountRoot);
  const helperPath = linuxPath === undefined ? undefined : underRoot(machine, linuxPath);
  if (helperPath === undefined || !existsSync(helperPath)) {
    throw windowsSideError(
      `the Windows helper is not installed: ${windowsPath} is missing`,
      "windows-helper-missing",
    );
  }
  return {
    machine,
    windowsPath,
    path: helperPath,
    run: (args, input) => windowsRun(helperPath, args, input === undefined ? {} : { input }),
  };
}

/** Runs a Windows program within the deadline: its exit, or a one-line `CliError`. */
type WindowsRunner = (
  program: string,
  args: readonly string[],
  more?: { readonly input?: string; readonly stdoutEncoding?: "utf16le" },
) => Promise<Extract<WindowsRun, { kind: "exited" }>>;

/** Why the Windows side cannot be reached, with its fix as data (fixes.ts). */
function windowsSideError(problem: string, situation: Situation): CliError {
  return new CliError(problem, ExitCode.Failure, { fix: { situation } });
}

/**
 * %APPDATA% of the Windows user, from cmd.exe. `/u` makes cmd's own commands write UTF-16LE
 * to a pipe: otherwise echo writes in the console's code page, which turns a non-ASCII
 * user name into other characters. `/d` skips AutoRun commands, which could print too.
 */
async function windowsAppData(cmd: string, windowsRun: WindowsRunner): Promise<string> {
  const run = await windowsRun(cmd, ["/d", "/u", "/c", "echo %APPDATA%"], {
    stdoutEncoding: "utf16le",
  });
  const appData = run.stdout.replace(/^\uFEFF/, "").trim();
  if (run.code !== 0 || appData === "" || appData === "%APPDATA%") {
    throw windowsSideError(
      `cmd.exe did not tell %APPDATA% (exit code ${run.code}${run.stderr.trim() === "" ? "" : `: ${oneLine(run.stderr, 200)}`})`,
      "wsl-interop-failing",
    );
  }
  // Text from the Windows side: a control character (an escape sequence, a line break) is in
  // no Windows path, and must not reach the terminal in the messages that name the helper.
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(appData)) {
    throw windowsSideError(
      `cmd.exe answered %APPDATA% with ${quote(appData)}, which is not a Windows path`,
      "wsl-interop-failing",
    );
  }
  return appData;
}

/**
 * cmd.exe: by name for a launcher (Wine knows its own), else from PATH (WSL appends the
 * Windows PATH unless wsl.conf says not to), else where Windows keeps it on drive C.
 */
function cmdExe(machine: WslMachine, env: Env): string {
  if (machine.launcher.length > 0) return "cmd.exe";
  const onPath = (env.PATH ?? "")
    .split(":")
    .filter((dir) => dir.startsWith("/"))
    .map((dir) => path.join(dir, "cmd.exe"))
    .find((file) => existsSync(file));
  return onPath ?? underRoot(machine, `${machine.mountRoot}c/Windows/System32/cmd.exe`);
}
