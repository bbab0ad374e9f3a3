/** What `doctor` learns of a store without touching a secret. */
export interface ProbeResult {
  readonly status: "ok" | "warn" | "fail";
  readonly summary: string;
  readonly fix?: string;
  /** True when it is safe to touch the keychain itself (nothing will be started or prompted). */
  readonly safeToOpen: boolean;
}

/**
 * How long a probe waits for a store when neither --timeout nor the variable says: a person
 * is waiting (doctor, install's warnings), and no probe waits for an unlock prompt.
 */
export const PROBE_TIMEOUT_SECONDS = 5;
