import process from "node:process";
import type { TextSink } from "./io.ts";
import { writeFailure } from "./write-failures.ts";

/**
 * Standard output and error of the built executable on Linux and macOS, written through
 * Bun's FileSink on descriptors 1 and 2: the descriptor writes of standard-streams.ts need
 * node:fs, whose loading costs every call ~0.7 ms (docs/speed.md). The sink writes at once
 * what the kernel takes and keeps the rest, in order, for when a slow reader (a full pipe,
 * blocking or not) takes more; the process ends only once all of it has left (`written`).
 * (Bun.write, the other way, repeats bytes on a full non-blocking pipe: Bun 1.4.5.)
 */

interface FileSink {
  write(bytes: Uint8Array): number | Promise<number>;
  flush(): number | Promise<number>;
}

interface BunFiles {
  file(fd: number): { writer(): FileSink };
}

const BunRuntime = (globalThis as { Bun?: BunFiles }).Bun;

/** Whether this runtime writes this way: Bun off Windows (a Windows console wants its stream). */
export function writesWithBun(platform: NodeJS.Platform): boolean {
  return BunRuntime !== undefined && platform !== "win32";
}

const encoder = new TextEncoder();
const sinks = new Map<number, FileSink>();
const waiting: Promise<unknown>[] = [];

/** A sink for descriptor `fd` (1 or 2), when `writesWithBun`. */
export function bunOutput(fd: 1 | 2): TextSink {
  return {
    write(text) {
      const bytes = encoder.encode(text);
      try {
        const sink = sinkOf(fd);
        const taken = sink.write(bytes);
        // A number is what the sink took now: every byte, or the write failed.
        if (typeof taken === "number" && taken !== bytes.byteLength) {
          throw Object.assign(new Error(`wrote ${taken} of ${bytes.byteLength} bytes`), {
            code: "EIO",
            syscall: "write",
          });
        }
        for (const result of [taken, sink.flush()]) {
          if (typeof result !== "number")
            waiting.push(result.catch((error: unknown) => fail(fd, error)));
        }
      } catch (error) {
        fail(fd, error);
      }
    },
  };
}

/** Resolves once everything written so far has left (or its failure has ended the process). */
export async function written(): Promise<void> {
  await Promise.all(waiting);
}

function sinkOf(fd: number): FileSink {
  let sink = sinks.get(fd);
  if (sink === undefined) {
    if (BunRuntime === undefined) throw new Error("bun-output.ts needs Bun");
    sink = BunRuntime.file(fd).writer();
    sinks.set(fd, sink);
  }
  return sink;
}

/** Ends the process as writeFailure says; the sink waits out a full pipe, so no "try again". */
function fail(fd: number, error: unknown): never {
  const failure = writeFailure(fd, error) ?? { exitCode: 1 };
  if (failure.line !== undefined) {
    try {
      // A line fits what the kernel takes at once; the process ends right after.
      const stderr = sinkOf(2);
      void Promise.all([stderr.write(encoder.encode(failure.line)), stderr.flush()]).catch(
        () => undefined,
      );
    } catch {
      // stderr is gone too: the exit code is all that is left.
    }
  }
  process.exit(failure.exitCode);
}
