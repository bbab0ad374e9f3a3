import type { Deadline } from "../../system/deadline.ts";
import { captureCommand } from "../../system/run-command.ts";
import type { WslMachine } from "./wsl-machine.ts";

/** How a Windows program's run ended. */
export type WindowsRun =
  | {
      readonly kind: "exited";
      readonly code: number;
      readonly stdout: string;
      readonly stderr: string;
    }
  /** Still running at the deadline, and ended then (or not started, no time being left). */
  | { readonly kind: "timed out" }
  /** It wrote more than `limit` on `stream`, and was ended then. */
  | { readonly kind: "too much output"; readonly stream: string; readonly limit: string }
  /** It could not be started; `reason` says why (not-found: interop could not find it). */
  | { readonly kind: "not started"; readonly reason: string };

/**
 * Runs the Windows program `program` (a path on this machine, or a name the launcher knows)
 * through WSL interop, or as `launcher program args` under the stand-in, `input` on its
 * stdin, until it exits or `deadline` passes, whichever is first: a program still running
 * then is killed, so a hung .exe never outlives the call (captureCommand).
 */
export async function runWindowsProgram(
  machine: WslMachine,
  program: string,
  args: readonly string[],
  options: {
    readonly deadline: Deadline;
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly input?: string;
    /** A Windows directory, as a path here: cmd.exe warns when started in a Linux one. */
    readonly cwd?: string;
    readonly stdoutEncoding?: "utf8" | "utf16le";
  },
): Promise<WindowsRun> {
  const [command = program, ...before] = machine.launcher;
  const words = machine.launcher.length > 0 ? [...before, program, ...args] : [...args];
  const outcome = await captureCommand(command, words, options);
  switch (outcome.kind) {
    case "timed-out":
      return { kind: "timed out" };
    case "too-much-output":
      return { kind: "too much output", stream: outcome.stream, limit: outcome.limit };
    case "exited":
    case "signalled":
      // A signal not ours (a crash) is a failed run: its stderr says what it could.
      return {
        kind: "exited",
        code: outcome.code ?? 1,
        stdout: outcome.stdout,
        stderr: outcome.stderr,
      };
    case "not-started":
      return { kind: "not started", reason: outcome.code };
    case "not-found":
    case "not-executable":
    case "too-big":
      return { kind: "not started", reason: outcome.kind };
  }
}
