import { systemErrorMessage } from "../errors.ts";

/** How the process ends after a write to standard output or error failed. */
export interface WriteFailure {
  readonly exitCode: number;
  /** The line for stderr, when stderr is not what failed and there is something to say. */
  readonly line?: string;
}

/**
 * What a failed write to `fd` (1 or 2) means, whichever way it was written:
 * - the reader has gone (`get HOST | head -c0`, `doctor | head -1`): end quietly with the
 *   shell's code for a broken pipe, as a program killed by SIGPIPE would (the runtime ignores
 *   SIGPIPE, and its stream would print a stack trace);
 * - a write that can never succeed (a full disk, a read-only file, EIO): one line on stderr
 *   and exit 1, instead of the runtime's stack trace.
 * `undefined` for "try again" (a full non-blocking pipe): no failure, the rest must wait.
 */
export function writeFailure(fd: number, error: unknown): WriteFailure | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EPIPE") return { exitCode: 141 };
  if (code === "EAGAIN" || code === "EWOULDBLOCK") return undefined;
  if (fd === 2) return { exitCode: 1 };
  const why = systemErrorMessage(error) ?? `could not write: ${String(code ?? error)}`;
  return {
    exitCode: 1,
    line: `${why.replace("could not write", "could not write to standard output")}\n`,
  };
}
