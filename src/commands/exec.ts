import { tokenOf } from "../protocol/credentials-object.ts";
import { CliError } from "../errors.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";

/**
 * The token of every stored host whose object has a string `token`, or of `only` those
 * hosts when given (each must have one). Entries that are not JSON objects with a token
 * are left out: they are not for `TF_TOKEN_` variables. So is a token with a NUL character,
 * which no environment variable can carry (the runtime's refusal would quote it): `unusable`
 * hears of its host, and a host asked for by name is an error. `store` keeps such an object
 * as it came, as the protocol asks; only `exec` cannot pass it on. Reads the store, never
 * writes it.
 */
export async function storedTokens(
  store: CredentialStore,
  only?: readonly Hostname[],
  unusable: (host: Hostname) => void = () => {},
): Promise<Map<Hostname, string>> {
  const hosts = only ?? (await store.list());
  const tokens = new Map<Hostname, string>();
  for (const host of hosts) {
    const token = tokenOf(await store.get(host));
    if (token?.includes("\0")) {
      if (only !== undefined) throw new CliError(nulMessage(host));
      unusable(host);
    } else if (token !== undefined) {
      tokens.set(host, token);
    } else if (only !== undefined) {
      throw new CliError(`no token stored for ${host}: run "terraform login ${host}" first`);
    }
  }
  return tokens;
}

/** One line about a host whose token holds a NUL character; never the token. */
export function nulMessage(host: Hostname): string {
  return `the token stored for ${host} holds a NUL character, which no environment variable can carry; run "terraform login ${host}" again`;
}
