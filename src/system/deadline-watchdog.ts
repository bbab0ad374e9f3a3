import { Worker } from "node:worker_threads";
import { CliError } from "../errors.ts";
import { deadlineIn, type Deadline } from "./deadline.ts";

/**
 * Runs synchronous calls (native calls, Windows' blocking reads of stdin) under a deadline
 * that holds even if a call never returns.
 */
interface DeadlineWatchdog {
  /**
   * Runs `call` on this thread. Past the deadline it throws the deadline's `CliError`
   * instead of starting it; a call still running at the deadline ends the process, with
   * the same message on stderr and a non-zero exit code.
   */
  guard<T>(call: () => T): T;
}

/** The states of the word the two threads share. */
export const WATCHDOG_STATE = { idle: 0, calling: 1, expired: 2 } as const;

/** What the watchdog thread is told, once. */
export interface WatchdogOrders {
  readonly state: Int32Array;
  readonly delayMs: number;
  /** The line it writes to stderr before it ends the process. */
  readonly message: string;
}

/**
 * A synchronous FFI call blocks the JS thread, so no timer of its can keep the deadline: a
 * worker thread does. It is started at the first call (and boots while that call runs on
 * the other thread), keeps no event loop alive, and dies with the process. The threads
 * agree through one shared word, changed only by compare-and-exchange: the call marks it
 * `calling` only while it is `idle`, and the watchdog marks it `expired` only while it is
 * `idle`, so either a call starts before the deadline and is watched, or it does not start.
 * `workerFile` is deadline-watchdog-worker.ts, as the runtime finds it.
 */
export function startDeadlineWatchdog(
  deadline: Deadline,
  message: string,
  workerFile: string | URL,
): DeadlineWatchdog {
  let state: Int32Array | undefined;
  const expired = () => new CliError(message);
  const start = (): Int32Array => {
    const shared = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(workerFile);
    worker.unref();
    worker.postMessage({
      state: shared,
      delayMs: deadline.remainingMs(),
      message,
    } satisfies WatchdogOrders);
    return shared;
  };
  return {
    guard(call) {
      if (deadline.remainingMs() <= 0) throw expired();
      state ??= start();
      const { idle, calling } = WATCHDOG_STATE;
      if (Atomics.compareExchange(state, 0, idle, calling) !== idle) throw expired();
      try {
        return call();
      } finally {
        Atomics.store(state, 0, idle);
      }
    },
  };
}

/**
 * The watchdog's entry point in the executable (scripts/build.ts makes it one): Bun finds
 * an entry point by its path from src/, the entry points' common directory. The bundle's
 * import.meta.url is the build machine's path, so a URL relative to it would not do.
 */
const WATCHDOG_WORKER = "./system/deadline-watchdog-worker.ts";

/** A watchdog of the built executable over `deadline`, that ends the process with `message`. */
export function watchdogFor(deadline: Deadline, message: string): DeadlineWatchdog {
  return startDeadlineWatchdog(deadline, message, WATCHDOG_WORKER);
}

/**
 * A guard for blocking reads of stdin (Windows reads a pipe with them: Bun's asynchronous
 * stdin fails there), which no timer can interrupt: a read still waiting `timeoutSeconds`
 * from now ends the process with `message` on stderr, and none starts after that.
 */
export function guardStdinReads(timeoutSeconds: number, message: string): <T>(read: () => T) => T {
  const watchdog = watchdogFor(deadlineIn(timeoutSeconds), message);
  return (read) => watchdog.guard(read);
}
