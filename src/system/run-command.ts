import { spawn } from "node:child_process";
import process from "node:process";
import type { Deadline } from "./deadline.ts";
import { registerCleanup } from "./exit-cleanups.ts";
import { endGroup, groupMembers, OWN_GROUP, termGroup } from "./process-group.ts";
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
      readonly kind: "exited" | "signalled";
      /** The exit code; null when a signal not ours ended it. */
      readonly code: number | null;
      readonly stdout: string;
      readonly stderr: string;
    }
  | {
      /** Still running at the deadline (or none left to start it): its group was ended. */
      readonly kind: "timed-out";
      readonly code: null;
      readonly stdout: string;
      readonly stderr: string;
      /**
       * The names of the programs it started that still ran at the deadline (`gpg`, `git`,
       * `sh`: no arguments; not the command itself), where /proc tells; undefined where not.
       */
      readonly running?: readonly string[];
    }
  | {
      /** It wrote more than OUTPUT_LIMIT on `stream`, and its group was ended then. */
      readonly kind: "too-much-output";
      readonly stream: "stdout" | "stderr";
      /** The limit as a message says it: "4 MiB". */
      readonly limit: string;
    }
  | Exclude<CommandOutcome, { kind: "exited" } | { kind: "signalled" }>;

/** What `captureCommand` needs besides the command. */
interface CaptureOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What the command reads on stdin, which is always a pipe, ended after it. */
  readonly input?: string;
  /** When the command is ended if it still runs; none is started once it has passed. */
  readonly deadline: Deadline;
  /** Its working directory; unset: ours. */
  readonly cwd?: string;
  /** How its stdout is decoded: UTF-8 unless given (cmd.exe /u writes UTF-16LE). */
  readonly stdoutEncoding?: "utf8" | "utf16le";
}

/**
 * What is kept of each of a child's streams: far more than any answer we read (a
 * credentials object is under 1 KiB, `list --json` of 100,000 hosts about 3 MB, a failure
 * a few lines), and little enough that a program that writes without end (a broken `pass`,
 * a Windows program stuck in a loop) cannot fill memory. Past it, the program is ended.
 */
const OUTPUT_LIMIT_BYTES = 4 * 1024 * 1024;
const OUTPUT_LIMIT = "4 MiB";
// After the command exits, how long to wait for its pipes to close: a process it left behind
// (an agent started without closing its stderr) must not keep us waiting.
const CLOSE_GRACE_MS = 1000;

/**
 * Runs `command` for its output: stdin a pipe with `options.input` (nothing we run may read
 * the terminal Terraform was started from), stdout and stderr collected, up to
 * OUTPUT_LIMIT_BYTES each. Never rejects: it could not be started, or it ended (by its own
 * exit or a signal), or it was ended at the deadline or when it wrote too much.
 *
 * It runs in a process group of its own (process-group.ts, not on Windows), and ending it
 * ends the whole group: pass's gpg and git, a git hook and what the hook started, none of
 * them left running with no parent. Ctrl-C in Terraform's terminal does not reach that group,
 * so a signal that ends us ends it too (exit-cleanups.ts). What it leaves running after it
 * exits by itself (gpg-agent, which starts a session of its own) is left alone.
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
        detached: OWN_GROUP,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      });
    } catch (error) {
      resolve(startFailure(error));
      return;
    }
    const { pid } = child;
    const group = OWN_GROUP && pid !== undefined ? pid : undefined;
    const forgetGroup =
      group === undefined ? () => undefined : registerCleanup(() => termGroup(group));
    const output = { stdout: new Collected(), stderr: new Collected() };
    let exited: { code: number | null } | undefined;
    let settled = false;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const expired = deadline.signal();
    const finish = (outcome: CapturedOutcome) => {
      if (settled) return;
      settled = true;
      expired.removeEventListener("abort", atDeadline);
      clearTimeout(grace);
      forgetGroup();
      resolve(outcome);
    };
    const collected = () => ({
      stdout: output.stdout.text(options.stdoutEncoding ?? "utf8"),
      stderr: output.stderr.text("utf8"),
    });
    const done = () => {
      const code = exited?.code ?? null;
      finish({ kind: code === null ? "signalled" : "exited", code, ...collected() });
    };
    /** Ends it and all its group, and stops reading: then `outcome` is the answer. */
    const end = (outcome: () => CapturedOutcome) => {
      if (settled) return;
      const answer = outcome();
      child.stdout.destroy();
      child.stderr.destroy();
      if (group === undefined) {
        child.kill("SIGKILL");
        finish(answer);
        return;
      }
      // The clean-up stays registered until the group has been sent its SIGKILL.
      settled = true;
      expired.removeEventListener("abort", atDeadline);
      clearTimeout(grace);
      void endGroup(group, deadline.sleep, deadline.now).finally(() => {
        forgetGroup();
        resolve(answer);
      });
    };
    const atDeadline = () =>
      end(() => {
        const running = group === undefined ? undefined : groupMembers(group, false);
        return {
          kind: "timed-out",
          code: null,
          ...collected(),
          ...(running === undefined ? {} : { running }),
        };
      });
    expired.addEventListener("abort", atDeadline);
    for (const stream of ["stdout", "stderr"] as const) {
      child[stream].on("data", (chunk: Buffer) => {
        if (!output[stream].add(chunk)) {
          end(() => ({ kind: "too-much-output", stream, limit: OUTPUT_LIMIT }));
        }
      });
    }
    // It may exit before reading (pass without a store): the exit code says why, so a
    // broken pipe is no error of its own.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input);
    child.once("error", (error) => {
      finish(startFailure(error));
    });
    child.once("exit", (code) => {
      if (settled) return;
      exited = { code };
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

/** What a child wrote on one stream, up to OUTPUT_LIMIT_BYTES. */
class Collected {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  /** Keeps `chunk`; false once the stream has gone past the limit (then nothing is kept). */
  add(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.bytes > OUTPUT_LIMIT_BYTES) return false;
    this.chunks.push(chunk);
    return true;
  }

  text(encoding: "utf8" | "utf16le"): string {
    return Buffer.concat(this.chunks).toString(encoding);
  }
}
