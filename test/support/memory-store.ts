import type { Hostname } from "../../src/protocol/hostname.ts";
import type { CredentialStore } from "../../src/protocol/credential-store.ts";

/** An operation of {@link CredentialStore}, for {@link MemoryStore.failNext}. */
export type StoreOperation = keyof CredentialStore;

/**
 * A `CredentialStore` kept in a `Map`, for tests. `entries` is the raw map (host → stored
 * text), so a test can seed it, corrupt it, or check exactly what was written.
 */
export interface MemoryStore extends CredentialStore {
  readonly entries: Map<string, string>;
  /**
   * Makes the next call of `operation` (or of any operation, when omitted) throw `error`
   * instead of touching the map. The failure is used up by that one call.
   */
  failNext(error: unknown, operation?: StoreOperation): void;
  /** Every call made so far, in order, e.g. `["store", "example.com"]`, `["list"]`. */
  readonly calls: readonly (readonly string[])[];
}

/** Creates a memory store holding `initial` (host → stored text). */
export function createMemoryStore(
  initial?: Iterable<readonly [string, string]> | Record<string, string>,
): MemoryStore {
  const entries = new Map<string, string>(
    initial === undefined ? [] : Symbol.iterator in initial ? initial : Object.entries(initial),
  );
  const calls: string[][] = [];
  let pending: { error: unknown; operation: StoreOperation | undefined } | undefined;

  const enter = (operation: StoreOperation, ...args: string[]) => {
    calls.push([operation, ...args]);
    if (pending && (pending.operation === undefined || pending.operation === operation)) {
      const { error } = pending;
      pending = undefined;
      throw error;
    }
  };

  return {
    entries,
    calls,
    failNext(error, operation) {
      pending = { error, operation };
    },
    async get(host) {
      enter("get", host);
      return entries.get(host);
    },
    async store(host, secret) {
      enter("store", host);
      entries.set(host, secret);
    },
    async forget(host) {
      enter("forget", host);
      entries.delete(host);
    },
    async list() {
      enter("list");
      return [...entries.keys()].sort() as Hostname[];
    },
  } satisfies MemoryStore;
}
