/**
 * One call's deadline: every wait in it (the store's lock, gpg's probe, `pass` itself) takes
 * what is left of it, so that the call as a whole ends within `timeoutMs`, as the Secret
 * Service's calls do.
 */
export interface Deadline {
  /** The whole call's allowance, for messages. */
  readonly timeoutMs: number;
  /** Milliseconds left, never below 0. */
  remainingMs(): number;
}

/** A deadline `timeoutMs` from now, on the monotonic clock. */
export function deadlineIn(timeoutMs: number): Deadline {
  const endsAt = performance.now() + timeoutMs;
  return { timeoutMs, remainingMs: () => Math.max(0, endsAt - performance.now()) };
}
