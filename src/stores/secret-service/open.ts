import type { CredentialStore, StoreContext } from "../credential-store.ts";
import { createSecretServiceStore } from "./store.ts";

/** The Secret Service on the session bus, through our own D-Bus client: no native code. */
export function openSecretServiceStore({
  service,
  io,
  limits,
  beforeSecret,
}: StoreContext): CredentialStore {
  return createSecretServiceStore({
    service,
    env: io.env,
    limits,
    beforeSecret,
    warn: (line) => io.stderr.write(`${line}\n`),
  });
}
