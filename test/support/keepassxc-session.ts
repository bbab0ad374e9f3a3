import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { startPrivateBus, stop, type KeyringSession, type PrivateBus } from "./keyring-session.ts";
import {
  answersSearch,
  collectionLocked,
  defaultCollection,
  ownsName,
  setCollectionLocked,
  spawnDaemon,
  waitForDaemon,
  type Daemon,
} from "./secret-service-daemon.ts";
import { PATIENCE_MS } from "./timing.ts";

const execFileAsync = promisify(execFile);

/** The Debian packages a KeePassXC session needs, for skip and error messages. */
export const KEEPASSXC_PACKAGES = "dbus keepassxc libsecret-tools";

const PASSWORD = "test-keepassxc-password";
/** The database file; KeePassXC names the collection after it: …/collection/Passwords. */
const DATABASE = "Passwords.kdbx";

export interface KeePassXcSessionOptions {
  /**
   * false: the database exposes no group, as when the Secret Service integration is on but
   * no group was chosen in the database's settings: KeePassXC owns org.freedesktop.secrets
   * with no collection at all, and ReadAlias("default") answers "/".
   */
  readonly exposed?: boolean;
}

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
 *
 * With `exposed: false`, the database exposes no group: KeePassXC starts without it, and it is
 * opened over KeePassXC's own D-Bus interface (see openWithNoExposedGroup for why).
 */
export async function startKeePassXcSession(
  options: KeePassXcSessionOptions = {},
): Promise<KeyringSession> {
  const exposed = options.exposed !== false;
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
    writeFileSync(xml, databaseXml(exposed));
    // `import` asks for the new password twice; it keeps KeePassXC's defaults for a new
    // database (KDBX 4, AES-KDF), which open in milliseconds.
    await run("keepassxc-cli", ["import", "-q", "-p", xml, database], {
      env: daemonEnv,
      input: `${PASSWORD}\n${PASSWORD}\n`,
    });

    const daemon = spawnDaemon(session, "keepassxc", exposed ? ["--pw-stdin", database] : [], {
      env: daemonEnv,
      packages: KEEPASSXC_PACKAGES,
      input: exposed ? `${PASSWORD}\n` : "",
    });
    await waitForDaemon(
      daemon,
      () => ownsName(daemon, env, "org.freedesktop.secrets"),
      "KeePassXC to own org.freedesktop.secrets",
    );
    if (exposed) {
      await waitForDaemon(
        daemon,
        async () => {
          collection = await defaultCollection(env);
          return collection !== "/" && (await collectionLocked(env, collection)) === false;
        },
        "KeePassXC's default collection to be open and unlocked",
      );
      // Then until it answers a search, as the first call of a test will be.
      await waitForDaemon(daemon, () => answersSearch(env), "KeePassXC to answer SearchItems");
    } else {
      await openWithNoExposedGroup(session, daemon, database);
    }

    return {
      env,
      home: env.HOME!,
      async lockCollection() {
        if (!exposed) throw new Error("this KeePassXC session has no collection to lock");
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

/** KeePassXC's own D-Bus interface (src/gui/org.keepassxc.KeePassXC.MainWindow.xml). */
const MAIN_WINDOW = "org.keepassxc.KeePassXC.MainWindow";

/**
 * Opens `database`, which exposes no group, in a KeePassXC started without one, and returns
 * once KeePassXC has unlocked it and given up its collection.
 *
 * Waiting for "the name is owned and the default alias is /" is not enough: "/" is also the
 * answer before a database is open, and while one opens the alias names its collection,
 * locked. KeePassXC 2.7.4 (src/fdosecrets/objects/Service.cpp, onDatabaseTabOpened) makes a
 * collection for every database tab and aliases it "default" while the database is still
 * locked; only once it is unlocked does Collection::populateContents find no exposed group
 * and remove the collection (CollectionDeleted), which leaves the alias unset. Opened from
 * the command line (`--pw-stdin`), the unlock runs after the name is owned, and D-Bus calls
 * are answered in between (DatabaseOpenWidget::openDatabase calls processEvents()).
 *
 * So the database is opened through MainWindow.openDatabase, whose reply comes after the
 * synchronous open and unlock, with a dbus-monitor listening for the CollectionDeleted that
 * proves the unlock happened (with a wrong password, the locked collection would stay).
 */
async function openWithNoExposedGroup(
  session: PrivateBus,
  daemon: Daemon,
  database: string,
): Promise<void> {
  const { env } = session;
  // Registered in MainWindow's constructor, before the Secret Service: checked all the same.
  await waitForDaemon(
    daemon,
    () => ownsName(daemon, env, MAIN_WINDOW),
    `KeePassXC to own ${MAIN_WINDOW}`,
  );
  const monitor = spawnDaemon(
    session,
    "dbus-monitor",
    [
      "--session",
      "type='signal',interface='org.freedesktop.Secret.Service',member='CollectionDeleted'",
    ],
    { env, packages: KEEPASSXC_PACKAGES },
  );
  try {
    // Once it is a monitor, the bus takes its unique name back: NameLost is its first line
    // after NameAcquired, whatever the filter.
    await waitForDaemon(
      monitor,
      async () => monitor.output().includes("member=NameLost"),
      "dbus-monitor to start",
    );
    await execFileAsync(
      "dbus-send",
      [
        "--session",
        "--print-reply",
        `--dest=${MAIN_WINDOW}`,
        "/keepassxc",
        `${MAIN_WINDOW}.openDatabase`,
        `string:${database}`,
        `string:${PASSWORD}`,
      ],
      { env, timeout: PATIENCE_MS },
    );
    await waitForDaemon(
      daemon,
      async () => monitor.output().includes("member=CollectionDeleted"),
      "KeePassXC to unlock the database and drop its collection (no exposed group)",
    );
    const alias = await defaultCollection(env);
    if (alias !== "/") {
      throw new Error(`KeePassXC has a default collection (${alias}) with no group exposed`);
    }
  } finally {
    await stop(monitor.child);
  }
}

/**
 * A KeePass 2 XML export that `keepassxc-cli import` turns into the database: a root group
 * and the group "Secret Service", which the database's custom data FDO_SECRETS_EXPOSED_GROUP
 * exposes (unless `exposed` is false: then no group is). KeePassXC writes that value with
 * QUuid::toString() ("{…}", lower case); the XML holds group UUIDs as base64 of their 16 bytes.
 */
function databaseXml(exposed: boolean): string {
  const group = randomUUID();
  const base64 = (uuid: string) => Buffer.from(uuid.replace(/-/g, ""), "hex").toString("base64");
  const customData = `
    <CustomData>
      <Item>
        <Key>FDO_SECRETS_EXPOSED_GROUP</Key>
        <Value>{${group}}</Value>
      </Item>
    </CustomData>`;
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<KeePassFile>
  <Meta>
    <Generator>terraform-credentials-keychain tests</Generator>
    <DatabaseName>Passwords</DatabaseName>${exposed ? customData : ""}
  </Meta>
  <Root>
    <Group>
      <UUID>${base64(randomUUID())}</UUID>
      <Name>Passwords</Name>
      <Group>
        <UUID>${base64(group)}</UUID>
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
