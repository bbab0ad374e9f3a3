import type { FixNeeded } from "../fixes.ts";

/** What `doctor` learns of a store without touching a secret. */
export interface ProbeResult {
  readonly status: "ok" | "warn" | "fail";
  readonly summary: string;
  /** The one fix, as data: doctor and install render it with the helper's command. */
  readonly fix?: FixNeeded;
  /** True when it is safe to touch the keychain itself (nothing will be started or prompted). */
  readonly safeToOpen: boolean;
}

/**
 * How long a probe waits for a store when neither --timeout nor the variable says: a person
 * is waiting (doctor, install's warnings), and no probe waits for an unlock prompt.
 */
export const PROBE_TIMEOUT_SECONDS = 5;
