import { pbkdf2, randomBytes } from "node:crypto";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { dbusSend, startPrivateBus, stop, type KeyringSession } from "./keyring-session.ts";
import {
  defaultCollection,
  ownsName,
  setCollectionLocked,
  spawnDaemon,
  waitForDaemon,
  type Daemon,
} from "./secret-service-daemon.ts";

/**
 * The Debian packages a KWallet session needs, for skip and error messages. kwalletd5 needs
 * QCA's OpenSSL plugin (libqca-qt5-2-plugins) for the Diffie-Hellman sessions libsecret asks
 * for; without it every secret-tool call fails with "createDLGroup failed".
 */
export const KWALLET_PACKAGES = "dbus libkf5wallet-bin libqca-qt5-2-plugins libsecret-tools";

const WALLET = "kdewallet";
const PASSWORD = "test-kwallet-password";
// kwalletd's backend (kwalletbackend.h): PBKDF2-SHA512, 50000 rounds, 56-byte salt and key.
const PBKDF2_ITERATIONS = 50_000;
const PBKDF2_KEY_SIZE = 56;
const SALT_SIZE = 56;

export interface KWalletSessionOptions {
  /**
   * false: kwalletd starts with no wallet and no kwalletrc (its defaults apply), as for a user
   * who has never opened KWallet. Its Secret Service then has no collection at all: the
   * Collections property is empty, ReadAlias("default") answers "/", the object
   * /org/freedesktop/secrets/aliases/default does not exist, and SearchItems finds nothing.
   * Only a CreateCollection prompt would make a wallet, through a dialog nobody can answer
   * here (and it rewrites kwalletrc's default wallet first). lockCollection() throws.
   */
  readonly wallet?: boolean;
}

/**
 * Starts a private `dbus-daemon` and kwalletd5 (KDE Frameworks 5.103) serving
 * org.freedesktop.secrets on it, headless (`QT_QPA_PLATFORM=offscreen`), with a private
 * kwalletrc and a password-protected blowfish wallet "kdewallet" that is the default
 * collection, unlocked at start without any dialog:
 *
 * 1. kwalletd opens a wallet without a dialog only through `pamOpen` (the PAM module's D-Bus
 *    call, which takes the PBKDF2 hash of the password), and `pamOpen` also creates a wallet
 *    that does not exist. But kwalletd's Secret Service builds its collections from the
 *    wallet files present when it starts, so a first kwalletd creates the wallet and quits.
 * 2. A second kwalletd starts with the wallet file present, opens it with `pamOpen` as the
 *    PAM module would at login, and a Secret Service Unlock (+ its prompt, which completes at
 *    once as the wallet is open and "Prompt on Open" is off) unlocks the collection.
 *
 * lockCollection() closes the wallet through the Secret Service (Service.Lock). After that a
 * client's Unlock prompt opens kwalletd's password dialog, which nobody can answer here: the
 * client waits until its own timeout, where gnome-keyring's prompt fails at once.
 *
 * With `{ wallet: false }`, one kwalletd with no wallet at all (see KWalletSessionOptions).
 */
