import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startPrivateBus, type KeyringSession } from "./keyring-session.ts";
import {
  collectionLocked,
  defaultCollection,
  ownsName,
  setCollectionLocked,
  spawnDaemon,
  waitForDaemon,
} from "./secret-service-daemon.ts";

/** The Debian packages a KeePassXC session needs, for skip and error messages. */
export const KEEPASSXC_PACKAGES = "dbus keepassxc libsecret-tools";

const PASSWORD = "test-keepassxc-password";
/** The database file; KeePassXC names the collection after it: …/collection/Passwords. */
const DATABASE = "Passwords.kdbx";

/**
 * Starts a private `dbus-daemon` and KeePassXC (2.7) with its Secret Service integration on
 * that bus only, headless (`QT_QPA_PLATFORM=offscreen`), with a private config and a new
 * database whose group "Secret Service" is exposed as the collection. The database is opened
 * with its password on stdin (`--pw-stdin`), so the collection is unlocked from the start;
 * access and delete confirmations, notifications, update checks, tray, auto-lock and the
 * unlock dialog before a search of a locked database are all off, so no call waits on a dialog
 * while the database is unlocked.
 *
 * Unlike gnome-keyring, KeePassXC hides a locked collection's items from SearchItems (neither
 * unlocked nor locked results), and CreateItem or Unlock on it opens an unlock dialog that
 * nobody can answer here: a client that runs the prompt waits until its own timeout.
 */
export async function startKeePassXcSession(): Promise<KeyringSession> {
  const session = await startPrivateBus({
    prefix: "tfck-keepassxc-",
    // Nothing must be activatable: a call that reached org.freedesktop.secrets before
    // KeePassXC owns it would otherwise start gnome-keyring or kwalletd.
    withServices: false,
    packages: KEEPASSXC_PACKAGES,
  });
  const { sandbox, env } = session;
  let collection = "/";
  try {
    const configDir = path.join(env.XDG_CONFIG_HOME!, "keepassxc");
    mkdirSync(configDir, { mode: 0o700 });
    writeFileSync(path.join(configDir, "keepassxc.ini"), CONFIG);
    // The single-instance lock file and socket go to TMPDIR: keep them in the sandbox, so
    // that sessions (and a desktop KeePassXC) never see each other.
    const tmp = path.join(sandbox, "tmp");
    mkdirSync(tmp, { mode: 0o700 });
    const daemonEnv = { ...env, TMPDIR: tmp, QT_QPA_PLATFORM: "offscreen" };

    const database = path.join(sandbox, DATABASE);
    const xml = path.join(sandbox, "database.xml");
    writeFileSync(xml, databaseXml());
    // `import` asks for the new password twice; it keeps KeePassXC's defaults for a new
    // database (KDBX 4, AES-KDF), which open in milliseconds.
    await run("keepassxc-cli", ["import", "-q", "-p", xml, database], {
      env: daemonEnv,
      input: `${PASSWORD}\n${PASSWORD}\n`,
    });

    const daemon = spawnDaemon(session, "keepassxc", ["--pw-stdin", database], {
      env: daemonEnv,
      packages: KEEPASSXC_PACKAGES,
      input: `${PASSWORD}\n`,
    });
    await waitForDaemon(
      daemon,
      () => ownsName(daemon, env, "org.freedesktop.secrets"),
      "KeePassXC to own org.freedesktop.secrets",
    );
    await waitForDaemon(
      daemon,
      async () => {
        collection = await defaultCollection(env);
        return collection !== "/" && (await collectionLocked(env, collection)) === false;
      },
      "KeePassXC's default collection to be open and unlocked",
    );

    return {
      env,
      home: env.HOME!,
      async lockCollection() {
        // KeePassXC answers Lock with a prompt and locks the database when the prompt runs.
        await setCollectionLocked(daemon, env, collection, true);
      },
      killBus() {
        session.bus.kill("SIGKILL");
      },
      signalService(signal) {
        daemon.child.kill(signal);
      },
      async close() {
        // SIGKILL, not SIGTERM: KeePassXC acts on the first quit signal only, and does not quit
        // if it comes while the database is being saved (it autosaves after each change;
        // closing goes through DatabaseWidget::lock(), which refuses then), so a SIGTERM at
        // the wrong moment cost 2 s until stop()'s SIGKILL. Nothing of it outlives the
        // sandbox that close() removes.
        daemon.child.kill("SIGKILL");
        await session.close();
      },
    };
  } catch (error) {
    await session.close();
    throw error;
  }
}

const CONFIG = `[General]
ConfigVersion=2
SingleInstance=false
RememberLastDatabases=false
RememberLastKeyFiles=false
OpenPreviousDatabasesOnStartup=false
AutoSaveAfterEveryChange=true
AutoSaveOnExit=true
AutoReloadOnChange=false
BackupBeforeSave=false
UpdateCheckMessageShown=true

[GUI]
CheckForUpdates=false
ShowTrayIcon=false
MinimizeToTray=false
MinimizeOnStartup=false
MinimizeOnClose=false
ShowExpiredEntriesOnDatabaseUnlock=false

[Security]
LockDatabaseIdle=false
LockDatabaseMinimize=false
LockDatabaseScreenLock=false
ClearClipboard=false

[Browser]
Enabled=false

[SSHAgent]
Enabled=false

[FdoSecrets]
Enabled=true
ShowNotification=false
ConfirmAccessItem=false
ConfirmDeleteItem=false
UnlockBeforeSearch=false
`;

/**
 * A KeePass 2 XML export that `keepassxc-cli import` turns into the database: a root group
 * and the group "Secret Service", which the database's custom data FDO_SECRETS_EXPOSED_GROUP
 * exposes. KeePassXC writes that value with QUuid::toString() ("{…}", lower case); the XML
 * holds group UUIDs as base64 of their 16 bytes.
 */
function databaseXml(): string {
  const exposed = randomUUID();
  const base64 = (uuid: string) => Buffer.from(uuid.replace(/-/g, ""), "hex").toString("base64");
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<KeePassFile>
  <Meta>
    <Generator>terraform-credentials-keychain tests</Generator>
    <DatabaseName>Passwords</DatabaseName>
    <CustomData>
      <Item>
        <Key>FDO_SECRETS_EXPOSED_GROUP</Key>
        <Value>{${exposed}}</Value>
      </Item>
    </CustomData>
  </Meta>
  <Root>
    <Group>
      <UUID>${base64(randomUUID())}</UUID>
      <Name>Passwords</Name>
      <Group>
        <UUID>${base64(exposed)}</UUID>
        <Name>Secret Service</Name>
      </Group>
    </Group>
  </Root>
</KeePassFile>
`;
}

function run(
  file: string,
  args: readonly string[],
  options: { env: Record<string, string>; input: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${file} could not start (apt-get install ${KEEPASSXC_PACKAGES}): ${error.message}`,
        ),
      );
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${file} ${args.join(" ")} failed (${signal ?? code}): ${output}`));
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input);
  });
}
