import type { CredentialStore } from "../../protocol/credential-store.ts";
import type { Deadline } from "../../system/deadline.ts";
import { protectingGets, type ProbeResult, type StoreContext } from "../store-description.ts";
import { openAdvapi32 } from "./advapi32.ts";
import { watchdogFor } from "../../system/deadline-watchdog.ts";
import { probeCredentialManager } from "./probe.ts";
import { createCredentialManagerStore } from "./store.ts";

/** The Credential Manager store of the built Windows executable, under `deadline`. */
export function openCredentialManagerStore({
  service,
  deadline,
  beforeSecret,
}: StoreContext): CredentialStore {
  const watchdog = watchdogFor(deadline, deadlineMessage(deadline.seconds));
  const store = createCredentialManagerStore(openAdvapi32(), service, (call) =>
    watchdog.guard(call),
  );
  return protectingGets(store, beforeSecret);
}

/** doctor's probe of Credential Manager, which must answer by `deadline`. */
export function probeCredentialManagerNow(service: string, deadline: Deadline): ProbeResult {
  const watchdog = watchdogFor(deadline, deadlineMessage(deadline.seconds));
  const api = openAdvapi32();
  return probeCredentialManager(() => watchdog.guard(() => api.list()), service);
}

/** What a call that does not return by the deadline ends the helper with. */
function deadlineMessage(timeoutSeconds: number): string {
  return `Windows Credential Manager did not answer within ${timeoutSeconds} s; try again, and if it keeps hanging, restart the computer (--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT sets the limit)`;
}
