import type { KeyringBinding } from "./load-keyring.ts";
import type { Hostname } from "../../protocol/hostname.ts";
import { canonicalHostname } from "../../protocol/hostname.ts";
import { CliError } from "../../errors.ts";
import { errorText } from "../../quote.ts";
import type { CredentialStore } from "../credential-store.ts";
import { callKeychain, callLimits, DEFAULT_TIMEOUT_SECONDS } from "./keychain-calls.ts";
import type { CallLimits } from "./keychain-calls.ts";

/**
 * Windows Credential Manager keeps at most this many bytes per entry
 * (CRED_MAX_CREDENTIAL_BLOB_SIZE, 5 * 512).
 */
export const WINDOWS_SECRET_LIMIT = 2560;

/**
 * The keychain of macOS or Windows through @napi-rs/keyring (Linux has its own client in
 * secret-service/): one entry per host, with the service name as the entry's service and
 * the hostname as its account, and the credentials object as its secret in UTF-8. The
 * binding's Linux option pins the Secret Service, should this store ever run there: its
 * default silently falls back to the kernel keyring, which forgets everything at reboot.
 *
 * Every call goes through the binding's asynchronous API, so that the main thread can keep
 * `limits.deadline` (shared by all calls of this store) while a call waits on D-Bus, and is
 * retried while the Secret Service is too busy to answer in time.
 */
export function createKeychainStore(
  keyring: KeyringBinding,
  service: string,
  platform: NodeJS.Platform,
  limits: CallLimits = callLimits(DEFAULT_TIMEOUT_SECONDS),
): CredentialStore {
  const options = { linux: { store: "secret-service" as const } };
  const entry = (host: Hostname) => new keyring.AsyncEntry(service, host, options);
  const attempt = <T>(action: string, operation: (signal: AbortSignal) => Promise<T>) =>
    callKeychain(operation, limits, (error) => keychainError(action, error));

  return {
    async get(host) {
      const bytes = await attempt("read from", (signal) => entry(host).getSecret(signal));
      if (bytes === null) return undefined;
      try {
        return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes));
      } catch {
        throw new CliError(
          `the keychain entry for ${host} is not UTF-8 text; run "terraform logout ${host}" (or "tofu logout ${host}") and log in again`,
        );
      }
    },
    async store(host, secret) {
      // Raw UTF-8 bytes, not setPassword: on Windows the binding stores a password as
      // UTF-16, which would halve the 2560 bytes an entry can hold.
      const bytes = Buffer.from(secret, "utf8");
      if (platform === "win32" && bytes.byteLength > WINDOWS_SECRET_LIMIT) {
        throw new CliError(
          `the credentials object is ${bytes.byteLength} bytes, and Windows Credential Manager keeps at most ${WINDOWS_SECRET_LIMIT} bytes per entry; nothing was stored`,
        );
      }
      await attempt("write to", (signal) => entry(host).setSecret(bytes, signal));
    },
    async forget(host) {
      await attempt("delete from", (signal) => entry(host).deleteCredential(signal));
    },
    async list() {
      const found = await attempt("list the entries of", (signal) =>
        keyring.findCredentialsAsync(service, undefined, signal),
      );
      const hosts = new Set<Hostname>();
      for (const { account } of found) {
        // Ours are stored in normalized form; anything else under the same service name was
        // written by another program, and get/forget could not reach it by that name.
        const host = canonicalHostname(account);
        if (host !== undefined) hosts.add(host);
      }
      return [...hosts].sort();
    },
  } satisfies CredentialStore;
}

const HEADLESS_ADVICE = "on a headless machine add --backend pass to the helper's args";

/**
 * Turns the binding's error into one paragraph that says what is wrong and what to do.
 * The binding reports failures as plain messages, so they are recognised by their text.
 */
function keychainError(action: string, error: unknown): CliError {
  const problem = describeKeychainProblem(errorText(error));
  return new CliError(`could not ${action} the keychain: ${problem}`, undefined, { cause: error });
}

/** Exported for unit tests: maps a binding message to advice. */
export function describeKeychainProblem(detail: string): string {
  // Recognised problems get one short line; the binding's own text stays in the error's
  // cause, which TF_CREDENTIALS_KEYCHAIN_DEBUG=1 prints.
  if (
    /DBUS_SESSION_BUS_ADDRESS|autolaunch|Failed to connect to (socket|address)|Connection refused/i.test(
      detail,
    )
  ) {
    return `no D-Bus session bus: log in to a desktop session or use "dbus-run-session"; ${HEADLESS_ADVICE}`;
  }
  if (
    /ServiceUnknown|not provided by any \.service files|org\.freedesktop\.secrets|NoReply|Did not receive a reply/i.test(
      detail,
    )
  ) {
    return `no Secret Service on the D-Bus session bus: start gnome-keyring, KWallet or KeePassXC; ${HEADLESS_ADVICE}`;
  }
  // macOS: errSecInteractionNotAllowed (-25308), a locked keychain where no one can answer
  // its prompt (SSH, a launchd job), and errSecAuthFailed (-25293), a prompt answered wrong
  // or cancelled. Either is an error, never "no credentials": the entry may well be there.
  if (
    /interaction is not allowed|errSecInteractionNotAllowed|-25308|passphrase you entered is not correct|errSecAuthFailed|-25293/i.test(
      detail,
    )
  ) {
    return 'the keychain is locked and could not be unlocked here: unlock it ("security unlock-keychain" in a terminal, or Keychain Access) and try again';
  }
  if (/locked|unlock|prompt/i.test(detail)) {
    return 'the keyring is locked: unlock it (Seahorse, or "gnome-keyring-daemon --unlock") and try again';
  }
  if (/no such object|collection/i.test(detail)) {
    return 'the keyring has no default collection: create one (a "login" keyring in Seahorse) and try again';
  }
  return `${detail}.`;
}
