import { deadlineIn } from "../../src/system/deadline.ts";
import { sessionBusAddresses } from "../../src/stores/secret-service/bus-address.ts";
import { BusConnection } from "../../src/stores/secret-service/connection.ts";
import {
  ItemGone,
  NO_PROMPTS,
  SecretServiceApi,
} from "../../src/stores/secret-service/secret-service.ts";
import { SessionError, startKeyExchange } from "../../src/stores/secret-service/session.ts";

/**
 * Creates an item in the default collection beside any that match, as another program
 * would (CreateItem without replace), through the project's own client: secret-tool
 * always replaces, and on KeePassXC 2.7.4 a replace of another process's item waits for
 * a dialog (keepassxreboot/keepassxc#9255).
 */
export function addItem(
  env: Record<string, string>,
  attributes: Record<string, string>,
  secret: string,
  label = "another program's item",
  /** The collection to put it in; the default one unless given. */
  inCollection?: string,
): Promise<void> {
  return withApi(env, async (api) => {
    const collection = inCollection ?? (await api.readAlias("default"));
    if (collection === undefined) throw new Error("the session has no default collection");
    const { session, encrypted } = await encryptedFor(api, secret);
    await api.createItem(collection, label, attributes, encrypted, session, false);
  });
}

/**
 * Creates a keyring (a collection) labelled `label` with `password`, with no prompt, as
 * Seahorse's "New keyring" does through gnome-keyring's private interface; resolves with
 * its object path. gnome-keyring only.
 */
export function addKeyring(
  env: Record<string, string>,
  label: string,
  password: string,
): Promise<string> {
  return withApi(env, async (api, connection) => {
    const { session, encrypted } = await encryptedFor(api, password);
    const reply = await connection.call({
      destination: "org.freedesktop.secrets",
      path: "/org/freedesktop/secrets",
      interface: "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface",
      member: "CreateWithMasterPassword",
      signature: "a{sv}(oayays)",
      body: [
        new Map([["org.freedesktop.Secret.Collection.Label", { signature: "s", value: label }]]),
        [session, encrypted.iv, encrypted.ciphertext, "text/plain"],
      ],
    });
    const [collection] = reply.body;
    if (typeof collection !== "string") throw new Error("CreateWithMasterPassword: no path");
    return collection;
  });
}

/** `secret` encrypted for a new session of `api`'s connection. */
async function encryptedFor(api: SecretServiceApi, secret: string) {
  // One exchange in 256 is refused (a shared secret that begins with a zero byte): again.
  for (let attempt = 0; ; attempt++) {
    const session = await api.openSession(startKeyExchange());
    const key = await session.key().catch((error: unknown) => {
      if (!(error instanceof SessionError) || attempt > 10) throw error;
      return undefined;
    });
    if (key === undefined) continue;
    const encrypted = await key.encrypt(new TextEncoder().encode(secret));
    return { session: session.path, encrypted };
  }
}

/** How many items, locked or not, carry all of `attributes`. */
export function countItems(
  env: Record<string, string>,
  attributes: Record<string, string>,
): Promise<number> {
  return withApi(env, async (api) => {
    const { unlocked, locked } = await api.searchItems(attributes);
    return unlocked.length + locked.length;
  });
}

/**
 * Deletes every item that carries all of `attributes`, as another program would (as
 * `secret-tool clear` does): no turn taken, and an item already gone is no error.
 */
export function deleteItems(
  env: Record<string, string>,
  attributes: Record<string, string>,
): Promise<void> {
  return withApi(env, async (api) => {
    const { unlocked } = await api.searchItems(attributes);
    await Promise.all(
      unlocked.map((item) =>
        api.deleteItem(item).catch((error: unknown) => {
          if (!(error instanceof ItemGone)) throw error;
        }),
      ),
    );
  });
}

/** Runs `use` with the project's own client on the session's bus, then closes it. */
async function withApi<T>(
  env: Record<string, string>,
  use: (api: SecretServiceApi, connection: BusConnection) => Promise<T>,
): Promise<T> {
  const [address] = sessionBusAddresses(env);
  if (address === undefined) throw new Error("no bus address in the session's env");
  const connection = await BusConnection.open(address, deadlineIn(10));
  try {
    return await use(new SecretServiceApi(connection, NO_PROMPTS), connection);
  } finally {
    connection.close();
  }
}
