/** What `doctor` learns of a store without touching a secret. */
export interface ProbeResult {
  readonly status: "ok" | "warn" | "fail";
  readonly summary: string;
  readonly fix?: string;
  /** True when it is safe to touch the keychain itself (nothing will be started or prompted). */
  readonly safeToOpen: boolean;
}
