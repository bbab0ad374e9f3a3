/**
 * Everything the program takes from and gives to its process, read once in `main.ts` and
 * passed down as values so that the rest of the code can run in-process under test.
 */
export interface Io {
  /** Raw bytes of standard input; only `store` reads it, and always to EOF. */
  readonly stdin: AsyncIterable<Uint8Array>;
  /**
   * Whether stdin is a terminal: then a failed `store` does not wait for EOF. A question,
   * not a value: only the calls that need the answer pay for it (a get never does).
   */
  stdinIsTTY(): Promise<boolean>;
  /**
   * Where reads of stdin block the thread (Windows), keeps the deadline on another one: a
   * read still waiting `timeoutSeconds` from now ends the process with `message` on stderr.
   * Absent where the reads are asynchronous and the reader's own timer keeps it.
   */
  readonly boundStdin?: (timeoutSeconds: number, message: string) => Promise<void>;
  readonly stdout: TextSink;
  /** Whether stdout is a terminal (a person reads it); absent counts as no. */
  readonly stdoutIsTTY?: () => Promise<boolean>;
  readonly stderr: TextSink;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: NodeJS.Platform;
  readonly arch: string;
  readonly homedir: string;
  /** Absolute path of the running executable (the SEA binary, or node in development). */
  readonly execPath: string;
  /** True when running as a single executable application. */
  readonly isSea: boolean;
  /** The user this process runs as (POSIX); undefined on Windows. */
  readonly uid?: number;
  /** This process's id, and whether another is still running (for the pass store's lock). */
  readonly processes?: { readonly pid: number; isAlive(pid: number): boolean };
}

/** What the commands that read and write files need to know of the machine. */
export type Machine = Pick<
  Io,
  "env" | "platform" | "arch" | "homedir" | "execPath" | "isSea" | "uid"
>;

export interface TextSink {
  write(text: string): void;
}
