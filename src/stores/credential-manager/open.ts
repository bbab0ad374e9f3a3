import type { CredentialStore } from "../../protocol/credential-store.ts";
import { protectingGets, type StoreContext } from "../store-description.ts";
import { deadlineIn, type Deadline } from "../../system/deadline.ts";
import type { ProbeResult } from "../store-description.ts";
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

/** The Credential Manager store of the built Windows executable, under `deadline`. */
export function openCredentialManagerStore({
  service,
  deadline,
  beforeSecret,
}: StoreContext): CredentialStore {
  const watchdog = startDeadlineWatchdog(
    deadline,
    deadlineMessage(deadline.seconds),
    WATCHDOG_WORKER,
  );
  const store = createCredentialManagerStore(openAdvapi32(), service, (call) =>
    watchdog.guard(call),
  );
  return protectingGets(store, beforeSecret);
}

/** doctor's probe of Credential Manager, which must answer by `deadline`. */
export function probeCredentialManagerNow(service: string, deadline: Deadline): ProbeResult {
  const watchdog = startDeadlineWatchdog(
    deadline,
    deadlineMessage(deadline.seconds),
    WATCHDOG_WORKER,
  );
  const api = openAdvapi32();
  return probeCredentialManager(() => watchdog.guard(() => api.list()), service);
}

/**
 * A guard for blocking reads of stdin (Windows reads a pipe with them: Bun's asynchronous
 * stdin fails there), which no timer can interrupt: a read still waiting `timeoutSeconds`
 * from now ends the process with `message` on stderr, and none starts after that.
 */
export function guardStdinReads(timeoutSeconds: number, message: string): <T>(read: () => T) => T {
  const watchdog = startDeadlineWatchdog(deadlineIn(timeoutSeconds), message, WATCHDOG_WORKER);
  return (read) => watchdog.guard(read);
}

/** What a call that does not return by the deadline ends the helper with. */
export function deadlineMessage(timeoutSeconds: number): string {
  return `Windows Credential Manager did not answer within ${timeoutSeconds} s; try again, and if it keeps hanging, restart the computer (--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT sets the limit)`;
}
