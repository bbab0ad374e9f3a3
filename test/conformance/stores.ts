/**
 * The stores CI starts for the conformance table, each with what it can show. Where one
 * lacks a capability, the reason is here, beside it.
 */
import { spawnSync } from "node:child_process";
import { assertSilentSuccess, type ProtocolBackend } from "../support/protocol-suite.ts";
import type { KeyringSession } from "../support/keyring-session.ts";
import { startKeyringSession } from "../support/keyring-session.ts";
import { startKeePassXcSession } from "../support/keepassxc-session.ts";
import { startDefaultKeychain } from "../support/keychain-backends.ts";
import { startKWalletSession } from "../support/kwallet-session.ts";
import { startTemporaryKeychain } from "../support/macos-keychain-session.ts";
import { startPassSession } from "../support/pass-session.ts";
import { addItem } from "../support/secret-service-items.ts";
import { buildWindowsHelper, startWinePrefix } from "../support/wine-prefix.ts";
import { REAL_WSL, startWslUnderTest } from "../support/wsl-stand-in.ts";
import type { ConformanceStore, StoreUnderTest } from "./harness.ts";
import type { Capability } from "./rules.ts";
import { PATIENCE_MS } from "../support/timing.ts";

/**
 * A Secret Service provider in private D-Bus sessions: one for the table, and one that
 * `lock` locks, for the rows that meet it locked. It shows every capability.
 */
function secretServiceStore(
  name: string,
  startSession: () => Promise<KeyringSession>,
  lock: (session: KeyringSession) => Promise<void>,
  lockHidesEntries = true,
): ConformanceStore {
  const backendOf = (session: KeyringSession): ProtocolBackend => ({
    env: session.env,
    args: [],
    close: () => session.close(),
  });
  return {
    name,
    capabilities: new Set<Capability>([
      "locked-get",
      "locked-forget",
      ...(lockHidesEntries ? (["locked-search"] as const) : []),
      "unreachable",
      "foreign-items",
      "bounded-stdin",
    ]),
    async start(): Promise<StoreUnderTest> {
      const session = await startSession();
      return {
        ...backendOf(session),
        // A bus address where no bus listens.
        unreachableEnv: {
          ...session.env,
          DBUS_SESSION_BUS_ADDRESS: `unix:path=${session.home}/no-bus-here`,
        },
        addForeignItem: (host, secret) =>
          addItem(
            session.env,
            { service: "terraform-credentials", username: host, origin: "another program" },
            secret,
          ),
        async startLocked(_host, _object, store) {
          const lockedSession = await startSession();
          try {
            assertSilentSuccess(await store(backendOf(lockedSession)));
            await lock(lockedSession);
            return backendOf(lockedSession);
          } catch (error) {
            await lockedSession.close();
            throw error;
          }
        },
      };
    },
  };
}

/**
 * gnome-keyring, locked as after a reboot: restarted without --unlock, loaded from disk. Not
 * "locked-search": its search matches a locked item's hashed attributes and lists the item as
 * locked (the locked-get row finds the stored host that way), so a host it does not find is
 * not there (test/integration/locked-keyring.test.ts).
 */
export const GNOME_KEYRING = secretServiceStore(
  "gnome-keyring",
  () => startKeyringSession(),
  async (session) => {
    if (session.restartLocked === undefined) throw new Error("no restartLocked");
    await session.restartLocked();
  },
  false,
);

/** KeePassXC, its database locked (which hides its items from a search). */
export const KEEPASSXC = secretServiceStore(
  "KeePassXC",
  () => startKeePassXcSession(),
  (session) => session.lockCollection(),
);

/** KWallet, its wallet closed. */
export const KWALLET = secretServiceStore(
  "KWallet",
  () => startKWalletSession(),
  (session) => session.lockCollection(),
);

/**
 * pass with real gpg. Locked: a key whose passphrase no agent holds, so nothing decrypts.
 * Not "locked-forget": deleting an entry's file needs no key, so forget succeeds there for
 * certain. Not "locked-search": whether an entry is there is a file's existence, which a
 * key without its passphrase does not hide. Not "foreign-items": an entry is one file per host, no other program's beside it.
 */
