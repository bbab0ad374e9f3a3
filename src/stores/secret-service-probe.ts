import { outputOf } from "../processes.ts";

export interface ProbeResult {
  readonly status: "ok" | "warn" | "fail";
  readonly summary: string;
  readonly fix?: string;
  /** True when it is safe to touch the keychain itself (nothing will be started or prompted). */
  readonly safeToOpen: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Looks at the Secret Service from outside with `dbus-send` (part of every D-Bus install):
 * asks the bus whether a service owns `org.freedesktop.secrets` and whether the default
 * collection is locked. Neither question starts a service or shows an unlock prompt,
 * unlike any call through the keychain binding.
 */
export async function probeSecretService(env: Env): Promise<ProbeResult> {
  const headless = "on a machine without a desktop session use --backend pass";
  if (!env.DBUS_SESSION_BUS_ADDRESS) {
    return {
      status: "fail",
      summary: "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)",
      fix: `log in to a desktop session, or run under "dbus-run-session"; ${headless}`,
      safeToOpen: false,
    };
  }
  const owner = await busCall(env, "NameHasOwner", "string:org.freedesktop.secrets");
  if (owner === undefined) {
    return {
      status: "fail",
      summary: "the D-Bus session bus does not answer (or dbus-send is missing)",
      fix: `check DBUS_SESSION_BUS_ADDRESS; ${headless}`,
      safeToOpen: false,
    };
  }
  if (!owner.includes("boolean true")) {
    const activatable = await busCall(env, "ListActivatableNames");
    return activatable?.includes('"org.freedesktop.secrets"')
      ? {
          status: "warn",
          summary: "no Secret Service is running, but the bus will start one on first use",
          fix: "nothing to do if that start needs no prompt; otherwise unlock your keyring first",
          safeToOpen: false,
        }
      : {
          status: "fail",
          summary: "no Secret Service on the session bus (GNOME Keyring, KWallet or KeePassXC)",
          fix: `install and start gnome-keyring (or enable KeePassXC's Secret Service integration); ${headless}`,
          safeToOpen: false,
        };
  }
  const locked = await dbusSend(env, [
    "--dest=org.freedesktop.secrets",
    "/org/freedesktop/secrets/aliases/default",
    "org.freedesktop.DBus.Properties.Get",
    "string:org.freedesktop.Secret.Collection",
    "string:Locked",
  ]);
  if (locked === undefined) {
    return {
      status: "fail",
      summary: "the Secret Service has no default collection",
      fix: 'create a keyring (for example "login" in Seahorse) and make it the default',
      safeToOpen: false,
    };
  }
  if (locked.includes("boolean true")) {
    return {
      status: "warn",
      summary:
        "the Secret Service's default collection is locked: Terraform's calls will fail or prompt",
      fix: "unlock it (Seahorse, or log in again)",
      safeToOpen: false,
    };
  }
  return {
    status: "ok",
    summary: "the Secret Service is running and its default collection is unlocked",
    safeToOpen: true,
  };
}

function busCall(env: Env, method: string, ...args: string[]): Promise<string | undefined> {
  return dbusSend(env, [
    "--dest=org.freedesktop.DBus",
    "/org/freedesktop/DBus",
    `org.freedesktop.DBus.${method}`,
    ...args,
  ]);
}

function dbusSend(env: Env, args: string[]): Promise<string | undefined> {
  return outputOf(
    "dbus-send",
    ["--session", "--print-reply", "--reply-timeout=2000", ...args],
    env,
    3000,
  );
}
