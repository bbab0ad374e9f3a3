import process from "node:process";
import type { TextSink } from "./io.ts";
import { descriptorStats } from "./terminals.ts";
import { writeFailure } from "./write-failures.ts";
import type * as StandardStreams from "./standard-streams.ts";

/**
 * The process's stdout and stderr. Terraform gives the helper pipes (Go's os.Pipe): in the
 * built executable on Linux, a pipe is written through Bun's FileSink on a description of our
 * own, opened through /proc/self/fd. The sink makes the description it writes non-blocking,
 * and on the descriptor itself that would be the description every other writer of the pipe
 * shares (a CI job's log, `2>&1 | tee`), which would then fail with EAGAIN. And node:fs,
 * which the descriptor writes of standard-streams.ts need, costs every call ~0.7 ms to load
 * (docs/speed.md). Everything else (a file, a terminal, a socket, Windows, macOS, Node from
 * source) is written through the descriptor by standard-streams.ts. Writes keep their order,
 * check their byte counts, and the process ends once they have left (`outputWritten`).
 */

type Writer = (text: string) => Promise<void>;

const encoder = new TextEncoder();
const writers = new Map<number, Promise<Writer>>();
let writes: Promise<void> = Promise.resolve();

let standardStreams: typeof StandardStreams | undefined;

/** The descriptor-based streams (node:fs), loaded when used (stdin's reads load them too). */
export async function loadStandardStreams(): Promise<typeof StandardStreams> {
  standardStreams ??= await import("./standard-streams.ts");
  return standardStreams;
}

/** Whether a runtime stream was made: then the process must be left to flush it as it ends. */
export function streamsWereUsed(): boolean {
  return standardStreams?.streamsWereUsed() ?? false;
}

/** Descriptor `fd` (1 or 2); `stream` is its runtime stream, for what a descriptor cannot take. */
export function processOutput(fd: 1 | 2, stream: () => NodeJS.WriteStream): TextSink {
  // stdout's way is found now (an fstat on the thread pool, an open), while the call waits
  // on others: a get writes there last, and this saves it ~0.4 ms (docs/speed.md).
  if (fd === 1) writerOf(fd, stream).catch(() => undefined);
  return {
    write(text) {
      writes = writes.then(async () => {
        try {
          await (
            await writerOf(fd, stream)
          )(text);
        } catch (error) {
          await fail(fd, error);
        }
      });
    },
  };
}

/** Resolves once everything written so far has left (or its failure has ended the process). */
export function outputWritten(): Promise<void> {
  return writes;
}

function writerOf(fd: 1 | 2, stream: () => NodeJS.WriteStream): Promise<Writer> {
  let writer = writers.get(fd);
  if (writer === undefined) {
    writer = pipeSinkOf(fd, stream).then((sink) => sink ?? descriptorWriter(fd, stream));
    writers.set(fd, writer);
  }
  return writer;
}

async function descriptorWriter(fd: 1 | 2, stream: () => NodeJS.WriteStream): Promise<Writer> {
  const output = (await loadStandardStreams()).standardOutput(fd, stream);
  return async (text) => output.write(text);
}

interface FileSink {
  write(bytes: Uint8Array): number | Promise<number>;
  flush(): number | Promise<number>;
}

interface BunFiles {
  file(path: string): { writer(): FileSink };
}

/** A FileSink writer for `fd` when it is a pipe on Linux in Bun, else undefined. */
async function pipeSinkOf(
  fd: 1 | 2,
  stream: () => NodeJS.WriteStream,
): Promise<Writer | undefined> {
  const bun = (globalThis as { Bun?: BunFiles }).Bun;
  if (bun === undefined || process.platform !== "linux") return undefined;
  try {
    if (!(await descriptorStats(fd)).isFIFO()) return undefined;
  } catch {
    return undefined;
  }
  let sink: FileSink;
  try {
    sink = bun.file(`/proc/self/fd/${fd}`).writer();
  } catch {
    return undefined;
  }
  let wrote = false;
  return async (text) => {
    const bytes = encoder.encode(text);
    try {
      const taken = await sink.write(bytes);
      // What the sink took: every byte, or the write failed.
      if (taken !== bytes.byteLength) {
        throw Object.assign(new Error(`wrote ${taken} of ${bytes.byteLength} bytes`), {
          code: "EIO",
          syscall: "write",
        });
      }
      await sink.flush();
      wrote = true;
    } catch (error) {
      // No /proc, or a pipe we may not open again (another user's): the descriptor, then.
      if (!wrote && (error as { code?: unknown }).code !== "EPIPE") {
        const writer = descriptorWriter(fd, stream);
        writers.set(fd, writer);
        await (
          await writer
        )(text);
        return;
      }
      await fail(fd, error);
    }
  };
}

/** Ends the process as writeFailure says (the sink waits out a full pipe: no "try again"). */
async function fail(fd: 1 | 2, error: unknown): Promise<never> {
  const failure = writeFailure(fd, error) ?? { exitCode: 1 };
  if (failure.line !== undefined) {
    try {
      await (
        await writerOf(2, () => process.stderr)
      )(failure.line);
    } catch {
      // stderr is gone too: the exit code is all that is left.
    }
  }
  process.exit(failure.exitCode);
}
