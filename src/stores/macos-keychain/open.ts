import type { Io } from "../../cli/io.ts";
import { KEYRING_SHA256 } from "../../build-info.ts";
import { CliError } from "../../errors.ts";
import { errorText } from "../../quote.ts";
import { addonCacheDir } from "./cache-dir.ts";
import { loadKeyring } from "./load-keyring.ts";
import type { CredentialStore } from "../credential-store.ts";
import type { CallLimits } from "./keychain-calls.ts";
import { createKeychainStore } from "./keychain-store.ts";

/** The keychain of macOS through the @napi-rs/keyring addon. */
export function openBindingStore(service: string, io: Io, limits: CallLimits): CredentialStore {
  const cacheDir = addonCacheDir(io.env, io.platform, io.homedir);
  let keyring;
  try {
    keyring = loadKeyring(cacheDir, KEYRING_SHA256);
  } catch (error) {
    throw new CliError(addonFailure(error, cacheDir), undefined, { cause: error });
  }
  return createKeychainStore(keyring, service, io.platform, limits);
}

/**
 * What to do when the addon cannot be loaded. A file-system error (it has a syscall) is
 * about the cache directory; anything else is the loader's.
 */
function addonFailure(error: unknown, cacheDir: string): string {
  const text = errorText(error);
  if (typeof (error as { syscall?: unknown } | undefined)?.syscall === "string") {
    return `could not load the keychain addon from ${cacheDir}: ${text}; make that directory writable (or set XDG_CACHE_HOME to one that is)`;
  }
  return `could not load the keychain addon from ${cacheDir}: ${text}`;
}
