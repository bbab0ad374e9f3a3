import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { PATIENCE_MS } from "./timing.ts";

const execFileAsync = promisify(execFile);

/** A private D-Bus session with (optionally) a real, unlocked gnome-keyring. */
export interface KeyringSession {
  /** Environment for processes that should use this session: private HOME, XDG dirs, bus. */
  readonly env: Record<string, string>;
  /** The private HOME. */
  readonly home: string;
  /** Locks the login collection, as a screen lock or `secret-tool lock` would. */
  lockCollection(): Promise<void>;
  /** Kills the bus daemon (SIGKILL), leaving a dead socket behind. */
  killBus(): void;
  /**
   * Sends `signal` to the Secret Service's daemon: SIGSTOP makes a service that hangs
   * (SIGCONT ends that), SIGKILL one that dies.
   */
  signalService(signal: NodeJS.Signals): void;
  /**
   * Stops gnome-keyring and starts it again without `--unlock`, as after a reboot or in an
   * SSH session: it loads the login keyring locked from disk, and reports the attributes of
   * its items only hashed (`gkr:compat:hashed:*`). Resolves once the login collection is
   * there, locked.
   */
  restartLocked?(): Promise<void>;
  close(): Promise<void>;
}

export interface KeyringSessionOptions {
  /** false: a bus that knows no Secret Service at all (none running, none activatable). */
  readonly secretService?: boolean;
  /**
   * false: gnome-keyring runs without a login keyring, as `dbus-run-session` with
   * `gnome-keyring-daemon --start` gives: a Secret Service with no default collection.
   */
  readonly loginKeyring?: boolean;
  /** true: the bus listens on an abstract socket (`unix:abstract=`), as some desktops' do. */
  readonly abstractBus?: boolean;
}

/** The password of the session's login keyring. */
export const KEYRING_PASSWORD = "test-keyring-password";

/** The Debian packages a keyring session needs, for skip and error messages. */
export const KEYRING_PACKAGES = "dbus dbus-x11 gnome-keyring libsecret-tools";

/**
 * Starts `dbus-daemon` and `gnome-keyring-daemon` in a temp directory. HOME and the XDG dirs
 * point into it before the bus starts, because services the bus activates inherit the bus's
 * environment. The keyring daemon gets its password on stdin with `--unlock`, which creates
 * and unlocks the "login" collection without any prompt.
 */
export async function startKeyringSession(
  options: KeyringSessionOptions = {},
): Promise<KeyringSession> {
  const { env, bus, children, close } = await startPrivateBus({
    prefix: "tfck-keyring-",
    withServices: options.secretService !== false,
    packages: KEYRING_PACKAGES,
    abstract: options.abstractBus === true,
  });

  let daemon: ChildProcess | undefined;
  try {
    if (options.secretService !== false) {
      const login = options.loginKeyring !== false;
      daemon = spawn(
        "gnome-keyring-daemon",
        ["--foreground", ...(login ? ["--unlock"] : []), "--components=secrets"],
        {
          env,
          stdio: [login ? "pipe" : "ignore", "ignore", "ignore"],
        },
      );
      children.push(daemon);
      daemon.stdin?.end(KEYRING_PASSWORD);
      await waitFor(
        () => nameHasOwner(env, "org.freedesktop.secrets"),
        "gnome-keyring to own org.freedesktop.secrets",
      );
      if (login) {
        await waitFor(
          async () => !(await collectionLocked(env)),
          "the login collection to be unlocked",
        );
      }
    }
  } catch (error) {
    await close();
    throw error;
  }

  return {
    env,
    home: env.HOME!,
    async lockCollection() {
      await dbusSend(env, [
        "--dest=org.freedesktop.secrets",
        "/org/freedesktop/secrets",
        "org.freedesktop.Secret.Service.Lock",
        "array:objpath:/org/freedesktop/secrets/collection/login",
      ]);
    },
    killBus() {
      bus.kill("SIGKILL");
    },
    signalService(signal) {
      daemon?.kill(signal);
    },
    async restartLocked() {
      if (daemon !== undefined) await stop(daemon);
      await waitFor(
        async () => !(await nameHasOwner(env, "org.freedesktop.secrets")),
        "gnome-keyring to leave the bus",
      );
      daemon = spawn("gnome-keyring-daemon", ["--foreground", "--components=secrets"], {
        env,
        stdio: "ignore",
      });
      children.push(daemon);
      await waitFor(
        () => nameHasOwner(env, "org.freedesktop.secrets"),
        "gnome-keyring to own org.freedesktop.secrets",
      );
      await waitFor(
        async () => (await lockedProperty(env)).includes("boolean true"),
        "the login collection to be loaded, locked",
      );
    },
    close,
  };
}

