import { spawn } from "node:child_process";
import type { Deadline } from "../../system/deadline.ts";
import type { WslMachine } from "./wsl-machine.ts";

/** How a Windows program's run ended. */
export type WindowsRun =
  | {
      readonly kind: "exited";
      readonly code: number;
      readonly stdout: Buffer;
      readonly stderr: string;
    }
  /** Still running at the deadline, and ended then (or not started, no time being left). */
  | { readonly kind: "timed out" }
  /** It could not be started; `code` is the error's (ENOENT: interop could not find it). */
  | { readonly kind: "not started"; readonly code: string };

/**
 * Runs the Windows program `program` (a path on this machine, or a name WSL finds on PATH)
 * through WSL interop, `input` on its stdin, until it exits or `deadline` passes,
 * whichever is first: a program still running then is killed, so a hung .exe never outlives
 * the call. Its stdout comes back as bytes; its stderr as text, for messages.
 */
export function runWindowsProgram(
  machine: WslMachine,
  program: string,
  args: readonly string[],
  options: {
    readonly deadline: Deadline;
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly input?: Uint8Array;
    /** A Windows directory, as a path here: cmd.exe warns when started in a Linux one. */
    readonly cwd?: string;
  },
): Promise<WindowsRun> {
  const leftMs = Math.floor(options.deadline.remainingMs());
  if (leftMs <= 0) return Promise.resolve({ kind: "timed out" });
  const [command = program, ...before] = machine.launcher;
  const words = machine.launcher.length > 0 ? [...before, program, ...args] : [...args];
  return new Promise((resolve) => {
    const child = spawn(command, words, {
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    const stdout: Buffer[] = [];
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, leftMs);
    child.stdout.on("data", (data: Buffer) => stdout.push(data));
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString("utf8")));
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ kind: "not started", code: error.code ?? "unknown" });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(
        timedOut
          ? { kind: "timed out" }
          : { kind: "exited", code: code ?? 1, stdout: Buffer.concat(stdout), stderr },
      );
    });
    // A program that exits without reading its stdin closes the pipe: not our failure.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? new Uint8Array());
  });
}
