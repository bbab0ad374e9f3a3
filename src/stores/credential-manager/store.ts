import { CliError } from "../../errors.ts";
import { canonicalHostname, type Hostname } from "../../protocol/hostname.ts";
import type { CredentialStore } from "../credential-store.ts";
import {
  CRED_MAX_CREDENTIAL_BLOB_SIZE,
  ERROR_NO_SUCH_LOGON_SESSION,
  Win32Error,
  type CredentialManagerApi,
  type CredentialSummary,
} from "./api.ts";

/** How the store runs a native call: deadline-watchdog.ts's guard in the executable. */
export type GuardCall = <T>(call: () => T) => T;

/**
 * Windows Credential Manager: one generic credential per host, named `<host>.<service>`,
 * with the host as its user name and the credentials object's raw UTF-8 bytes as its blob
 * (the entries @napi-rs/keyring wrote for earlier versions, which this store reads, lists
 * and forgets as its own). UTF-8, not UTF-16 as a "password": it keeps the whole 2560
 * bytes of an entry for the object.
 */
export function createCredentialManagerStore(
  api: CredentialManagerApi,
  service: string,
  guard: GuardCall,
): CredentialStore {
  const targetName = (host: Hostname) => `${host}.${service}`;
  const call = <T>(action: string, operation: () => T): T => {
    try {
      return guard(operation);
    } catch (error) {
      throw error instanceof Win32Error ? credentialManagerError(action, error) : error;
    }
  };

  return {
    async get(host) {
      const blob = call("read from", () => api.read(targetName(host)));
      if (blob === undefined) return undefined;
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(blob);
      } catch {
        throw new CliError(
          `the Credential Manager entry for ${host} is not UTF-8 text; run "terraform logout ${host}" (or "tofu logout ${host}") and log in again`,
        );
      } finally {
        blob.fill(0);
      }
    },
    async store(host, secret) {
      const blob = Buffer.from(secret, "utf8");
      if (blob.byteLength > CRED_MAX_CREDENTIAL_BLOB_SIZE) {
        throw new CliError(
          `the credentials object is ${blob.byteLength} bytes, and Windows Credential Manager keeps at most ${CRED_MAX_CREDENTIAL_BLOB_SIZE} bytes per entry; nothing was stored`,
        );
      }
      try {
        call("write to", () => api.write(targetName(host), host, blob));
      } catch (error) {
        // Wine keeps credentials as registry keys, whose names stop at 255 characters with
        // its own prefix: a long host fails there (not on Windows) with a code that says
        // nothing of it. Name the likely cause.
        const name = targetName(host);
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
    },
    async forget(host) {
      call("delete from", () => api.delete(targetName(host)));
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
 * The hosts of `service` among `credentials`: those named `<user name>.<service>` whose
 * user name is a host in normalized form. Anything else was written by another program (or
 * by hand), and get and forget could not reach it by that name.
 */
export function hostsOf(credentials: readonly CredentialSummary[], service: string): Hostname[] {
  const hosts = new Set<Hostname>();
  for (const { targetName, userName } of credentials) {
    if (targetName !== `${userName}.${service}`) continue;
    const host = canonicalHostname(userName);
    if (host !== undefined) hosts.add(host);
  }
  return [...hosts].sort();
}

/** One line that says what failed and, where Windows tells us, what to do. */
export function credentialManagerError(action: string, error: Win32Error): CliError {
  const problem =
    error.code === ERROR_NO_SUCH_LOGON_SESSION
      ? "this logon session has no user profile loaded (as for some services, scheduled tasks and remote sessions); run it where the user is logged on, or add --backend pass to the helper's args"
      : `${error.call} failed with Windows error ${error.code}`;
  return new CliError(`could not ${action} Windows Credential Manager: ${problem}`, undefined, {
    cause: error,
  });
}
