import { fstatSync, read, readSync, writeSync } from "node:fs";
import process from "node:process";
import type { TextSink } from "./io.ts";
import { isTerminal } from "./terminals.ts";
import { writeFailure } from "./write-failures.ts";

/**
 * The standard streams are used through their file descriptors, synchronously: creating
 * process.stdout or process.stdin loads net, stream and tty, ~2.5 ms of every start. A
 * stream is made only when a descriptor cannot be used that way (a non-blocking pipe that
 * is full or empty, or any other error), and then carries everything after that point.
 * A Windows console gets the stream from the start: only the stream speaks its UTF-16.
 * Stdin is read here everywhere, and stdout and stderr are written here but for a pipe on
 * Linux in the built executable, which process-output.ts writes through Bun's FileSink.
 */
const streamsInUse = { count: 0 };

/** Whether a stream was made: then the process must be left to flush it as it ends. */
export function streamsWereUsed(): boolean {
  return streamsInUse.count > 0;
}

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
 * Ends the process as writeFailure says for a write that failed; returns only for "try
 * again" (a full non-blocking pipe), whose rest the stream takes and writes when it can.
 */
function exitOnFailedWrite(fd: number, error: unknown): void {
  const failure = writeFailure(fd, error);
  if (failure === undefined) return;
  if (failure.line !== undefined) {
    try {
      writeSync(2, failure.line);
    } catch {
      // stderr is gone too: the exit code is all that is left.
    }
  }
  process.exit(failure.exitCode);
}

export function standardOutput(fd: number, stream: () => NodeJS.WriteStream): TextSink {
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

/**
 * Standard input, read asynchronously so that a read that waits (a terminal, a pipe nobody
 * closes) still lets signals and the deadline end the process. On Linux and macOS each read
 * is an fs.read of descriptor 0 on the runtime's thread pool: about 1 ms more per store than
 * the blocking readSync loop it replaces, and 1 ms less than Bun.stdin's web stream
 * (paired runs, docs/speed.md). From source, Node's process.stdin does the same.
 */
export async function* standardInput(): AsyncGenerator<Uint8Array> {
  const bun = (globalThis as { Bun?: unknown }).Bun;
  if (process.platform === "win32") {
    yield* windowsInput();
    return;
  }
  if (await isTerminal(0)) {
    yield await terminalInput();
    return;
  }
  if (bun === undefined) {
    yield* useStream(() => process.stdin);
    return;
  }
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    const length = await new Promise<number | "try again">((resolve, reject) => {
      read(0, buffer, 0, buffer.byteLength, null, (error, count) => {
        // A non-blocking descriptor with nothing in it yet (a parent shared its own): the
        // stream, which waits for it to be readable, takes the rest.
        if (error?.code === "EAGAIN" || error?.code === "EWOULDBLOCK") resolve("try again");
        else if (error) reject(error);
        else resolve(count);
      });
    });
    if (length === "try again") {
      yield* useStream(() => process.stdin);
      return;
    }
    if (length === 0) return;
    yield new Uint8Array(buffer.subarray(0, length));
  }
}

const CTRL_C = 0x03;
const CTRL_D = 0x04;
const BACKSPACE = [0x08, 0x7f];

/**
 * A credentials object typed or pasted at a terminal, without echo: the terminal goes into
 * raw mode, so the token never appears on screen or in the scrollback. Enter is a line
 * break, Backspace removes the last character, Ctrl-D ends the input, and Ctrl-C ends the
 * helper as it would in cooked mode.
 */
async function terminalInput(): Promise<Uint8Array> {
  const stdin = useStream(() => process.stdin);
  const bytes: number[] = [];
  stdin.setRawMode(true);
  // Only now, with echo off: what a person types after reading this is never shown. (Asked
  // before, a quick paste could reach the terminal while it still echoed.)
  writeSync(
    2,
    'Type or paste the credentials object, such as {"token":"..."}, then press Ctrl-D (nothing is shown):\n',
  );
  try {
    for await (const chunk of stdin as AsyncIterable<Buffer>) {
      for (const byte of chunk) {
        if (byte === CTRL_C) {
          stdin.setRawMode(false);
          process.kill(process.pid, "SIGINT");
          return new Uint8Array();
        }
        if (byte === CTRL_D) return Uint8Array.from(bytes);
        if (BACKSPACE.includes(byte)) {
          // Back over a whole UTF-8 character: its continuation bytes, then its lead byte.
          while (bytes.length > 0 && ((bytes.at(-1) ?? 0) & 0xc0) === 0x80) bytes.pop();
          bytes.pop();
        } else bytes.push(byte === 0x0d ? 0x0a : byte);
      }
    }
    return Uint8Array.from(bytes);
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    writeSync(2, "\n");
    bytes.fill(0);
  }
}

/** How each blocking read of stdin on Windows is made: at once, unless a guard is set. */
const windowsReads = { guard: <T>(read: () => T): T => read() };

/**
 * Makes every later blocking read of stdin on Windows through `guard`, which keeps the
 * call's deadline on another thread (a timer of this one cannot fire while a read blocks).
 */
export function guardWindowsReads(guard: <T>(read: () => T) => T): void {
  windowsReads.guard = guard;
}

/**
 * Windows: Bun's asynchronous stdin (Bun.stdin and process.stdin alike) fails on a pipe
 * with EBADF (seen under Wine), so a pipe is read with blocking reads, as before; there,
 * Ctrl-C waits for the read, and the deadline is kept by the guard that guardWindowsReads
 * sets. A console gets the stream: only it speaks the console's UTF-16.
 */
async function* windowsInput(): AsyncGenerator<Uint8Array> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  while (!isWindowsConsole(0)) {
    let length;
    try {
      length = windowsReads.guard(() => readSync(0, buffer));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EOF") return;
      // The guard's refusal past the deadline, not a failed read that the stream may get past.
      if (code === undefined) throw error;
      break;
    }
    if (length === 0) return;
    yield new Uint8Array(buffer.subarray(0, length));
  }
  yield* useStream(() => process.stdin);
}
