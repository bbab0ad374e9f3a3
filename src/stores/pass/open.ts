import type { CredentialStore } from "../../protocol/credential-store.ts";
import { protectingGets, type StoreContext } from "../store-description.ts";
import { createPassStore } from "./pass-store.ts";

/** `pass` and gpg, every run of them and every wait for the lock ending by the deadline. */
export function openPassStore({
  service,
  io,
  deadline,
  beforeSecret,
}: StoreContext): CredentialStore {
  const store = createPassStore({
    service,
    env: io.env,
    deadline,
    homedir: io.homedir,
    ...(io.processes === undefined ? {} : { processes: io.processes }),
  });
  // gpg decrypts in a child, but the secret comes back through this process's pipe.
  return protectingGets(store, beforeSecret);
}