/** A temp directory with a private HOME, XDG dirs and session bus: the base of every session. */
export interface PrivateBus {
  /** The temp directory; close() removes it. */
  readonly sandbox: string;
  /** PATH, LANG, HOME, the XDG dirs (all inside the sandbox) and DBUS_SESSION_BUS_ADDRESS. */
  readonly env: Record<string, string>;
  /** The dbus-daemon. */
  readonly bus: ChildProcess;
  /** The bus, then whatever a session pushes; close() stops them in reverse order. */
  readonly children: ChildProcess[];
  /** Stops the children and removes the sandbox. */
  readonly close: () => Promise<void>;
}

export interface PrivateBusOptions {
  /** Prefix of the temp directory's name, e.g. "tfck-keyring-". */
  readonly prefix: string;
  /** Activate services from the system's session service files (see busConfigText). */
  readonly withServices: boolean;
  /** The Debian packages to name if dbus-daemon cannot start. */
  readonly packages: string;
  /** Listen on an abstract socket (`unix:abstract=`), not a path. */
  readonly abstract?: boolean;
}

/**
 * Creates the sandbox and starts `dbus-daemon` in it. HOME and the XDG dirs point into it
 * before the bus starts, because services the bus activates inherit the bus's environment.
 */
export async function startPrivateBus(options: PrivateBusOptions): Promise<PrivateBus> {
  const sandbox = mkdtempSync(path.join(os.tmpdir(), options.prefix));
  const dirs = { home: "home", config: "config", data: "data", cache: "cache", runtime: "runtime" };
  for (const dir of Object.values(dirs)) mkdirSync(path.join(sandbox, dir), { mode: 0o700 });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    HOME: path.join(sandbox, dirs.home),
    XDG_CONFIG_HOME: path.join(sandbox, dirs.config),
    XDG_DATA_HOME: path.join(sandbox, dirs.data),
    XDG_CACHE_HOME: path.join(sandbox, dirs.cache),
    XDG_RUNTIME_DIR: path.join(sandbox, dirs.runtime),
  };

  const busConfig = path.join(sandbox, "bus.conf");
  writeFileSync(busConfig, busConfigText(sandbox, options.withServices, options.abstract === true));
  const bus = spawn(
    "dbus-daemon",
    ["--nofork", `--config-file=${busConfig}`, "--print-address=1"],
    {
      env,
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  const children: ChildProcess[] = [bus];
  const close = async () => {
    for (const child of children.reverse()) await stop(child);
    rmSync(sandbox, { recursive: true, force: true });
  };

  try {
    env.DBUS_SESSION_BUS_ADDRESS = await firstLine(bus, "dbus-daemon", options.packages);
  } catch (error) {
    await close();
    throw error;
  }
  return { sandbox, env, bus, children, close };
}

/**
 * A session bus of our own. With `withServices`, it activates services from the system's
 * session service files as a desktop bus would; without, nothing can provide a Secret Service.
 */
function busConfigText(sandbox: string, withServices: boolean, abstract: boolean): string {
  return `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>${abstract ? `unix:abstract=${sandbox}/bus` : `unix:dir=${sandbox}`}</listen>
  ${withServices ? "<standard_session_servicedirs/>" : ""}
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`;
}

export async function dbusSend(env: Record<string, string>, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync("dbus-send", ["--session", "--print-reply", ...args], {
    env,
    timeout: PATIENCE_MS,
  });
  return stdout;
}

// Asks the bus, not the service: a call addressed to org.freedesktop.secrets before the
// daemon owns the name would make the bus start a second daemon.
export async function nameHasOwner(env: Record<string, string>, name: string): Promise<boolean> {
  const reply = await dbusSend(env, [
    "--dest=org.freedesktop.DBus",
    "/org/freedesktop/DBus",
    "org.freedesktop.DBus.NameHasOwner",
    `string:${name}`,
  ]).catch(() => "");
  return reply.includes("boolean true");
}

/** Whether the login collection is locked (or not there: no answer counts as locked). */
async function collectionLocked(env: Record<string, string>): Promise<boolean> {
  return !(await lockedProperty(env)).includes("boolean false");
}

/** dbus-send's reply to Get(Locked) of the login collection; "" when there is none. */
function lockedProperty(env: Record<string, string>): Promise<string> {
  return dbusSend(env, [
    "--dest=org.freedesktop.secrets",
    "/org/freedesktop/secrets/collection/login",
    "org.freedesktop.DBus.Properties.Get",
    "string:org.freedesktop.Secret.Collection",
    "string:Locked",
  ]).catch(() => "");
}

export async function waitFor(
  condition: () => Promise<boolean>,
  what: string,
  timeoutMs = PATIENCE_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function firstLine(child: ChildProcess, name: string, packages: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    child.once("error", (error) =>
      reject(new Error(`${name} could not start (apt-get install ${packages}): ${error.message}`)),
    );
    child.once("exit", (code) => reject(new Error(`${name} exited early with code ${code}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const end = buffer.indexOf("\n");
      if (end >= 0) resolve(buffer.slice(0, end).trim());
    });
  });
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
  await exited;
  clearTimeout(timer);
}
