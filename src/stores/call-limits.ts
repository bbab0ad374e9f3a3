/** When a run of store calls must give up, and how it waits between attempts. */
export interface CallLimits {
  /** Absolute time (in `now()`'s milliseconds) after which no call is started or awaited. */
  readonly deadline: number;
  /** The seconds the deadline was set from, for the message. */
  readonly timeoutSeconds: number;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** Limits that start now, on the real clock. */
export function callLimits(timeoutSeconds: number): CallLimits {
  return {
    deadline: performance.now() + timeoutSeconds * 1000,
    timeoutSeconds,
    now: () => performance.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}
