import type { GlobalOptions } from "../cli/options.ts";
import type { Io } from "../cli/io.ts";
import { KEYRING_SHA256 } from "../build-info.ts";
import { addonCacheDir } from "../native/cache-dir.ts";
import { loadKeyring } from "../native/load-keyring.ts";
import type { CredentialStore } from "./credential-store.ts";
import { createKeychainStore } from "./keychain-store.ts";
import { createPassStore } from "./pass-store.ts";

/** The store that the options select, with its native parts loaded only now. */
export function openStore(options: GlobalOptions, io: Io): CredentialStore {
  if (options.backend === "pass") {
    return createPassStore({ service: options.service, env: io.env, homedir: io.homedir });
  }
  const keyring = loadKeyring(addonCacheDir(io.env, io.platform, io.homedir), KEYRING_SHA256);
  return createKeychainStore(keyring, options.service);
}
