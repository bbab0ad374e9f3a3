import { CliError } from "../../errors.ts";
import { canonicalHostname, type Hostname } from "../../protocol/hostname.ts";
import type { CredentialStore } from "../../protocol/credential-store.ts";
import {
  CRED_MAX_CREDENTIAL_BLOB_SIZE,
  ERROR_NO_SUCH_LOGON_SESSION,
  Win32Error,
  type CredentialManagerApi,
  type CredentialSummary,
} from "./api.ts";
import { entryName, legacyEntryName } from "../windows-entry-name.ts";

/** How the store runs a native call: deadline-watchdog.ts's guard in the executable. */
type GuardCall = <T>(call: () => T) => T;

/**
 * Windows Credential Manager: one generic credential per host, named by `entryName`, with
 * the host as its user name and the credentials object's raw UTF-8 bytes as its blob. UTF-8,
 * not UTF-16 as a "password": it keeps the whole 2560 bytes of an entry for the object.
 *
 * Entries of earlier versions (and of @napi-rs/keyring) under `legacyEntryName` are read,
 * listed and forgotten as this store's own when their user name is the host, and a store
 * moves one to its new name; one whose user name is another host belongs to another
 * profile and is never touched.
 */
export function createCredentialManagerStore(
  api: CredentialManagerApi,
  service: string,
  guard: GuardCall,
): CredentialStore {
  const call = <T>(action: string, operation: () => T): T => {
    try {
      return guard(operation);
    } catch (error) {
      throw error instanceof Win32Error ? credentialManagerError(action, error) : error;
    }
  };
  /** This profile's entry of an earlier version for `host`, or undefined. */
  const readLegacy = (host: Hostname) => {
    const entry = call("read from", () => api.read(legacyEntryName(service, host)));
    if (entry === undefined || entry.userName === host) return entry;
    entry.blob.fill(0);
    return undefined;
  };
  const forgetLegacy = (host: Hostname) => {
    const entry = readLegacy(host);
    if (entry === undefined) return;
    entry.blob.fill(0);
    call("delete from", () => api.delete(legacyEntryName(service, host)));
  };

  return {
    async get(host) {
      const entry = call("read from", () => api.read(entryName(service, host))) ?? readLegacy(host);
      if (entry === undefined) return undefined;
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(entry.blob);
      } catch {
        throw new CliError(
          `the Credential Manager entry for ${host} is not UTF-8 text`,
          undefined,
          { fix: { situation: "entry-unreadable", values: { HOST: host } } },
        );
      } finally {
        entry.blob.fill(0);
      }
    },
    async store(host, secret) {
      const blob = Buffer.from(secret, "utf8");
      if (blob.byteLength > CRED_MAX_CREDENTIAL_BLOB_SIZE) {
        throw new CliError(
          `the credentials object is ${blob.byteLength} bytes, and Windows Credential Manager keeps at most ${CRED_MAX_CREDENTIAL_BLOB_SIZE} bytes per entry; nothing was stored`,
        );
      }
      const name = entryName(service, host);
      try {
        call("write to", () => api.write(name, host, blob));
      } catch (error) {
        // Wine keeps credentials as registry keys, whose names stop at 255 characters with
        // its own prefix: a long host fails there (not on Windows) with a code that says
        // nothing of it. Name the likely cause.
        if (error instanceof CliError && name.length > 220) {
          throw new CliError(
            `${error.message} (the entry's name, ${name.length} characters, may be longer than this Credential Manager takes: Wine keeps at most about 240)`,
            undefined,
            { cause: error },
          );
        }
        throw error;
      } finally {
        blob.fill(0);
      }
      // Once the new entry is in place: a failure here leaves the old one, which get no
      // longer reads, for the next store or forget.
      forgetLegacy(host);
    },
    async forget(host) {
      call("delete from", () => api.delete(entryName(service, host)));
      forgetLegacy(host);
    },
    async list() {
      return hostsOf(
        call("list the entries of", () => api.list()),
        service,
      );
    },
  } satisfies CredentialStore;
}

/**
 * The hosts of `service` among `credentials`: those named `entryName(service, user name)`
 * or `legacyEntryName(service, user name)` whose user name is a host in normalized form.
 * Anything else was written by another program, by hand or for another profile, and get and
 * forget could not reach it by that name.
 */
export function hostsOf(credentials: readonly CredentialSummary[], service: string): Hostname[] {
  const hosts = new Set<Hostname>();
  for (const { targetName, userName } of credentials) {
    const host = canonicalHostname(userName);
    if (host === undefined) continue;
    if (targetName === entryName(service, host) || targetName === legacyEntryName(service, host))
      hosts.add(host);
  }
  return [...hosts].sort();
}

/** One line that says what failed and, where Windows tells us, what to do. */
export function credentialManagerError(action: string, error: Win32Error): CliError {
  const noProfile = error.code === ERROR_NO_SUCH_LOGON_SESSION;
  const problem = noProfile
    ? "this logon session has no user profile loaded (as for some services, scheduled tasks and remote sessions)"
    : `${error.call} failed with Windows error ${error.code}`;
  return new CliError(`could not ${action} Windows Credential Manager: ${problem}`, undefined, {
    cause: error,
    ...(noProfile ? { fix: { situation: "credential-manager-unusable" as const } } : {}),
  });
}
