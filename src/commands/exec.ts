import { CliError } from "../errors.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { CredentialStore } from "../stores/credential-store.ts";

/**
 * The token of every stored host whose object has a string `token`, or of `only` those
 * hosts when given (each must have one). Entries that are not JSON objects with a token
 * are left out: they are not for `TF_TOKEN_` variables. Reads the store, never writes it.
 */
export async function storedTokens(
  store: CredentialStore,
  only?: readonly Hostname[],
): Promise<Map<Hostname, string>> {
  const hosts = only ?? (await store.list());
  const tokens = new Map<Hostname, string>();
  for (const host of hosts) {
    const token = tokenOf(await store.get(host));
    if (token !== undefined) tokens.set(host, token);
    else if (only !== undefined) {
      throw new CliError(`no token stored for ${host}: run "terraform login ${host}" first`);
    }
  }
  return tokens;
}

function tokenOf(stored: string | undefined): string | undefined {
  if (stored === undefined) return undefined;
  try {
    const object: unknown = JSON.parse(stored);
    if (typeof object !== "object" || object === null) return undefined;
    const token: unknown = (object as Record<string, unknown>).token;
    return typeof token === "string" ? token : undefined;
  } catch {
    return undefined;
  }
}
