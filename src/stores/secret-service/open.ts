import type { CredentialStore } from "../../protocol/credential-store.ts";
import type { StoreContext } from "../store-description.ts";
import { createSecretServiceStore } from "./store.ts";

/** The Secret Service on the session bus, through our own D-Bus client: no native code. */
export function openSecretServiceStore({
  service,
  io,
  deadline,
  beforeSecret,
}: StoreContext): CredentialStore {
  return createSecretServiceStore({
    service,
    env: io.env,
    deadline,
    beforeSecret,
    warn: (line) => io.stderr.write(`${line}\n`),
  });
}
