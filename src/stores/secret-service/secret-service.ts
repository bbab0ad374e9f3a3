import { DbusErrorReply, type BusConnection, type MethodCall } from "./connection.ts";
import { ALGORITHM, warmUpCrypto, type KeyExchange, type SessionKey } from "./session.ts";
import type { DbusValue, Message, Variant } from "./wire.ts";

/** The bus name every Secret Service provider owns. */
export const SECRETS = "org.freedesktop.secrets";
const SERVICE_PATH = "/org/freedesktop/secrets";
const INTERFACE = {
  service: "org.freedesktop.Secret.Service",
  collection: "org.freedesktop.Secret.Collection",
  item: "org.freedesktop.Secret.Item",
  prompt: "org.freedesktop.Secret.Prompt",
  properties: "org.freedesktop.DBus.Properties",
} as const;
/** "No object": what the API returns for no prompt, no collection, no alias. */
const NONE = "/";

/** The keyring is locked and could not be unlocked here (no prompt can be shown, or it was dismissed). */
export class KeyringLocked extends Error {
  readonly reason: "no-prompt" | "dismissed";
  /** The items and collections that were to be unlocked, when known: what is locked. */
  readonly objects: readonly string[];

  constructor(reason: "no-prompt" | "dismissed", objects: readonly string[] = []) {
    super(
      reason === "no-prompt"
        ? "locked, and no unlock prompt can be shown"
        : "the unlock prompt was dismissed",
    );
    this.name = "KeyringLocked";
    this.reason = reason;
    this.objects = objects;
  }
}

/** A prompt for a create or a delete was dismissed: someone said no. */
export class PromptDismissed extends Error {
  constructor(what: string) {
    super(`the Secret Service's prompt for ${what} was dismissed`);
    this.name = "PromptDismissed";
  }
}

/** The service has no default collection to create an item in. */
export class NoDefaultCollection extends Error {
  constructor() {
    super("the Secret Service has no default collection");
    this.name = "NoDefaultCollection";
  }
}

/**
 * An item that a search found was gone by the next call on it: deleted meanwhile, by another
 * helper or another program. Normal between two calls: forget has nothing left to do, get
 * searches again, store searches again and creates.
 */
export class ItemGone extends Error {
  constructor(item: string) {
    super(`the item ${item} disappeared while in use`);
    this.name = "ItemGone";
  }
}

/** The service answered with something the API does not allow. */
export class UnexpectedReply extends Error {
  constructor(what: string) {
    super(`the Secret Service answered ${what} with an unexpected reply`);
    this.name = "UnexpectedReply";
  }
}

export interface SearchResult {
  readonly unlocked: readonly string[];
  readonly locked: readonly string[];
}

/** An encrypted secret as the API carries it: (oayays). */
interface EncryptedSecret {
  readonly iv: Uint8Array;
  readonly ciphertext: Uint8Array;
}

export interface OpenedSession {
  readonly path: string;
  /**
   * The session's key. The arithmetic waits for calls made before it to leave: ask for the
   * key after sending the calls that need only the session's path (GetSecrets).
   */
  key(): Promise<SessionKey>;
}

export interface PromptPolicy {
  /** False where no desktop can show an unlock prompt: then a locked keyring fails at once. */
  readonly canPrompt: boolean;
  /** The deadline while a prompt is on screen: a person is answering, not a hung service. */
  promptDeadline(): number;
  /** The deadline once the person has answered: the call's own timeout again, from now. */
  afterPrompt(): number;
}

/** For clients that must never show a prompt (doctor's probe, tests): a locked keyring fails. */
export const NO_PROMPTS: PromptPolicy = {
  canPrompt: false,
  promptDeadline: () => 0,
  afterPrompt: () => 0,
};

