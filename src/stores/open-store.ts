import type { GlobalOptions } from "../system/options.ts";
import type { Io } from "../system/io.ts";
import { callLimits } from "./call-limits.ts";
import type { CredentialStore, StoreContext } from "./credential-store.ts";
import { timeoutSeconds } from "../system/options.ts";

/**
 * The store that the options select. Each is loaded only when chosen: a keychain call
 * never pays for child_process, nor one platform's store for another's. The store calls
 * `beforeSecret` once a secret is about to be read (StoreContext).
 */
export async function openStore(
  options: GlobalOptions,
  io: Io,
  beforeSecret: () => Promise<void>,
): Promise<CredentialStore> {
  // Read first, so that a bad value is refused before anything else happens.
  const limits = callLimits(timeoutSeconds(options, io.env));
  const context: StoreContext = { service: options.service, io, limits, beforeSecret };
  // One line per store; Linux and the BSDs (whose desktops run the same Secret Service) last.
  if (options.backend === "pass") return (await import("./pass/open.ts")).openPassStore(context);
  if (options.backend === "wincred")
    return (await import("./wincred/open.ts")).openWincredStore(context);
  if (io.platform === "darwin")
    return (await import("./macos-keychain/open.ts")).openKeychainStore(context);
  if (io.platform === "win32")
    return (await import("./credential-manager/open.ts")).openCredentialManagerStore(context);
  return (await import("./secret-service/open.ts")).openSecretServiceStore(context);
}
