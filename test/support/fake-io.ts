import type { Io, TextSink } from "../../src/system/io.ts";

/** A `TextSink` that keeps everything written to it. */
export interface RecordingSink extends TextSink {
  /** Everything written so far, concatenated. */
  readonly text: string;
}

export interface FakeIoOptions {
  /** What stdin yields, as one chunk (text is UTF-8 encoded) or as several; default: nothing. */
  readonly stdin?: string | Uint8Array | readonly Uint8Array[];
  /**
   * After the chunks, never reach EOF: like a terminal nobody types into, or a pipe whose
   * writer is waiting. Reading such stdin to the end hangs.
   */
  readonly stdinStaysOpen?: boolean;
  readonly stdinIsTTY?: boolean;
  readonly boundStdin?: Io["boundStdin"];
  readonly stdoutIsTTY?: boolean;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly platform?: NodeJS.Platform;
  readonly arch?: string;
  readonly homedir?: string;
  readonly execPath?: string;
  readonly isSea?: boolean;
}

/** An `Io` for running the program in-process; see {@link createFakeIo}. */
export interface FakeIo extends Io {
  readonly stdout: RecordingSink;
  readonly stderr: RecordingSink;
  /** True once something started iterating stdin. */
  readonly stdinReadStarted: boolean;
  /** True once stdin was read to EOF (its iterator reported `done`). */
  readonly stdinDrained: boolean;
  /** How many chunks of stdin were handed out. */
  readonly stdinChunksRead: number;
}

/**
 * Creates an `Io` whose stdout and stderr collect text and whose stdin is given bytes,
 * recording whether the program read stdin to EOF, as the protocol requires of `store`.
 * Stdin can be iterated once, like a real stream.
 */
export function createFakeIo(options: FakeIoOptions = {}): FakeIo {
  const chunks = toChunks(options.stdin);
  let started = false;
  let drained = false;
  let chunksRead = 0;

  const stdin: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      if (started) throw new Error("fake stdin can only be read once");
      started = true;
      return {
        async next(): Promise<IteratorResult<Uint8Array>> {
          const chunk = chunks[chunksRead];
          if (chunk !== undefined) {
            chunksRead += 1;
            return { done: false, value: chunk };
          }
          if (options.stdinStaysOpen) await new Promise<never>(() => {});
          drained = true;
          return { done: true, value: undefined };
        },
        // A reader that stops early (break, throw) ends here without reaching EOF.
        async return(): Promise<IteratorResult<Uint8Array>> {
          return { done: true, value: undefined };
        },
      };
    },
  };

  return {
    stdin,
    stdinIsTTY: async () => options.stdinIsTTY ?? false,
    ...(options.boundStdin === undefined ? {} : { boundStdin: options.boundStdin }),
    stdoutIsTTY: async () => options.stdoutIsTTY ?? false,
    stdout: recordingSink(),
    stderr: recordingSink(),
    env: options.env ?? {},
    platform: options.platform ?? "linux",
    arch: options.arch ?? "x64",
    homedir: options.homedir ?? "/home/tester",
    execPath:
      options.execPath ?? "/home/tester/.terraform.d/plugins/terraform-credentials-keychain",
    isSea: options.isSea ?? false,
    get stdinReadStarted() {
      return started;
    },
    get stdinDrained() {
      return drained;
    },
    get stdinChunksRead() {
      return chunksRead;
    },
  } satisfies FakeIo;
}

function toChunks(stdin: FakeIoOptions["stdin"]): readonly Uint8Array[] {
  if (stdin === undefined) return [];
  if (typeof stdin === "string") return [new TextEncoder().encode(stdin)];
  if (stdin instanceof Uint8Array) return [stdin];
  return stdin;
}

function recordingSink(): RecordingSink {
  let text = "";
  return {
    write(chunk: string) {
      text += chunk;
    },
    get text() {
      return text;
    },
  };
}
