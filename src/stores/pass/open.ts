import { protectingGets, type CredentialStore, type StoreContext } from "../credential-store.ts";
import { createPassStore } from "./pass-store.ts";

/** `pass` and gpg, each run of them limited to the call's timeout. */
export function openPassStore({
  service,
  io,
  limits,
  beforeSecret,
}: StoreContext): CredentialStore {
  const store = createPassStore({
    service,
    env: io.env,
    timeoutMs: limits.timeoutSeconds * 1000,
    homedir: io.homedir,
    ...(io.processes === undefined ? {} : { processes: io.processes }),
  });
  // gpg decrypts in a child, but the secret comes back through this process's pipe.
  return protectingGets(store, beforeSecret);
}
