import { CliError } from "../../errors.ts";
import { fixFor, renderFix } from "../../fixes.ts";
import { canonicalHostname, type Hostname } from "../../protocol/hostname.ts";
import type { CredentialStore } from "../../protocol/credential-store.ts";
import type { Deadline } from "../../system/deadline.ts";
import { noAddressReason, sessionBusAddresses } from "./bus-address.ts";
import { BUS, BusConnection, BusUnavailable, DbusErrorReply } from "./connection.ts";
import { diagnose, isLockedFailure, keychainFailure } from "./failures.ts";
import { startedWithUnlock } from "./started-with-unlock.ts";
import {
  isLockedError,
  ItemGone,
  NoDefaultCollection,
  SECRETS,
  SecretServiceApi,
  UnexpectedReply,
  canShowPrompt,
  type OpenedSession,
  type PromptPolicy,
  type SearchResult,
} from "./secret-service.ts";
import { SessionError, startKeyExchange, type KeyExchange } from "./session.ts";
import { searchUnlocked, type SearchScope } from "./locked.ts";
import { lockedKeyrings } from "./locked-keyrings.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * How long an unlock prompt on screen may wait for its person, whatever `--timeout` says:
 * a prompt is not a hang, but Terraform has no timeout of its own, and a prompt on a screen
 * no one looks at must not hold `terraform init` for ever.
 */
const PROMPT_LIMIT_SECONDS = 300;

interface SecretServiceStoreOptions {
  /** The `service` attribute of every item (`--service`). */
  readonly service: string;
  readonly env: Env;
  readonly deadline: Deadline;
  /** Tells the user of get, on stderr, about something found on the way (duplicates). */
  warn(line: string): void;
  /** Called when get has found an item, before its secret is asked for (maybe more than once). */
  readonly beforeSecret?: () => Promise<void>;
}

/** The Secret Service store, with `close()` for callers that outlive it (tests). */
export type SecretServiceStore = CredentialStore & { close(): void };

/**
 * Credentials in the Secret Service (GNOME Keyring, KWallet, KeePassXC), spoken to over
 * D-Bus directly. One item per host, in the format docs/reference.md promises (earlier
 * versions' items are read as they are): attributes exactly
 * `service` and `username` (the hostname), label `keyring:<host>@<service>`, the
 * credentials object as UTF-8 text. Every call of a run shares one connection, one
 * encrypted session and one deadline.
 *
 * Items of other programs that carry our two attributes and more are not ours: get reads
 * one only when no item of ours exists, store never overwrites one, forget removes them all
 * (the user asked for the host to be forgotten).
 */
export function createSecretServiceStore(options: SecretServiceStoreOptions): SecretServiceStore {
  return new SecretServiceItems(options);
}

/** The store over one connection, made on first use, that every call of the run shares. */
class SecretServiceItems implements SecretServiceStore {
  private client: Client | undefined;
  private readonly service: string;
  private readonly deadline: Deadline;
  private readonly options: SecretServiceStoreOptions;

  constructor(options: SecretServiceStoreOptions) {
    this.options = options;
    this.service = options.service;
    this.deadline = options.deadline;
  }

