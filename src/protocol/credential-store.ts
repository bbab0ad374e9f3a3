import type { Hostname } from "./hostname.ts";

/**
 * Where credentials objects live, as the protocol needs it. A store keeps an opaque string
 * per host (the JSON text of the credentials object, exactly as validated by the protocol
 * layer) and knows nothing of the protocol. Failures are thrown as `CliError`s that say what
 * is wrong and what to do.
 */
export interface CredentialStore {
  /** The stored text for `host`, or `undefined` when nothing is stored (absence is no error). */
  get(host: Hostname): Promise<string | undefined>;
  /** Replaces whatever was stored for `host` with `secret`. */
  store(host: Hostname, secret: string): Promise<void>;
  /** Deletes what is stored for `host`; succeeds when nothing was stored. */
  forget(host: Hostname): Promise<void>;
  /** The hosts that have an entry, sorted. Never returns secrets. */
  list(): Promise<Hostname[]>;
}
