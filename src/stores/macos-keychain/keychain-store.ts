import type { KeyringBinding } from "./load-keyring.ts";
import type { Hostname } from "../../protocol/hostname.ts";
import { canonicalHostname } from "../../protocol/hostname.ts";
import { CliError } from "../../errors.ts";
import { errorText } from "../../system/quote.ts";
import type { CredentialStore } from "../../protocol/credential-store.ts";
import type { Deadline } from "../../system/deadline.ts";
import { callKeychain } from "./keychain-calls.ts";

/**
 * The macOS keychain through @napi-rs/keyring: one generic password item per host, with
 * the service name as the item's service and the hostname as its account, and the
 * credentials object as its secret in UTF-8.
 *
 * Every call goes through the binding's asynchronous API, so that the main thread can keep
 * `deadline` (shared by all calls of this store) while a call waits on a prompt.
 */
export function createKeychainStore(
  keyring: KeyringBinding,
  service: string,
  deadline: Deadline,
): CredentialStore {
  const entry = (host: Hostname) => new keyring.AsyncEntry(service, host);
  const attempt = <T>(action: string, operation: (signal: AbortSignal) => Promise<T>) =>
    callKeychain(operation, deadline, (error) => keychainError(action, error));

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
      // The text's UTF-8 bytes, exactly as get hands them back.
      const bytes = Buffer.from(secret, "utf8");
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

/**
 * Turns the binding's error into one paragraph that says what is wrong and what to do.
 * The binding reports failures as plain messages (the Security framework's own text for
 * its status code), so they are recognised by their text.
 */
function keychainError(action: string, error: unknown): CliError {
  const problem = describeKeychainProblem(errorText(error));
  return new CliError(`could not ${action} the keychain: ${problem}`, undefined, { cause: error });
}

/** Exported for unit tests: maps a binding message to advice. */
export function describeKeychainProblem(detail: string): string {
  // Recognised problems get one short line; the binding's own text stays in the error's
  // cause, which TF_CREDENTIALS_KEYCHAIN_DEBUG=1 prints.
  // Each is an error, never "no credentials": the entry may well be there.
  // errSecInteractionNotAllowed (-25308): locked, and no prompt can be shown (SSH, launchd).
  if (/interaction is not allowed|errSecInteractionNotAllowed|-25308/i.test(detail)) {
    return 'the keychain is locked and cannot ask for its password here (no one at the screen, or an SSH session): unlock it with "security unlock-keychain" and try again';
  }
  // errSecUserCanceled (-128), errSecAuthFailed (-25293): the prompt was refused.
  if (
    /canceled|cancelled|errSecUserCanceled|-128\b|passphrase you entered is not correct|errSecAuthFailed|-25293/i.test(
      detail,
    )
  ) {
    return 'access was refused at the keychain prompt: run the command again and choose "Always Allow"';
  }
  // errSecNoSuchKeychain (-25294), errSecNotAvailable (-25291), errSecNoDefaultKeychain (-25307).
  if (/keychain could not be found|no keychain is available|-2529[14]|-25307/i.test(detail)) {
    return 'there is no default keychain: open Keychain Access and make the "login" keychain the default, then try again';
  }
  return `${detail}.`;
}
