import { fstatSync, readSync, writeSync } from "node:fs";
import os from "node:os";
import process from "node:process";
import { isSingleExecutable, TARGET, VERSION, versionLine } from "./build-info.ts";
import type { TextSink } from "./cli/io.ts";
import { run } from "./cli/run.ts";
import { systemErrorMessage } from "./errors.ts";
import { openStore } from "./stores/open-store.ts";
import { forwardingSignals } from "./system/signal-forwarding.ts";
import { hasAbandonedCalls } from "./stores/keychain-calls.ts";
import { runCleanups } from "./system/exit-cleanups.ts";

// Ctrl-C, SIGTERM and a closed terminal first undo what must not outlive the process (the
// pass store's lock), then end it by the same signal, as if there were no handler.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    runCleanups();
    // While exec's command runs, it gets the signal (run-command.ts) and exec ends with its code.
    if (forwardingSignals()) return;
    process.kill(process.pid, signal);
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The standard streams are used through their file descriptors, synchronously: creating
 * process.stdout or process.stdin loads net, stream and tty, ~2.5 ms of every start. A
 * stream is made only when a descriptor cannot be used that way (a non-blocking pipe that
 * is full or empty, or any other error), and then carries everything after that point.
 * A Windows console gets the stream from the start: only the stream speaks its UTF-16.
 */
const streamsInUse = { count: 0 };

function useStream<Stream>(create: () => Stream): Stream {
  streamsInUse.count++;
  return create();
}

function isWindowsConsole(fd: number): boolean {
  try {
    return process.platform === "win32" && fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
}

/**
 * The reader of stdout (or stderr) has gone (`get HOST | head -c0`, `doctor | head -1`):
 * stop quietly with the shell's code for a broken pipe, as a program killed by SIGPIPE
 * would (Node ignores SIGPIPE, and its stream would print a stack trace).
 */
function exitOnBrokenPipe(error: unknown): void {
  if ((error as NodeJS.ErrnoException | undefined)?.code === "EPIPE") process.exit(141);
}

/**
 * A write that can never succeed (a full disk or `/dev/full`, a read-only file, EIO): one
 * line on stderr, when that is not the stream that failed, and exit 1, instead of the
 * runtime's stack trace. "Try again" (a full non-blocking pipe) is not such a failure: the
 * stream takes the rest and waits for the reader.
 */
function exitOnFailedWrite(fd: number, error: unknown): void {
  exitOnBrokenPipe(error);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EAGAIN" || code === "EWOULDBLOCK") return;
  if (fd !== 2) {
    const why = systemErrorMessage(error) ?? `could not write: ${String(code ?? error)}`;
    try {
      writeSync(2, `${why.replace("could not write", "could not write to standard output")}\n`);
    } catch {
      // stderr is gone too: the exit code is all that is left.
    }
  }
  process.exit(1);
}

function output(fd: number, stream: () => NodeJS.WriteStream): TextSink {
  let fallback: NodeJS.WriteStream | undefined;
  return {
    write(text) {
      const bytes = Buffer.from(text, "utf8");
      let written = 0;
      if (fallback === undefined && !isWindowsConsole(fd)) {
        try {
          while (written < bytes.byteLength) written += writeSync(fd, bytes, written);
          return;
        } catch (error) {
          exitOnFailedWrite(fd, error);
          // "Try again": the rest goes through the stream below.
        }
      }
      fallback ??= useStream(() => {
        const created = stream();
        created.on("error", (error) => exitOnFailedWrite(fd, error));
        return created;
      });
      fallback.write(bytes.subarray(written));
    },
  };
}

async function* input(): AsyncGenerator<Uint8Array> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  while (!isWindowsConsole(0)) {
    let length;
    try {
      length = readSync(0, buffer);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EOF") return;
      break;
    }
    if (length === 0) return;
    yield new Uint8Array(buffer.subarray(0, length));
  }
  yield* useStream(() => process.stdin);
}

void run(
  process.argv.slice(2),
  {
    stdin: { [Symbol.asyncIterator]: input },
    get stdinIsTTY() {
      return process.stdin.isTTY;
    },
    stdout: output(1, () => process.stdout),
    stderr: output(2, () => process.stderr),
    env: process.env,
    platform: process.platform,
    arch: process.arch,
    homedir: os.homedir(),
    execPath: process.execPath,
    isSea: isSingleExecutable(),
    processes: { pid: process.pid, isAlive },
  },
  {
    version: versionLine(VERSION, TARGET, process.versions),
    openStore,
    // Loaded only for exec: node:child_process has no place in a get.
    runCommand: async (command, args, env) =>
      (await import("./system/run-command.ts")).runCommand(command, args, env, process),
  },
).then((code) => {
  // With everything written synchronously, leave at once instead of tearing the runtime
  // down (~1 ms); a stream (asynchronous on Windows pipes) is left to flush as the process ends.
  // A keychain call abandoned at its deadline still blocks a thread that process.exit
  // would wait for: end at once instead (the message is already written, synchronously).
  if (hasAbandonedCalls()) process.kill(process.pid, "SIGKILL");
  if (streamsInUse.count === 0) process.exit(code);
  process.exitCode = code;
});
