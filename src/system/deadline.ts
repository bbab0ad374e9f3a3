import { CliError, ExitCode } from "../errors.ts";
import { quote } from "./quote.ts";

/**
 * The one deadline of a run: set once from `--timeout` (else the variable, else the default)
 * and handed down with the store context, so that every wait of every call (a store's
 * requests, its lock, its child processes, its native calls, doctor's network checks) takes
 * what is left of it, and the command as a whole ends within its `--timeout`.
 */
export interface Deadline {
  /** The absolute time, in `now()`'s milliseconds, after which nothing is started or awaited. */
  readonly at: number;
  /** The seconds it was set from, for messages ("within N s"). */
  readonly seconds: number;
  /** The monotonic clock it is kept by, in milliseconds. */
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Milliseconds left, never below 0. */
  remainingMs(): number;
  /**
   * `promise`'s outcome, or `expired()` thrown once the deadline passes first (at once when it
   * has passed). What `promise` waits for is abandoned, not stopped: the caller stops it.
   */
  race<T>(promise: Promise<T>, expired: () => Error): Promise<T>;
  /**
   * The earlier of this deadline and `seconds` from now: a wait with a shorter limit of its
   * own (a probe a person waits for) that still ends by the run's.
   */
  within(seconds: number): Deadline;
  /** A signal aborted at the deadline (at once when it has passed), for APIs that take one. */
  signal(): AbortSignal;
}

/** The clock a deadline is kept by: performance.now()'s milliseconds, and a way to wait. */
interface Clock {
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A deadline `seconds` from now, on `clock` (the real monotonic clock unless given). */
export function deadlineIn(seconds: number, clock: Clock = REAL_CLOCK): Deadline {
  const at = clock.now() + seconds * 1000;
  return deadlineAt(at, seconds, clock);
}

/** A deadline at `at` (in `clock.now()`'s milliseconds), `seconds` long for its messages. */
export function deadlineAt(at: number, seconds: number, clock: Clock = REAL_CLOCK): Deadline {
  const remainingMs = () => Math.max(0, at - clock.now());
  return {
    at,
    seconds,
    now: clock.now,
    sleep: clock.sleep,
    remainingMs,
    signal: () => AbortSignal.timeout(Math.ceil(remainingMs())),
    within(limit) {
      const sooner = clock.now() + limit * 1000;
      return sooner < at ? deadlineAt(sooner, limit, clock) : this;
    },
    async race(promise, expired) {
      const left = remainingMs();
      if (left <= 0) {
        // What was started is abandoned: its rejection must not go unhandled.
        promise.catch(() => undefined);
        throw expired();
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const passed = new Promise<typeof PASSED>((resolve) => {
        timer = setTimeout(() => {
          resolve(PASSED);
        }, left);
      });
      try {
        const outcome = await Promise.race([promise, passed]);
        if (outcome === PASSED) {
          promise.catch(() => undefined);
          throw expired();
        }
        return outcome;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

const PASSED = Symbol("passed");

// Module state on purpose: main.ts must learn, at the very end, whether a call abandoned at
// its deadline may still block a thread, without every layer passing it along.
let abandoned = 0;

/**
 * Records that a call abandoned at its deadline may still block a thread that a normal exit
 * would wait for, possibly for ever (a native call waiting for a prompt).
 */
export function abandonedBlockingCall(): void {
  abandoned++;
}

/** True when a call was abandoned at its deadline and may still block a thread. */
export function hasAbandonedCalls(): boolean {
  return abandoned > 0;
}

/** The environment variable that sets the deadline when `--timeout` is not given. */
export const TIMEOUT_VARIABLE = "TF_CREDENTIALS_KEYCHAIN_TIMEOUT";

/** Seconds a call may take when neither `--timeout` nor the environment says. */
export const DEFAULT_TIMEOUT_SECONDS = 30;

/** The deadline of this run in seconds: `--timeout`, else the environment's, else the default. */
export function timeoutSeconds(
  options: { readonly timeout?: number },
  env: Readonly<Record<string, string | undefined>>,
): number {
  const fromEnv = env[TIMEOUT_VARIABLE];
  return (
    options.timeout ??
    (fromEnv === undefined || fromEnv === ""
      ? DEFAULT_TIMEOUT_SECONDS
      : parseTimeout(fromEnv, TIMEOUT_VARIABLE))
  );
}

/** Whether `--timeout` or the variable set the deadline (else a default applies). */
export function timeoutGiven(
  options: { readonly timeout?: number },
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return options.timeout !== undefined || (env[TIMEOUT_VARIABLE] ?? "") !== "";
}

/** A deadline in seconds: a positive number up to a day. */
export function parseTimeout(value: string, source = "--timeout"): number {
  const seconds = /^[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : NaN;
  if (!(seconds > 0 && seconds <= 86400)) {
    throw new CliError(
      `invalid ${source} ${quote(value)}: use a number of seconds greater than 0, at most 86400`,
      ExitCode.Usage,
    );
  }
  return seconds;
}
