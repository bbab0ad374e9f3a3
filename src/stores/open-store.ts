import type { GlobalOptions } from "../cli/options.ts";
import type { Io } from "../cli/io.ts";
import { KEYRING_SHA256 } from "../build-info.ts";
import { CliError } from "../errors.ts";
import { errorText } from "../quote.ts";
import { addonCacheDir } from "../native/cache-dir.ts";
import { loadKeyring } from "../native/load-keyring.ts";
import type { CredentialStore } from "./credential-store.ts";
import { createKeychainStore } from "./keychain-store.ts";
import { callLimits, DEFAULT_TIMEOUT_SECONDS } from "./keychain-calls.ts";
import { parseTimeout, TIMEOUT_VARIABLE } from "../cli/options.ts";

/** The store that the options select, with its native parts loaded only now. */
export async function openStore(options: GlobalOptions, io: Io): Promise<CredentialStore> {
  // Read first, so that a bad value is refused before anything else happens.
  const fromEnv = io.env[TIMEOUT_VARIABLE];
  const timeout =
    options.timeout ??
    (fromEnv === undefined || fromEnv === ""
      ? DEFAULT_TIMEOUT_SECONDS
      : parseTimeout(fromEnv, TIMEOUT_VARIABLE));
  if (options.backend === "pass") {
    // Loaded only when chosen: the keychain path never pays for child_process.
    const { createPassStore } = await import("./pass-store.ts");
    return createPassStore({
      service: options.service,
      env: io.env,
      timeoutMs: timeout * 1000,
      homedir: io.homedir,
      ...(io.processes === undefined ? {} : { processes: io.processes }),
    });
  }
  const cacheDir = addonCacheDir(io.env, io.platform, io.homedir);
  let keyring;
  try {
    keyring = loadKeyring(cacheDir, KEYRING_SHA256);
  } catch (error) {
    throw new CliError(addonFailure(error, cacheDir, io.platform), undefined, { cause: error });
  }
  return createKeychainStore(keyring, options.service, io.platform, callLimits(timeout), {
    async deleteAll(host) {
      // Only the Secret Service lets items share a service and account.
      if (io.platform === "win32" || io.platform === "darwin") return undefined;
      const { deleteMatchingItems } = await import("./secret-service-items.ts");
      return deleteMatchingItems(io.env, options.service, host);
    },
    warn: (line) => io.stderr.write(`${line}\n`),
  });
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