export async function startKWalletSession(
  options: KWalletSessionOptions = {},
): Promise<KeyringSession> {
  const session = await startPrivateBus({
    prefix: "tfck-kwallet-",
    // Nothing must be activatable: a call that reached org.freedesktop.secrets before
    // kwalletd owns it would otherwise start gnome-keyring (or another kwalletd).
    withServices: false,
    packages: KWALLET_PACKAGES,
  });
  const { sandbox, env } = session;
  try {
    const tmp = path.join(sandbox, "tmp");
    mkdirSync(tmp, { mode: 0o700 });
    const daemonEnv = { ...env, TMPDIR: tmp, QT_QPA_PLATFORM: "offscreen" };
    const startDaemon = () =>
      spawnDaemon(session, "kwalletd5", [], { env: daemonEnv, packages: KWALLET_PACKAGES });
    const handle = (daemon: Daemon, collection: string | undefined): KeyringSession => ({
      env,
      home: env.HOME!,
      async lockCollection() {
        if (collection === undefined) throw new Error("this KWallet session has no wallet");
        await setCollectionLocked(daemon, env, collection, true);
      },
      killBus() {
        session.bus.kill("SIGKILL");
      },
      signalService(signal) {
        daemon.child.kill(signal);
      },
      close: session.close,
    });

    if (options.wallet === false) {
      const daemon = startDaemon();
      await waitForOwner(daemon, env, "org.freedesktop.secrets");
      // Ready once it answers; and kwalletd's own list of wallets must be empty.
      let wallets: string | undefined;
      await waitForDaemon(
        daemon,
        async () => (wallets = await kwallet(env, "wallets").catch(() => undefined)) !== undefined,
        "kwalletd5 to list its wallets",
      );
      if (wallets?.includes("string ")) {
        throw new Error(`kwalletd5 found a wallet where there should be none:\n${wallets}`);
      }
      return handle(daemon, undefined);
    }

    writeFileSync(path.join(env.XDG_CONFIG_HOME!, "kwalletrc"), KWALLETRC);
    const walletDir = path.join(env.XDG_DATA_HOME!, "kwalletd");
    mkdirSync(walletDir, { mode: 0o700 });
    // The salt kwalletd would use to hash a password typed into its dialog; pamOpen takes
    // the hash itself, so this only keeps the wallet consistent with PASSWORD.
    const salt = randomBytes(SALT_SIZE);
    writeFileSync(path.join(walletDir, `${WALLET}.salt`), salt, { mode: 0o600 });
    const hash = await promisify(pbkdf2)(
      PASSWORD,
      salt,
      PBKDF2_ITERATIONS,
      PBKDF2_KEY_SIZE,
      "sha512",
    );

    // 1. Create the wallet.
    const creator = startDaemon();
    await waitForOwner(creator, env, "org.kde.kwalletd5");
    await pamOpen(creator, env, hash);
    await kwallet(env, "close", `string:${WALLET}`, "boolean:true");
    await stop(creator.child);
    const walletFile = path.join(walletDir, `${WALLET}.kwl`);
    if (!(statSync(walletFile, { throwIfNoEntry: false })?.size ?? 0)) {
      throw new Error(`kwalletd5 did not create ${walletFile}; its output:\n${creator.output()}`);
    }

    // 2. Serve it.
    const daemon = startDaemon();
    await waitForOwner(daemon, env, "org.freedesktop.secrets");
    await pamOpen(daemon, env, hash);
    let collection = "/";
    await waitForDaemon(
      daemon,
      async () => (collection = await defaultCollection(env)) !== "/",
      `kwalletd's default collection (${WALLET})`,
    );
    // kwalletd's collection stays "locked" for the Secret Service until a client unlocks it,
    // even though pamOpen has opened the wallet: as at a desktop login, the first client's
    // Unlock prompt completes without a dialog.
    await setCollectionLocked(daemon, env, collection, false);
    return handle(daemon, collection);
  } catch (error) {
    await session.close();
    throw error;
  }
}

// Enabled, no first-use wizard, one wallet ("kdewallet") for everything, no access prompt
// for an open wallet, never closed behind the tests' back (idle, screensaver, last client),
// no wallet manager, and the Secret Service API on.
const KWALLETRC = `[Wallet]
Enabled=true
First Use=false
Use One Wallet=true
Default Wallet=${WALLET}
Local Wallet=${WALLET}
Prompt on Open=false
Close When Idle=false
Close on Screensaver=false
Leave Open=true
Launch Manager=false

[org.freedesktop.secrets]
apiEnabled=true
`;

async function waitForOwner(daemon: Daemon, env: Record<string, string>, name: string) {
  await waitForDaemon(daemon, () => ownsName(daemon, env, name), `kwalletd5 to own ${name}`);
}

/** Opens the wallet with the password's hash, creating it if there is none; no dialog. */
async function pamOpen(daemon: Daemon, env: Record<string, string>, hash: Buffer) {
  // A no-reply method: kwalletd answers nothing useful, so check the result with isOpen.
  await kwallet(env, "pamOpen", `string:${WALLET}`, `array:byte:${[...hash].join(",")}`, "int32:0");
  await waitForDaemon(
    daemon,
    async () => (await kwallet(env, "isOpen", `string:${WALLET}`)).includes("boolean true"),
    `kwalletd5 to open ${WALLET}`,
  );
}

function kwallet(env: Record<string, string>, method: string, ...args: string[]) {
  return dbusSend(env, [
    "--dest=org.kde.kwalletd5",
    "/modules/kwalletd5",
    `org.kde.KWallet.${method}`,
    ...args,
  ]);
}
