import type { CredentialStore, StoreContext } from "../credential-store.ts";
import { createPassStore } from "./pass-store.ts";

/** `pass` and gpg, each run of them limited to the call's timeout. */
export function openPassStore({ service, io, limits }: StoreContext): CredentialStore {
  return createPassStore({
    service,
    env: io.env,
    timeoutMs: limits.timeoutSeconds * 1000,
    homedir: io.homedir,
    ...(io.processes === undefined ? {} : { processes: io.processes }),
  });
}
