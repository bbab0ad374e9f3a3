import type { GlobalOptions } from "../cli/options.ts";
import type { Io } from "../cli/io.ts";
import type { CredentialStore } from "./credential-store.ts";
import { callLimits } from "./macos-keychain/keychain-calls.ts";
import { timeoutSeconds } from "../cli/options.ts";

/** The store that the options select, with its native parts loaded only now. */
export async function openStore(options: GlobalOptions, io: Io): Promise<CredentialStore> {
  // Read first, so that a bad value is refused before anything else happens.
  const timeout = timeoutSeconds(options, io.env);
  if (options.backend === "pass") {
    // Loaded only when chosen: the keychain path never pays for child_process.
    const { createPassStore } = await import("./pass/pass-store.ts");
    return createPassStore({
      service: options.service,
      env: io.env,
      timeoutMs: timeout * 1000,
      homedir: io.homedir,
      ...(io.processes === undefined ? {} : { processes: io.processes }),
    });
  }
  const limits = callLimits(timeout);
  if (io.platform !== "darwin" && io.platform !== "win32") {
    // Our own D-Bus client: no native code on Linux (and the BSDs, whose desktops run the
    // same Secret Service).
    const { createSecretServiceStore } = await import("./secret-service/store.ts");
    return createSecretServiceStore({
      service: options.service,
      env: io.env,
      limits,
      warn: (line) => io.stderr.write(`${line}\n`),
    });
  }
  if (io.platform === "win32") {
    // advapi32 through the runtime's FFI: no native code of ours.
    const { openCredentialManagerStore } = await import("./credential-manager/open.ts");
    return openCredentialManagerStore(options.service, limits);
  }
  // macOS: the @napi-rs/keyring addon, loaded from its cache only now.
  const { openBindingStore } = await import("./macos-keychain/open.ts");
  return openBindingStore(options.service, io, limits);
}