/** A desktop that can show an unlock prompt: an X11 or Wayland display. */
export function canShowPrompt(env: Readonly<Record<string, string | undefined>>): boolean {
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/**
 * The calls of the Secret Service API that the store makes, typed, over one connection.
 * Each method sends at once; methods called in the same turn of the event loop leave in one
 * write. Prompts (unlock, and deletes or creates that need one) are followed to the end.
 */
export class SecretServiceApi {
  private readonly connection: BusConnection;
  private readonly prompts: PromptPolicy;

  constructor(connection: BusConnection, prompts: PromptPolicy) {
    this.connection = connection;
    this.prompts = prompts;
  }

  /** Items whose attributes include all of `attributes`, in every collection. */
  async searchItems(attributes: Readonly<Record<string, string>>): Promise<SearchResult> {
    const reply = await this.service("SearchItems", "a{ss}", [new Map(Object.entries(attributes))]);
    const [unlocked, locked] = reply.body;
    return {
      unlocked: objectPaths(unlocked, "SearchItems"),
      locked: objectPaths(locked, "SearchItems"),
    };
  }

  /** The service's collections. */
  async collections(): Promise<string[]> {
    return objectPaths(
      await this.property(SERVICE_PATH, INTERFACE.service, "Collections"),
      "Get(Collections)",
    );
  }

  /** The collection an alias names, or `undefined` when there is none ("/"). */
  async readAlias(name: string): Promise<string | undefined> {
    const [path] = (await this.service("ReadAlias", "s", [name])).body;
    if (typeof path !== "string") throw new UnexpectedReply("ReadAlias");
    return path === NONE ? undefined : path;
  }

  /** Opens an encrypted session with our half of `exchange`. */
  async openSession(exchange: KeyExchange): Promise<OpenedSession> {
    const replied = this.service("OpenSession", "sv", [
      ALGORITHM,
      { signature: "ay", value: exchange.publicValue },
    ]);
    // Once the calls have left, WebCrypto starts while the service does its half.
    await Promise.resolve();
    warmUpCrypto();
    const reply = await replied;
    const [output, path] = reply.body;
    const servicePublic = (output as Variant | undefined)?.value;
    if (!(servicePublic instanceof Uint8Array) || typeof path !== "string" || path === NONE) {
      throw new UnexpectedReply("OpenSession");
    }
    let key: Promise<SessionKey> | undefined;
    return {
      path,
      key: () =>
        (key ??= (async () => {
          // Calls already made leave first: the arithmetic can overlap their round trip.
          await Promise.resolve();
          return exchange.sessionKey(servicePublic);
        })()),
    };
  }

  /** The encrypted secrets of `items`, by item path (items the service skips are absent). */
  async getSecrets(
    items: readonly string[],
    session: string,
  ): Promise<Map<string, EncryptedSecret>> {
    const [secrets] = (
      await goneAs(
        items.join(" "),
        GONE_FROM_GET_SECRETS,
        this.service("GetSecrets", "aoo", [items, session]),
      )
    ).body;
    if (!(secrets instanceof Map)) throw new UnexpectedReply("GetSecrets");
    const found = new Map<string, EncryptedSecret>();
    for (const [item, secret] of secrets) {
      const [, iv, ciphertext] = Array.isArray(secret) ? (secret as DbusValue[]) : [];
      if (
        typeof item !== "string" ||
        !(iv instanceof Uint8Array) ||
        !(ciphertext instanceof Uint8Array)
      ) {
        throw new UnexpectedReply("GetSecrets");
      }
      found.set(item, { iv, ciphertext });
    }
    return found;
  }

  /** Whether a collection is locked. */
  async collectionLocked(collection: string): Promise<boolean> {
    const value = await this.property(collection, INTERFACE.collection, "Locked");
    if (typeof value !== "boolean") throw new UnexpectedReply("Get(Locked)");
    return value;
  }

  /** A collection's label: the keyring's name as the person gave it ("Login", "Work"). */
  async collectionLabel(collection: string): Promise<string> {
    const value = await this.property(collection, INTERFACE.collection, "Label");
    if (typeof value !== "string") throw new UnexpectedReply("Get(Label)");
    return value;
  }

  /** An item's attributes. */
  async itemAttributes(item: string): Promise<Map<string, string>> {
    const value = await goneAs(item, GONE_ITEM, this.property(item, INTERFACE.item, "Attributes"));
    if (!(value instanceof Map)) throw new UnexpectedReply("Get(Attributes)");
    const attributes = new Map<string, string>();
    for (const [key, text] of value) {
      if (typeof key === "string" && typeof text === "string") attributes.set(key, text);
    }
    return attributes;
  }

  /**
   * Creates an item in `collection`; with `replace`, one with the same attributes is
   * replaced instead (the store always replaces; tests make duplicates without).
   */
  async createItem(
    collection: string,
    label: string,
    attributes: Readonly<Record<string, string>>,
    secret: EncryptedSecret,
    session: string,
    replace = true,
  ): Promise<void> {
    const properties = new Map<DbusValue, DbusValue>([
      [`${INTERFACE.item}.Label`, { signature: "s", value: label }],
      [
        `${INTERFACE.item}.Attributes`,
        { signature: "a{ss}", value: new Map(Object.entries(attributes)) },
      ],
    ]);
    const reply = await this.call({
      path: collection,
      interface: INTERFACE.collection,
      member: "CreateItem",
      signature: "a{sv}(oayays)b",
      body: [properties, [session, secret.iv, secret.ciphertext, "text/plain"], replace],
    });
    const [item, prompt] = reply.body;
    // No item and no prompt would mean nothing was written: never report that as stored.
    if (
      typeof item !== "string" ||
      typeof prompt !== "string" ||
      (item === NONE && prompt === NONE)
    ) {
      throw new UnexpectedReply("CreateItem");
    }
    if (prompt !== NONE && !(await this.prompt(prompt, reply.sender))) {
      throw new PromptDismissed("CreateItem");
    }
  }

  /** Replaces the secret of an existing item, keeping its label and attributes. */
  async setSecret(item: string, secret: EncryptedSecret, session: string): Promise<void> {
    await goneAs(
      item,
      GONE_ITEM,
      this.call({
        path: item,
        interface: INTERFACE.item,
        member: "SetSecret",
        signature: "(oayays)",
        body: [[session, secret.iv, secret.ciphertext, "text/plain"]],
      }),
    );
  }

  /** Deletes an item (following a prompt if the service asks for one). */
  async deleteItem(item: string): Promise<void> {
    const reply = await goneAs(
      item,
      GONE_ITEM,
      this.call({ path: item, interface: INTERFACE.item, member: "Delete" }),
    );
    const [prompt] = reply.body;
    if (typeof prompt !== "string") throw new UnexpectedReply("Delete");
    if (prompt !== NONE && !(await this.prompt(prompt, reply.sender))) {
      throw new PromptDismissed("Delete");
    }
  }

  /**
   * Unlocks items or collections, following the prompt the service returns: on a desktop it
   * asks the person, who gets until `promptDeadline()` to answer. Where no desktop can show
   * one, that is said at once instead of at the deadline.
   */
  async unlock(objects: readonly string[]): Promise<void> {
    if (!this.prompts.canPrompt) throw new KeyringLocked("no-prompt", objects);
    const reply = await this.service("Unlock", "ao", [objects]);
    const [, prompt] = reply.body;
    if (typeof prompt !== "string") throw new UnexpectedReply("Unlock");
    if (prompt === NONE) return;
    // A person answers this one: the deadline waits for them, then is the call's own again.
    this.connection.setDeadline(this.prompts.promptDeadline());
    const answered = await this.prompt(prompt, reply.sender);
    this.connection.setDeadline(this.prompts.afterPrompt());
    if (!answered) throw new KeyringLocked("dismissed");
  }

  /**
   * Runs a prompt and waits for its Completed signal from `service` (the unique name that
   * returned it); true unless it was dismissed. Not every prompt asks a person: KeePassXC
   * returns one for every CreateItem and completes it at once, so only unlock() moves the
   * deadline for one.
   */
  private async prompt(prompt: string, service: string | undefined): Promise<boolean> {
    // Only the service that made the prompt may complete it: any client can send a signal.
    const completed = this.connection.waitForSignal(
      {
        path: prompt,
        interface: INTERFACE.prompt,
        member: "Completed",
        ...(service === undefined ? {} : { sender: service }),
      },
      `${INTERFACE.prompt}.Completed`,
    );
    completed.catch(() => {
      // Reported through the calls below, or awaited further down.
    });
    const sender = service === undefined ? "" : `,sender='${service}'`;
    await this.connection.addMatch(
      `type='signal',interface='${INTERFACE.prompt}',member='Completed',path='${prompt}'${sender}`,
    );
    await this.call({
      path: prompt,
      interface: INTERFACE.prompt,
      member: "Prompt",
      signature: "s",
      body: [""],
    });
    const [dismissed] = (await completed).body;
    return dismissed === false;
  }

  /** A property of an object, as org.freedesktop.DBus.Properties.Get gives it. */
  private async property(
    path: string,
    iface: string,
    name: string,
  ): Promise<DbusValue | undefined> {
    const reply = await this.call({
      path,
      interface: INTERFACE.properties,
      member: "Get",
      signature: "ss",
      body: [iface, name],
    });
    return (reply.body[0] as Variant | undefined)?.value;
  }

  private service(member: string, signature: string, body: readonly DbusValue[]): Promise<Message> {
    return this.call({ path: SERVICE_PATH, interface: INTERFACE.service, member, signature, body });
  }

  private call(call: Omit<MethodCall, "destination">): Promise<Message> {
    return this.connection.call({ destination: SECRETS, ...call });
  }
}

function objectPaths(value: DbusValue | undefined, what: string): string[] {
  if (!Array.isArray(value)) throw new UnexpectedReply(what);
  const paths: string[] = [];
  for (const path of value as DbusValue[]) {
    if (typeof path !== "string") throw new UnexpectedReply(what);
    paths.push(path);
  }
  return paths;
}

/**
 * The error names a provider answers a call on an item with once the item is deleted:
 * NoSuchObject (the API's own), UnknownObject (KWallet, KeePassXC), and UnknownMethod or
 * UnknownInterface (gnome-keyring, whose object stays registered without its interfaces for a
 * moment: "No such interface org.freedesktop.Secret.Item"). The item was found by a search, so
 * it had those interfaces: an unknown method on it now means it is gone, not that the service
 * lacks the API.
 */
const GONE_ITEM: ReadonlySet<string> = new Set([
  "org.freedesktop.Secret.Error.NoSuchObject",
  "org.freedesktop.DBus.Error.UnknownObject",
  "org.freedesktop.DBus.Error.UnknownMethod",
  "org.freedesktop.DBus.Error.UnknownInterface",
]);

/**
 * GetSecrets names items that a search found: kwalletd answers InvalidArgs ("Can't find item")
 * when one is gone. gnome-keyring leaves a gone item out of its answer instead, which get
 * recognises by the answer's shape.
 */
const GONE_FROM_GET_SECRETS: ReadonlySet<string> = new Set([
  "org.freedesktop.Secret.Error.NoSuchObject",
  "org.freedesktop.DBus.Error.InvalidArgs",
]);

/** `call`, with an error reply named in `names` turned into ItemGone for `item`. */
async function goneAs<T>(item: string, names: ReadonlySet<string>, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof DbusErrorReply && names.has(error.errorName)) throw new ItemGone(item);
    throw error;
  }
}

/** True for the D-Bus error a service gives for a call on a locked item or collection. */
export function isLockedError(error: unknown): boolean {
  return (
    error instanceof DbusErrorReply && error.errorName === "org.freedesktop.Secret.Error.IsLocked"
  );
}
