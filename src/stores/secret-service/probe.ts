import type { ProbeResult } from "../store-description.ts";
import { noAddressReason, sessionBusAddresses } from "./bus-address.ts";
import type { Deadline } from "../../system/deadline.ts";
import { BUS, BusConnection, BusUnavailable } from "./connection.ts";
import { diagnose } from "./failures.ts";
import { lockedKeyrings } from "./locked-keyrings.ts";
import { startedWithUnlock } from "./started-with-unlock.ts";
import {
  canShowPrompt,
  KeyringLocked,
  NoDefaultCollection,
  NO_PROMPTS,
  SecretServiceApi,
  SECRETS,
} from "./secret-service.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Looks at the Secret Service the way the store would use it, without starting a service
 * or showing a prompt: is there a bus, does a service own `org.freedesktop.secrets` (or can
 * the bus start one), which collection is the default (`ReadAlias`, not the
 * `/aliases/default` path that KeePassXC does not always answer), and is it locked. Each
 * finding is worded by the same `diagnose()` that the store's errors use.
 */
export async function probeSecretService(env: Env, deadline: Deadline): Promise<ProbeResult> {
  let provider = "";
  const fail = (error: unknown, circumstances = {}): ProbeResult => {
    const { summary, fix } = diagnose(error, deadline.seconds, circumstances);
    return {
      status: "fail",
      summary: `${summary}${provider}`,
      ...(fix === undefined ? {} : { fix }),
      safeToOpen: false,
    };
  };
  const [address] = sessionBusAddresses(env);
  if (address === undefined) {
    return fail(new BusUnavailable(noAddressReason(env)));
  }
  let connection: BusConnection | undefined;
  try {
    connection = await BusConnection.open(address, deadline);
    const [owned] = (
      await connection.call({ ...BUS, member: "NameHasOwner", signature: "s", body: [SECRETS] })
    ).body;
    if (owned !== true) {
      const [names] = (await connection.call({ ...BUS, member: "ListActivatableNames" })).body;
      return Array.isArray(names) && names.includes(SECRETS)
        ? {
            status: "warn",
            summary: "no Secret Service is running, but the bus will start one on first use",
            // Started by the bus without a desktop session, gnome-keyring has no login
            // keyring to store in.
            fix: { situation: "secret-service-missing" },
            safeToOpen: false,
          }
        : {
            status: "fail",
            summary: "no Secret Service on the session bus (GNOME Keyring, KWallet or KeePassXC)",
            fix: { situation: "secret-service-missing" },
            safeToOpen: false,
          };
    }
    const named = await providerName(connection);
    if (named !== undefined) provider = ` (the Secret Service is ${named})`;
    const api = new SecretServiceApi(connection, NO_PROMPTS);
    const collection = await api.readAlias("default");
    if (collection === undefined) {
      // Collections but no default: the default names one that is gone (KWallet's "Default
      // Wallet" set to a wallet that does not exist, as a libsecret client's first store on a
      // KWallet without wallets leaves it). Creating another would not help.
      // gnome-keyring's in-memory "session" collection is no keyring anyone made.
      const others = (await api.collections().catch(() => [])).filter(
        (path) => path !== "/org/freedesktop/secrets/collection/session",
      );
      if (others.length > 0) {
        return {
          status: "fail",
          summary: `the Secret Service has ${others.length} collection${others.length === 1 ? "" : "s"} but none is the default${provider}`,
          fix: { situation: "no-default-chosen" },
          safeToOpen: false,
        };
      }
      return fail(new NoDefaultCollection());
    }
    const locked = await api.collectionLocked(collection);
    if (locked) {
      // On a desktop the first call shows an unlock prompt; without one, every call fails.
      if (!canShowPrompt(env)) {
        const error = new KeyringLocked("no-prompt", [collection]);
        return fail(error, {
          startedWithUnlock: await startedWithUnlock(connection),
          lockedKeyrings: await lockedKeyrings(api, error),
        });
      }
      return {
        status: "warn",
        summary: `the Secret Service's default collection is locked: Terraform's first call will show an unlock prompt${provider}`,
        fix: { situation: "keyring-on-desktop" },
        safeToOpen: false,
      };
    }
    return {
      status: "ok",
      summary: `the Secret Service${named === undefined ? "" : ` (${named})`} is running and its default collection is unlocked`,
      safeToOpen: true,
    };
  } catch (error) {
    return fail(error);
  } finally {
    connection?.close();
  }
}

/** The well-known names each provider owns beside org.freedesktop.secrets. */
const PROVIDERS: readonly (readonly [string, string])[] = [
  ["org.gnome.keyring", "GNOME Keyring"],
  ["org.kde.kwalletd6", "KWallet"],
  ["org.kde.kwalletd5", "KWallet"],
  ["org.keepassxc.KeePassXC.MainWindow", "KeePassXC"],
];

/**
 * Which program serves org.freedesktop.secrets: the provider whose own well-known name has
 * the same owner. One write of GetNameOwner calls; `undefined` when none matches.
 */
async function providerName(connection: BusConnection): Promise<string | undefined> {
  const ownerOf = (name: string) =>
    connection
      .call({ ...BUS, member: "GetNameOwner", signature: "s", body: [name] })
      .then((reply) => reply.body[0])
      .catch(() => undefined);
  const [service, ...owners] = await Promise.all([
    ownerOf(SECRETS),
    ...PROVIDERS.map(([name]) => ownerOf(name)),
  ]);
  const index = owners.findIndex((owner) => owner !== undefined && owner === service);
  return PROVIDERS[index]?.[1];
}
