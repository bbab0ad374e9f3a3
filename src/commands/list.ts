import type { Hostname } from "../protocol/hostname.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import type { GlobalOptions } from "./options.ts";

/** What `list` found: the hosts with credentials in the store the options select. */
export interface ListResult {
  readonly hosts: readonly Hostname[];
  readonly options: GlobalOptions;
}

/** `list`: the hosts that have credentials (names only; no secret is read). */
export async function list(
  options: GlobalOptions,
  openStore: (options: GlobalOptions) => CredentialStore | Promise<CredentialStore>,
): Promise<ListResult> {
  return { hosts: await (await openStore(options)).list(), options };
}
