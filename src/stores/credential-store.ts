import type { Io } from "../system/io.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { CallLimits } from "./call-limits.ts";

/**
 * Where credentials objects live. A store keeps an opaque string per host (the JSON text of
 * the credentials object, exactly as validated by the protocol layer) and knows nothing of
 * the protocol. Failures are thrown as `CliError`s that say what is wrong and what to do.
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

/** What open-store.ts gives the `open` of every store's folder. */
export interface StoreContext {
  /** The service name that keeps this set of entries apart (`--service`). */
  readonly service: string;
  readonly io: Io;
  /** The deadline that every call of this run shares. */
  readonly limits: CallLimits;
}
