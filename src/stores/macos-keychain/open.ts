import { KEYRING_SHA256 } from "../../system/build-info.ts";
import { CliError } from "../../errors.ts";
import { errorText } from "../../system/quote.ts";
import { addonCacheDir } from "./cache-dir.ts";
import { loadKeyring } from "./load-keyring.ts";
import type { CredentialStore } from "../../protocol/credential-store.ts";
import { protectingGets, type StoreContext } from "../store-description.ts";
import { createKeychainStore } from "./keychain-store.ts";

/** The keychain of macOS through the @napi-rs/keyring addon, loaded from its cache only now. */
export function openKeychainStore({
  service,
  io,
  deadline,
  beforeSecret,
}: StoreContext): CredentialStore {
  const cacheDir = addonCacheDir(io.homedir);
  let keyring;
  try {
    keyring = loadKeyring(cacheDir, KEYRING_SHA256);
  } catch (error) {
    throw new CliError(addonFailure(error, cacheDir), undefined, { cause: error });
  }
  return protectingGets(createKeychainStore(keyring, service, deadline), beforeSecret);
}

/**
 * What to do when the addon cannot be loaded. A file-system error (it has a syscall) is
 * about the cache directory; anything else is the loader's.
 */
function addonFailure(error: unknown, cacheDir: string): string {
  const text = errorText(error);
  if (typeof (error as { syscall?: unknown } | undefined)?.syscall === "string") {
    return `could not load the keychain addon from ${cacheDir}: ${text}; make that directory writable`;
  }
  return `could not load the keychain addon from ${cacheDir}: ${text}`;
}
