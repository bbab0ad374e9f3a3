import { spawn } from "node:child_process";
import process from "node:process";
import type { Deadline } from "./deadline.ts";
import { countRunningCommand } from "./signal-forwarding.ts";

/** How a command ended: its exit code, or the signal that killed it. */
export type CommandOutcome =
  | { readonly kind: "exited"; readonly code: number }
  | { readonly kind: "signalled"; readonly signal: NodeJS.Signals }
  | { readonly kind: "not-found" }
  | { readonly kind: "not-executable" }
  /** The arguments and environment together are more than the system takes (E2BIG). */
  | { readonly kind: "too-big" }
  /** It could not be started for another reason, named by its error code. */
  | { readonly kind: "not-started"; readonly code: string };

/** Where the signals to forward come from: the running process, passed in by main.ts. */
interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

// SIGHUP too: endOnSignals leaves all three to the command while it runs. The others would end
// exec by their default action and leave the command running with the tokens, unattended;
// Windows has none of them.
const FORWARDED: readonly NodeJS.Signals[] = [
  "SIGINT",
  "SIGTERM",
  "SIGHUP",
  ...(process.platform === "win32" ? [] : (["SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM"] as const)),
];

function startFailure(
  error: unknown,
): Exclude<CommandOutcome, { kind: "exited" } | { kind: "signalled" }> {
  const code = (error as NodeJS.ErrnoException).code ?? "unknown";
  if (code === "ENOENT") return { kind: "not-found" };
  if (code === "EACCES") return { kind: "not-executable" };
  if (code === "E2BIG") return { kind: "too-big" };
  return { kind: "not-started", code };
}

/**
 * Runs `command` with our stdin, stdout and stderr and `env`, forwarding SIGINT, SIGTERM and SIGHUP
 * to it while it runs (we stay alive to report how it ended), and resolves when it ends.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  signals: SignalSource,
): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(command, args, { env, stdio: "inherit" });
    } catch (error) {
      // Refused before it started (E2BIG from posix_spawn): nothing runs, nothing to forward.
      resolve(startFailure(error));
      return;
    }
    countRunningCommand(1);
    const forwarders = FORWARDED.map((signal) => {
      const forward = () => child.kill(signal);
      signals.on(signal, forward);
      return () => signals.off(signal, forward);
    });
    let finished = false;
    const finish = (outcome: CommandOutcome) => {
      if (finished) return;
      finished = true;
      countRunningCommand(-1);
      for (const stop of forwarders) stop();
      resolve(outcome);
    };
    child.on("error", (error: NodeJS.ErrnoException) => finish(startFailure(error)));
    child.on("exit", (code, signal) => {
      finish(signal === null ? { kind: "exited", code: code ?? 1 } : { kind: "signalled", signal });
    });
  });
}

/** How a command run for its output ended, with what it wrote. */
type CapturedOutcome =
  | {
      readonly kind: "exited" | "signalled" | "timed-out";
      /** The exit code; null when a signal ended it (ours at the deadline: "timed-out"). */
      readonly code: number | null;
      readonly stdout: string;
      /** Its first MAX_STDERR_BYTES or so: more than any tool says about a failure. */
      readonly stderr: string;
    }
  | Exclude<CommandOutcome, { kind: "exited" } | { kind: "signalled" }>;

/** What `captureCommand` needs besides the command. */
interface CaptureOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What the command reads on stdin, which is always a pipe, ended after it. */
  readonly input?: string;
  /** When the command is killed if it still runs; none is started once it has passed. */
  readonly deadline: Deadline;
  /** Its working directory; unset: ours. */
  readonly cwd?: string;
  /** How its stdout is decoded: UTF-8 unless given (cmd.exe /u writes UTF-16LE). */
  readonly stdoutEncoding?: "utf8" | "utf16le";
}

// A bound so that a confused child cannot fill memory.
const MAX_STDERR_BYTES = 64 * 1024;
// After the command exits, how long to wait for its pipes to close: a process it left behind
// (an agent started without closing its stderr) must not keep us waiting.
const CLOSE_GRACE_MS = 1000;

/**
 * Runs `command` for its output: stdin a pipe with `options.input` (nothing we run may read
 * the terminal Terraform was started from), stdout and stderr collected. Never rejects: it
 * could not be started, or it ended (by its own exit, a signal, or the deadline: then it is
 * killed with SIGKILL). Not detached: a Ctrl-C in Terraform's terminal reaches it as well.
 * Only the command itself can be killed from here; a child it started that still writes to
 * the pipes gets EPIPE once they are closed.
 */
export function captureCommand(
  command: string,
  args: readonly string[],
  options: CaptureOptions,
): Promise<CapturedOutcome> {
  const { deadline } = options;
  const empty = { stdout: "", stderr: "" };
  if (deadline.remainingMs() <= 0)
    return Promise.resolve({ kind: "timed-out", code: null, ...empty });
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(command, args, {
        env: options.env,
        stdio: ["pipe", "pipe", "pipe"],
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      });
    } catch (error) {
      resolve(startFailure(error));
      return;
    }
    const stdout: Buffer[] = [];
    let stderr = "";
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const finish = (outcome: CapturedOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      resolve(outcome);
    };
    const collected = () => ({
      stdout: Buffer.concat(stdout).toString(options.stdoutEncoding ?? "utf8"),
      stderr,
    });
    const done = () => {
      const code = exited?.code ?? null;
      finish({ kind: code === null ? "signalled" : "exited", code, ...collected() });
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      child.stdout.destroy();
      child.stderr.destroy();
      child.unref();
      finish({ kind: "timed-out", code: null, ...collected() });
    }, Math.ceil(deadline.remainingMs()));
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk;
    });
    // It may exit before reading (pass without a store): the exit code says why, so a
    // broken pipe is no error of its own.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input);
    child.once("error", (error) => {
      finish(startFailure(error));
    });
    child.once("exit", (code, signal) => {
      if (settled) return;
      exited = { code, signal };
      grace = setTimeout(
        () => {
          child.stdout.destroy();
          child.stderr.destroy();
          done();
        },
        Math.min(CLOSE_GRACE_MS, deadline.remainingMs()),
      );
    });
    child.once("close", done);
  });
}