  /**
   * The client of this store, connected on first use. For a call that will open a session
   * (`opensSession`), our half of the key exchange (~0.4 ms of BigInt) is made while the
   * kernel connects us: its OpenSession then leaves in the first write, and the service's
   * half (gnome-keyring: ~2.5 ms), what a get waits for longest, starts at once.
   */
  private async connect(opensSession: boolean): Promise<Client> {
    if (this.client !== undefined) return this.client;
    const addresses = sessionBusAddresses(this.options.env);
    if (addresses.length === 0) {
      throw new BusUnavailable(noAddressReason(this.options.env));
    }
    let lastError: unknown;
    for (const address of addresses) {
      try {
        const opening = BusConnection.open(address, this.deadline);
        const exchange = opensSession ? startKeyExchange() : undefined;
        this.client = new Client(
          await opening,
          {
            canPrompt: canShowPrompt(this.options.env),
            promptDeadline: () =>
              Math.max(this.deadline.at, this.deadline.now() + PROMPT_LIMIT_SECONDS * 1000),
            afterPrompt: () =>
              Math.max(this.deadline.at, this.deadline.now() + this.deadline.seconds * 1000),
          },
          exchange,
        );
        return this.client;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }

  /**
   * Runs `operation`, and again after a failure that a later attempt can get past: at once
   * on the same connection after an item went between a search and the next call (normal:
   * `last` says when that is the last time in a row), and on a fresh connection after a
   * pause, with backoff and jitter, for a busy bus, a service that stopped and is started
   * anew, a secret that did not decrypt (once), or items that keep going. Never past the
   * deadline. `opensSession`: the operation asks for the client's session.
   */
  private async attempt<T>(
    { action, opensSession = false }: { readonly action: string; readonly opensSession?: boolean },
    operation: (client: Client, last: boolean) => Promise<T>,
  ): Promise<T> {
    let gone = 0;
    let freshSessions = 0;
    for (let pause = 0; ;) {
      try {
        return await operation(await this.connect(opensSession), gone === SEARCHES - 1);
      } catch (error) {
        if (error instanceof CliError) throw error;
        if (error instanceof ItemGone && ++gone < SEARCHES) continue;
        gone = 0;
        // Only a locked keyring asks more: which keyrings are locked, by their labels, and
        // whether gnome-keyring was given a password.
        const circumstances =
          isLockedFailure(error) && this.client !== undefined
            ? {
                startedWithUnlock: await this.client.startedWithUnlock(),
                lockedKeyrings: await lockedKeyrings(this.client.api, error),
              }
            : {};
        this.client?.close();
        this.client = undefined;
        const { transient } = diagnose(error, this.deadline.seconds);
        // A secret that did not decrypt gets one more try with a fresh session (a server with
        // another unlucky case than the two session.ts avoids), never a "no credentials".
        const retrySession = error instanceof SessionError && freshSessions++ === 0;
        const backoff = Math.min(1000, 50 * 2 ** pause++) * (1 + Math.random() / 2);
        if (!(transient || retrySession) || this.deadline.now() + backoff >= this.deadline.at) {
          throw keychainFailure(action, error, this.deadline.seconds, circumstances);
        }
        await this.deadline.sleep(backoff);
      }
    }
  }

  private ours(host: Hostname): Record<string, string> {
    return { service: this.service, username: host };
  }

  /**
   * Where stores and forgets of one host take turns, bus-wide: not on gnome-keyring, whose
   * CreateItem replaces an item with the same attributes and whose deletes may run together.
   * KeePassXC 2.7.4 crashes on about ten deletes at once, and waits on a dialog when a
   * CreateItem would replace another's item (keepassxreboot/keepassxc#9255); KWallet is
   * given turns as well, as nothing says it needs none.
   */
  private async takeTurnUnlessGnome(
    client: Client,
    host: Hostname,
  ): Promise<{ gnome: boolean; searched: SearchResult | undefined }> {
    // The first search leaves with the question, in the first write: on gnome-keyring it is
    // the one that counts; elsewhere the search is made again once the turn is ours.
    const [gnome, searched] = await Promise.all([
      client.isGnomeKeyring(),
      client.api.searchItems(this.ours(host)),
    ]);
    if (gnome) return { gnome, searched };
    await client.takeTurn(`${this.service}\n${host}`);
    return { gnome, searched: undefined };
  }

  get(host: Hostname): Promise<string | undefined> {
    return this.attempt({ action: "read from", opensSession: true }, async (client, last) => {
      const { api } = client;
      const searched = api.searchItems(this.ours(host));
      const session = client.session();
      const first = await searched;
      // Something may be ours: the process is protected while the attributes and the
      // session are on their way, not after (a get that finds nothing never is).
      if (first.unlocked.length + first.locked.length > 0) {
        this.options.beforeSecret?.().catch(ignore);
      }
      // Only what get would read is unlocked: another program's locked item, whose
      // attributes say so, is not ours to prompt for.
      const { items, attributes } = await searchUnlocked(
        api,
        this.ours(host),
        {
          unlockReadable: (item, found) =>
            candidatesOf(found.items, found.attributes, this.service, host).includes(item),
          answered: (found) => {
            for (let index = 0; index < found.items.length; index++) {
              const item = found.items[index] ?? "";
              if (!found.locked.has(item) && isOurs(found.attributes[index], this.service, host)) {
                return true;
              }
            }
            return false;
          },
        },
        () => client.isGnomeKeyring(),
        first,
      );
      const candidates = candidatesOf(items, attributes, this.service, host);
      if (candidates.length === 0) {
        // Absence is no error, but a person running get should learn why terraform login
        // will fail.
        if ((await api.readAlias("default")) === undefined) {
          this.options.warn(
            `warning: the keyring has no default collection, so terraform login cannot store a token; ${renderFix(fixFor("no-default-collection"))}`,
          );
        }
        return undefined;
      }
      await this.options.beforeSecret?.();
      const opened = await session;
      // The key's arithmetic (~1 ms) runs while GetSecrets travels.
      const [found, key] = await Promise.all([
        api.getSecrets(candidates, opened.path),
        opened.key(),
      ]);
      // gnome-keyring leaves out an item deleted since the search: search again.
      let missing: string | undefined;
      for (const item of candidates) {
        if (!found.has(item)) {
          missing = item;
          break;
        }
      }
      if (!last && missing !== undefined) throw new ItemGone(missing);
      const texts: string[] = [];
      for (const item of candidates) {
        const secret = found.get(item);
        if (secret === undefined) continue;
        const plaintext = await key.decrypt(secret.iv, secret.ciphertext);
        try {
          texts.push(utf8(plaintext, host));
        } finally {
          plaintext.fill(0);
        }
      }
      // A this.service that leaves out what it found (gnome-keyring skips locked items) must not
      // make get print {}, which reads as "not logged in".
      if (texts.length === 0) throw new UnexpectedReply("GetSecrets");
      // The same one every time, whatever order the this.service lists them in.
      texts.sort();
      if (texts.length > 1) {
        this.options.warn(
          `warning: ${texts.length} keychain items match ${host}; using the first in sorted order; "forget ${host}" removes them all`,
        );
      }
      return texts[0];
    });
  }

  async store(host: Hostname, secret: string): Promise<void> {
    const bytes = new TextEncoder().encode(secret);
    try {
      await this.attempt({ action: "write to", opensSession: true }, async (client) => {
        const { api } = client;
        const turn = this.takeTurnUnlessGnome(client, host);
        const session = client.session();
        const { gnome, searched } = await turn;
        /** Searched (again): an unlock may show an item of ours it hid. */
        const plan = async (found?: SearchResult) =>
          planWrite(
            api,
            found ?? (await api.searchItems(this.ours(host))),
            this.service,
            host,
            gnome,
          );
        const first = await plan(searched);
        let { write } = first;
        // A locked item shows gnome-keyring's hashed attributes, and a locked collection
        // hides its items (KeePassXC): whether one of them is ours shows only once it is
        // unlocked. A decision made before would create a second item beside ours after
        // the prompt, which later gets could read instead of the new one. So unlock
        // first (refused at once where no one can answer), then look again.
        if (first.toUnlock.length > 0) {
          await api.unlock(first.toUnlock);
          ({ write } = await plan());
        }
        const opened = await session;
        const encrypted = await (await opened.key()).encrypt(bytes);
        const writeTo = ({ existing, target, replace }: WritePlan) => {
          if (existing !== undefined) return api.setSecret(existing, encrypted, opened.path);
          if (target === undefined) throw new NoDefaultCollection();
          return api.createItem(
            target,
            `keyring:${host}@${this.service}`,
            this.ours(host),
            encrypted,
            opened.path,
            replace,
          );
        };
        try {
          await writeTo(write);
        } catch (error) {
          if (!isLockedError(error) || write.target === undefined) throw error;
          // Locked meanwhile (or, on gnome-keyring, a locked collection nobody asked
          // about): unlocked, it may show another item of ours.
          await api.unlock([write.target]);
          await writeTo((await plan()).write);
        }
        // The next store of this host (in this process, or one queued behind us) goes now.
        client.endTurn();
      });
    } finally {
      bytes.fill(0);
    }
  }

  // Silent however many it deletes: the protocol wants no output from a forget that worked.
  // Every matching item is deleted, another program's too (the user asked for the host to
  // be forgotten), so every one is unlocked first: a forget that could not look everywhere
  // fails rather than claim success.
  async forget(host: Hostname): Promise<void> {
    await this.attempt({ action: "delete from" }, async (client) => {
      const { api } = client;
      const { gnome, searched } = await this.takeTurnUnlessGnome(client, host);
      const { items } = await searchUnlocked(
        api,
        this.ours(host),
        EVERYTHING,
        async () => gnome,
        searched,
      );
      const deletes: Promise<boolean>[] = [];
      for (const item of items) deletes.push(deleteIfThere(api, item));
      await Promise.all(deletes);
      client.endTurn();
    });
  }

  async list(): Promise<Hostname[]> {
    return this.attempt({ action: "list the entries of" }, async (client) => {
      // Only the attributes are read: a locked item that shows them plainly stays locked.
      const { attributes } = await searchUnlocked(
        client.api,
        { service: this.service },
        { unlockReadable: () => false, answered: () => false },
        () => client.isGnomeKeyring(),
      );
      const hosts = new Set<Hostname>();
      for (const found of attributes) {
        // Ours are stored in normalized form; anything else under the same this.service name was
        // written by another program, and get/forget could not reach it by that name.
        const host = canonicalHostname(found.get("username") ?? "");
        if (host !== undefined) hosts.add(host);
      }
      return [...hosts].sort();
    });
  }

  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}

/** Unlocks every locked item found and every locked collection, and reads no attributes. */
const EVERYTHING: SearchScope = { unlockReadable: "all", answered: () => false };

/** One connection with its API and, once asked for, its encrypted session. */
class Client {
  readonly api: SecretServiceApi;
  private opened: Promise<OpenedSession> | undefined;
  private gnome: Promise<boolean> | undefined;
  private readonly connection: BusConnection;
  private turn: string | undefined;

  /** Our half of the key exchange, when made ahead (connect), else made when first needed. */
  private exchange: KeyExchange | undefined;

  constructor(connection: BusConnection, prompts: PromptPolicy, exchange?: KeyExchange) {
    this.connection = connection;
    this.api = new SecretServiceApi(connection, prompts);
    this.exchange = exchange;
  }

  /**
   * Whether the Secret Service is gnome-keyring: the connection that owns its name also owns
   * org.gnome.keyring. gnome-keyring lists a locked collection's items in a search (as the
   * API asks; KeePassXC and KWallet hide them), and needs no turns. Asked of the bus once;
   * false when either name has no owner (a service not started yet, a bus that hides names).
   */
  isGnomeKeyring(): Promise<boolean> {
    this.gnome ??= Promise.all([this.owner(SECRETS), this.owner("org.gnome.keyring")]).then(
      ([secrets, gnome]) => secrets !== undefined && secrets === gnome,
      () => false,
    );
    return this.gnome;
  }

  /**
   * Takes the bus-wide turn of `key` until endTurn() or the end of this connection. A bus
   * whose policy refuses us the name gives no turns: then every caller goes at once, as
   * before there were turns.
   */
  async takeTurn(key: string): Promise<void> {
    const name = `org.terraform_credentials_keychain.Store.h${fnv1a(key)}`;
    try {
      await this.connection.acquireName(name);
    } catch (error) {
      if (error instanceof DbusErrorReply) return;
      throw error;
    }
    this.turn = name;
  }

  /** Gives the turn taken last to whoever waits for it. */
  endTurn(): void {
    if (this.turn !== undefined) this.connection.releaseName(this.turn);
    this.turn = undefined;
  }

  /**
   * The session, opened on first use, with the key exchange made ahead when there is one.
   * Not awaited when a call fails first: its own failure is reported there.
   */
  session(): Promise<OpenedSession> {
    if (this.opened === undefined) {
      this.exchange ??= startKeyExchange();
      this.opened = this.api.openSession(this.exchange);
      this.opened.catch(ignore);
    }
    return this.opened;
  }

  /** Whether the Secret Service was started with --unlock (started-with-unlock.ts). */
  startedWithUnlock(): Promise<boolean> {
    return startedWithUnlock(this.connection);
  }

  close(): void {
    this.connection.close();
  }

  /** The unique name that owns `name`, or undefined when none does. */
  private async owner(name: string): Promise<string | undefined> {
    try {
      const [owner] = (
        await this.connection.call({
          ...BUS,
          member: "GetNameOwner",
          signature: "s",
          body: [name],
        })
      ).body;
      return typeof owner === "string" ? owner : undefined;
    } catch (error) {
      if (error instanceof DbusErrorReply) return undefined;
      throw error;
    }
  }
}

/**
 * The items get reads: ours when there are any; otherwise another program's that carry
 * our two attributes with our values (the search should have found no other, but a
 * service's search is not trusted to be exact).
 */
function candidatesOf(
  items: readonly string[],
  attributes: readonly (ReadonlyMap<string, string> | undefined)[],
  service: string,
  host: Hostname,
): string[] {
  const mine: string[] = [];
  const carryingOurs: string[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index] ?? "";
    const found = attributes[index];
    if (isOurs(found, service, host)) mine.push(item);
    else if (found?.get("service") === service && found.get("username") === host) {
      carryingOurs.push(item);
    }
  }
  return mine.length > 0 ? mine : carryingOurs;
}

/**
 * Ours: exactly the two attributes we write. A provider may add attributes of its own to
 * every item, which do not make an item another program's: gnome-keyring adds
 * `xdg:schema = org.freedesktop.Secret.Generic` to items created without a schema, and
 * KeePassXC its entry fields.
 */
function isOurs(
  attributes: ReadonlyMap<string, string> | undefined,
  service: string,
  host: Hostname,
): boolean {
  if (attributes === undefined) return false;
  let count = 0;
  for (const [name, value] of attributes) {
    if (PROVIDER_ATTRIBUTES.has(name)) continue;
    count++;
    if (name === "service" ? value !== service : name === "username" ? value !== host : true)
      return false;
  }
  return count === 2;
}

const PROVIDER_ATTRIBUTES = new Set<string>([
  "xdg:schema",
  // KeePassXC 2.7 reports the fields of the KeePass entry behind every item, and the content
  // type of a secret that is not text/plain (earlier versions wrote application/octet-stream).
  "FDO_SECRETS_CONTENT_TYPE",
  "Title",
  "UserName",
  "URL",
  "Notes",
  "Uuid",
  "Path",
]);

/**
 * How many times in a row get, store and forget search again at once after an item went;
 * then a fresh connection after a pause.
 */
const SEARCHES = 4;

/** Deletes `item`; false when it was already gone (another forget got there first). */
async function deleteIfThere(api: SecretServiceApi, item: string): Promise<boolean> {
  try {
    await api.deleteItem(item);
    return true;
  } catch (error) {
    if (error instanceof ItemGone) return false;
    throw error;
  }
}

/** What a store writes: the secret of `existing`, or a new item in `target`. */
interface WritePlan {
  /** The one item of ours, wherever it lives: it keeps its place, label and attributes. */
  readonly existing: string | undefined;
  /** Where the item goes: `existing`, or the default collection (undefined: there is none). */
  readonly target: string | undefined;
  /**
   * CreateItem's replace: two stores racing for one host leave one item, not two. Not when
   * another program's item matches: gnome-keyring would replace that one.
   */
  readonly replace: boolean;
}

/**
 * Decides where a store writes, from what a search found (ItemGone if one goes meanwhile),
 * and what must be unlocked before the decision holds: the locked items found, and the
 * default collection when it is locked and the provider hides a locked collection's items
 * (not gnome-keyring), as long as no item of ours is found.
 */
async function planWrite(
  api: SecretServiceApi,
  found: SearchResult,
  service: string,
  host: Hostname,
  gnome: boolean,
): Promise<{ readonly toUnlock: readonly string[]; readonly write: WritePlan }> {
  const items = [...found.unlocked, ...found.locked];
  const reads: Promise<ReadonlyMap<string, string> | undefined>[] = [];
  for (const item of items) reads.push(api.itemAttributes(item));
  const attributes = await Promise.all(reads);
  const mine: string[] = [];
  for (let index = 0; index < items.length; index++) {
    if (isOurs(attributes[index], service, host)) mine.push(items[index] ?? "");
  }
  // Which of several to keep is not ours to guess, and deleting them first would lose them
  // all if the write then failed: the user decides.
  if (mine.length > 1) throw severalItems(host, mine.length);
  const [existing] = mine;
  const toUnlock = [...found.locked];
  if (existing !== undefined) {
    return { toUnlock, write: { existing, target: existing, replace: false } };
  }
  const target = await api.readAlias("default");
  if (target !== undefined && !gnome && (await api.collectionLocked(target))) {
    toUnlock.push(target);
  }
  return { toUnlock, write: { existing, target, replace: items.length === 0 } };
}

/** Exported for unit tests. */
export function severalItems(host: Hostname, count: number): CliError {
  return new CliError(`${count} keychain items match ${host}, so nothing was stored`, undefined, {
    fix: { situation: "several-items", values: { HOST: host } },
  });
}

function utf8(bytes: Uint8Array, host: Hostname): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(`the keychain entry for ${host} is not UTF-8 text`, undefined, {
      fix: { situation: "entry-unreadable", values: { HOST: host } },
    });
  }
}

/** FNV-1a (32 bits) of `text`'s UTF-16 code units, as 8 hex digits: a bus name element. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

function ignore(): void {
  // Awaited (or deliberately not needed) elsewhere; this only keeps it from being unhandled.
}
