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
  /**
   * Called once a secret is about to be read into this process, and not before: a call that
   * finds nothing, or only deletes, never holds a token and needs no protection (core-dumps.ts).
   */
  readonly beforeSecret: () => Promise<void>;
}

/**
 * `store` with `beforeSecret` called at the start of each `get`: for stores whose one call
 * both finds an entry and reads its secret.
 */
export function protectingGets(
  store: CredentialStore,
  beforeSecret: () => Promise<void>,
): CredentialStore {
  return {
    async get(host) {
      await beforeSecret();
      return store.get(host);
    },
    store: (host, secret) => store.store(host, secret),
    forget: (host) => store.forget(host),
    list: () => store.list(),
  };
}