export const PASS: ConformanceStore = {
  name: "pass",
  capabilities: new Set<Capability>(["locked-get", "unreachable", "bounded-stdin"]),
  async start(): Promise<StoreUnderTest> {
    const session = await startPassSession();
    const args = ["--backend", "pass"];
    return {
      env: session.env,
      args,
      close: () => session.close(),
      // No pass (nor gpg) on PATH.
      unreachableEnv: { ...session.env, PATH: `${session.home}/no-programs-here` },
      async startLocked(host, object) {
        const locked = await startPassSession({ passphrase: "not cached anywhere" });
        try {
          // Written by pass itself: store refuses a key it could not read back. Encrypting
          // needs only the public key, so pass alone stores it, and a get cannot decrypt it.
          const inserted = spawnSync(
            "pass",
            [
              "insert",
              "--multiline",
              "--force",
              `terraform-credentials/terraform-credentials/${host}`,
            ],
            { env: locked.env, input: `${object}\n`, encoding: "utf8", timeout: PATIENCE_MS },
          );
          if (inserted.status !== 0) throw new Error(`pass insert failed: ${inserted.stderr}`);
          return { env: locked.env, args, close: () => locked.close() };
        } catch (error) {
          await locked.close();
          throw error;
        }
      },
    };
  },
};

/**
 * The win-x64 build under Wine, against Wine's Credential Manager. Of the locked and
 * unreachable states and other programs' entries it shows none: Credential Manager keeps a
 * user's generic credentials open while the user is logged in (no locked state), is part of
 * Windows (never out of reach), and keeps one entry per target name (none beside ours).
 */
export const WINDOWS_UNDER_WINE: ConformanceStore = {
  name: "Windows Credential Manager (win-x64 under Wine)",
  capabilities: new Set<Capability>(["bounded-stdin"]),
  async start(): Promise<StoreUnderTest> {
    const windowsBuild = buildWindowsHelper();
    const wine = await startWinePrefix();
    return {
      env: wine.env,
      args: [],
      command: wine.command(windowsBuild),
      close: () => wine.close(),
    };
  },
};

/**
 * --backend wincred: the host's build in WSL, whose Windows side has the Windows helper
 * installed: on a stand-in (test/support/wsl-stand-in.ts), Wine with the win-x64 build
 * installed by its own `install`; in the workflow's WSL job, the real one. Unreachable: WSL
 * interop switched off. Not locked, and no foreign items: those are Credential Manager's
 * own, which WINDOWS_UNDER_WINE describes.
 */
export const WSL_WINCRED: ConformanceStore = {
  name: `--backend wincred (${REAL_WSL ? "WSL" : "WSL stand-in, Windows side under Wine"})`,
  capabilities: new Set<Capability>(["bounded-stdin", "unreachable"]),
  async start(): Promise<StoreUnderTest> {
    const wsl = await startWslUnderTest();
    return {
      env: wsl.env,
      args: ["--backend", "wincred"],
      unreachableEnv: wsl.interopOffEnv,
      close: () => wsl.close(),
    };
  },
};

/**
 * The macOS Keychain: a temporary keychain, made the user's default for the run, so the
 * helper runs with no args, on its default service, as an installed one does. Shows only
 * "bounded-stdin". Not "locked-get" nor "locked-forget": a locked keychain asks for its
 * password in a dialog where a window server runs (as on GitHub's runners), which no test
 * answers, so what the helper meets there is the deadline, not the lock. Not "unreachable":
 * the Keychain is part of macOS. Not "foreign-items": one generic password per service and
 * account, none beside ours.
 */
export const MACOS_KEYCHAIN: ConformanceStore = {
  name: "the macOS Keychain (a temporary keychain)",
  capabilities: new Set<Capability>(["bounded-stdin"]),
  async start(): Promise<StoreUnderTest> {
    const keychain = await startTemporaryKeychain();
    return { env: keychain.env, args: [], close: () => keychain.close() };
  },
};

/**
 * Windows Credential Manager itself, on a Windows runner: the user's own store, so entries
 * go under a service name of their own, which close() empties. The same capabilities as
 * under Wine, for the same reasons.
 */
export const WINDOWS_CREDENTIAL_MANAGER: ConformanceStore = {
  name: "Windows Credential Manager",
  capabilities: WINDOWS_UNDER_WINE.capabilities,
  start: startDefaultKeychain,
};
