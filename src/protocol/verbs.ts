import type { CredentialStore } from "../protocol/credential-store.ts";
import { CliError } from "../errors.ts";
import type { Hostname } from "./hostname.ts";
import { parseCredentialsObject, parseStorableObject } from "./credentials-object.ts";

/**
 * `get`: the text to print on stdout, the stored object or `{}` when nothing is stored.
 * A stored value that is no longer a credentials object (written by hand, or by something
 * else under our service name) is an error rather than `{}`, so it is never silently lost.
 */
export async function get(store: CredentialStore, host: Hostname): Promise<string> {
  const stored = await store.get(host);
  if (stored === undefined) return "{}";
  try {
    return parseCredentialsObject(stored, `the stored entry for ${host}`);
  } catch (error) {
    throw new CliError(
      `the stored entry for ${host} is not a JSON credentials object; run "terraform logout ${host}" (or "tofu logout ${host}") and log in again`,
      undefined,
      { cause: error },
    );
  }
}

/**
 * `store`: validates the whole of `input` before touching the store, so bad input leaves
 * what was stored before exactly as it was; then replaces the entry with the object as sent.
 * The empty object is refused: it is what `get` prints when nothing is stored.
 */
export async function store(store: CredentialStore, host: Hostname, input: string): Promise<void> {
  const object = parseStorableObject(input, "the credentials object on stdin");
  await store.store(host, object);
}

/** `forget`: deletes the entry; succeeds when there was none. */
export async function forget(store: CredentialStore, host: Hostname): Promise<void> {
  await store.forget(host);
}
