import { protectingGets, type CredentialStore, type StoreContext } from "../credential-store.ts";
import { callLimits } from "../call-limits.ts";
import type { ProbeResult } from "../probe-result.ts";
import { openAdvapi32 } from "./advapi32.ts";
import { startDeadlineWatchdog } from "./deadline-watchdog.ts";
import { probeCredentialManager } from "./probe.ts";
import { createCredentialManagerStore } from "./store.ts";

/**
 * The watchdog's entry point in the executable (scripts/build.ts makes it one): Bun finds
 * an entry point by its path from src/, the entry points' common directory. The bundle's
 * import.meta.url is the build machine's path, so a URL relative to it would not do.
 */
const WATCHDOG_WORKER = "./stores/credential-manager/deadline-watchdog-worker.ts";

/** The Credential Manager store of the built Windows executable, under `limits`' deadline. */
export function openCredentialManagerStore({
  service,
  limits,
  beforeSecret,
}: StoreContext): CredentialStore {
  const watchdog = startDeadlineWatchdog(
    limits,
    deadlineMessage(limits.timeoutSeconds),
    WATCHDOG_WORKER,
  );
  const store = createCredentialManagerStore(openAdvapi32(), service, (call) =>
    watchdog.guard(call),
  );
  return protectingGets(store, beforeSecret);
}

/** doctor's probe of Credential Manager, given `timeoutSeconds` to answer. */
export function probeCredentialManagerNow(service: string, timeoutSeconds: number): ProbeResult {
  const limits = callLimits(timeoutSeconds);
  const watchdog = startDeadlineWatchdog(limits, deadlineMessage(timeoutSeconds), WATCHDOG_WORKER);
  const api = openAdvapi32();
  return probeCredentialManager(() => watchdog.guard(() => api.list()), service);
}

/**
 * A guard for blocking reads of stdin (Windows reads a pipe with them: Bun's asynchronous
 * stdin fails there), which no timer can interrupt: a read still waiting `timeoutSeconds`
 * from now ends the process with `message` on stderr, and none starts after that.
 */
export function guardStdinReads(timeoutSeconds: number, message: string): <T>(read: () => T) => T {
  const watchdog = startDeadlineWatchdog(callLimits(timeoutSeconds), message, WATCHDOG_WORKER);
  return (read) => watchdog.guard(read);
}

/** What a call that does not return by the deadline ends the helper with. */
export function deadlineMessage(timeoutSeconds: number): string {
  return `Windows Credential Manager did not answer within ${timeoutSeconds} s; try again, and if it keeps hanging, restart the computer (--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT sets the limit)`;
}
