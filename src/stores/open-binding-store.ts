import type { Io } from "../cli/io.ts";
import { KEYRING_SHA256 } from "../build-info.ts";
import { CliError } from "../errors.ts";
import { errorText } from "../quote.ts";
import { addonCacheDir } from "../native/cache-dir.ts";
import { loadKeyring } from "../native/load-keyring.ts";
import type { CredentialStore } from "./credential-store.ts";
import type { CallLimits } from "./keychain-calls.ts";
import { createKeychainStore } from "./keychain-store.ts";

/** The keychain of macOS or Windows through the @napi-rs/keyring addon. */
export function openBindingStore(service: string, io: Io, limits: CallLimits): CredentialStore {
  const cacheDir = addonCacheDir(io.env, io.platform, io.homedir);
  let keyring;
  try {
    keyring = loadKeyring(cacheDir, KEYRING_SHA256);
  } catch (error) {
    throw new CliError(addonFailure(error, cacheDir, io.platform), undefined, { cause: error });
  }
  return createKeychainStore(keyring, service, io.platform, limits);
}

/**
 * What to do when the addon cannot be loaded. A file-system error (it has a syscall) is
 * about the cache directory. Anything else is the loader's: on Windows that is almost
 * always the Visual C++ runtime the addon links against (VCRUNTIME140.dll), which Bun
 * does not bring and a fresh Windows may lack.
 */
function addonFailure(error: unknown, cacheDir: string, platform: NodeJS.Platform): string {
  const text = errorText(error);
  if (typeof (error as { syscall?: unknown } | undefined)?.syscall === "string") {
    return `could not load the keychain addon from ${cacheDir}: ${text}; make that directory writable (or set XDG_CACHE_HOME to one that is)`;
  }
  if (platform === "win32") {
    return `could not load the keychain addon: ${text}; install the Microsoft Visual C++ Redistributable (x64), which provides VCRUNTIME140.dll`;
  }
  return `could not load the keychain addon from ${cacheDir}: ${text}`;
}
