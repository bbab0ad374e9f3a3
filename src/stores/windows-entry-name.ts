import type { Hostname } from "../protocol/hostname.ts";

// Windows Credential Manager's entry names, shared by the two stores that keep its entries:
// credential-manager/ (the Windows executable) and wincred/ (WSL, through that executable).

/**
 * The name of the entry for `host` in `service`: `<service>/<host>`. A "/" occurs in neither
 * a hostname nor a service name (parseServiceName), so no two profiles share a name.
 */
export function entryName(service: string, host: Hostname): string {
  return `${service}/${host}`;
}

/**
 * The name earlier versions gave that entry, `<host>.<service>` (the @napi-rs/keyring
 * convention): ambiguous, (a.example, prod.work) and (a.example.prod, work) share one. Such
 * an entry is this profile's only when its user name is `host`.
 */
export function legacyEntryName(service: string, host: Hostname): string {
  return `${host}.${service}`;
}
