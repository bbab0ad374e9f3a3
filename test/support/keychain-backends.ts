import { mkdirSync, mkdtempSync, rmSync, symlinkSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runHelper } from "./helper-process.ts";
import type { ProtocolBackend } from "./protocol-suite.ts";
import { SECRET_SERVICE_PROVIDERS } from "./secret-service-providers.ts";

/** A keychain the built helper uses on this OS by default, started for one test file. */
export interface KeychainBackend {
  readonly name: string;
  start(): Promise<ProtocolBackend>;
}

/**
 * The keychains every keychain suite runs against on this OS: the three Secret Service
 * providers on Linux (each in a private session), the login Keychain on macOS and Credential
 * Manager on Windows, which src/stores/registry.ts picks there.
 */
export const KEYCHAIN_BACKENDS: readonly KeychainBackend[] =
  process.platform === "darwin"
    ? [{ name: "the macOS Keychain", start: startNativeStore }]
    : process.platform === "win32"
      ? [{ name: "Windows Credential Manager", start: startNativeStore }]
      : SECRET_SERVICE_PROVIDERS.map((provider) => ({
          name: `the Secret Service (${provider.name})`,
          start: async () => {
            const session = await provider.start();
            return { env: session.env, args: [], close: () => session.close() };
          },
        }));

/** This OS's default keychain, for suites that need one. */
export function startDefaultKeychain(): Promise<ProtocolBackend> {
  return KEYCHAIN_BACKENDS[0]!.start();
}

/**
 * The SKIP reason of a suite that needs Linux (a Secret Service provider, pass, /dev/full),
 * or false on Linux, where it runs.
 */
export function linuxOnly(what: string): string | false {
  return process.platform === "linux"
    ? false
    : `SKIP: ${what} runs on Linux only; here the suites run against ${KEYCHAIN_BACKENDS[0]!.name}`;
}

/** A temporary HOME for the native stores, and the environment that points there. */
export interface NativeSandbox {
  readonly env: Record<string, string>;
  readonly home: string;
  /** Deletes the temporary directory. */
  readonly remove: () => void;
}

/**
 * This process's environment without the caller's Terraform or helper settings, with HOME
 * (USERPROFILE, APPDATA, LOCALAPPDATA on Windows) a temporary directory, so that install and
 * the addon cache touch nothing of the user's. On macOS that HOME links the real
 * ~/Library/Keychains and the keychain preferences, because the Security framework finds
 * the keychains through HOME.
 */
export function nativeSandbox(): NativeSandbox {
  const sandbox = mkdtempSync(path.join(os.tmpdir(), "tfck-native-"));
  const home = path.join(sandbox, "home");
  mkdirSync(home);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    // Nothing of the caller's Terraform or helper settings reaches the helper.
    if (value !== undefined && !/^(TF_|TFCK_)/i.test(name)) env[name] = value;
  }
  if (process.platform === "darwin") {
    const realHome = os.homedir();
    mkdirSync(path.join(home, "Library/Preferences"), { recursive: true });
    symlinkSync(path.join(realHome, "Library/Keychains"), path.join(home, "Library/Keychains"));
    const preferences = "Library/Preferences/com.apple.security.plist";
    if (existsSync(path.join(realHome, preferences))) {
      symlinkSync(path.join(realHome, preferences), path.join(home, preferences));
    }
    env.HOME = home;
  } else {
    for (const dir of ["AppData/Roaming", "AppData/Local"]) {
      mkdirSync(path.join(home, dir), { recursive: true });
    }
    Object.assign(env, {
      HOME: home,
      USERPROFILE: home,
      APPDATA: path.join(home, "AppData", "Roaming"),
      LOCALAPPDATA: path.join(home, "AppData", "Local"),
    });
  }
  return { env, home, remove: () => rmSync(sandbox, { recursive: true, force: true }) };
}

/**
 * The OS's own store, which a test cannot start privately: entries go under a service name
 * of their own (`--service`, before the verb as Terraform puts args), which close() empties,
 * in a `nativeSandbox()`.
 */
async function startNativeStore(): Promise<ProtocolBackend> {
  const { env, remove } = nativeSandbox();
  const args = ["--service", `tfck-test-${process.pid}-${Date.now()}`];
  return {
    env,
    args,
    close: async () => {
      // Best effort: what a failed list leaves is under a service name no one else uses.
      await forgetEveryHost(args, env);
      remove();
    },
  };
}

/** Forgets every host the built helper lists with `args` (e.g. `--service NAME`); best effort. */
export async function forgetEveryHost(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<void> {
  const listed = await runHelper([...args, "list", "--json"], { env });
  if (listed.code !== 0) return;
  for (const host of JSON.parse(listed.stdout) as string[]) {
    await runHelper([...args, "forget", host], { env });
  }
}
