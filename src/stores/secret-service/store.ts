import { CliError } from "../../errors.ts";
import { fixFor, renderFix } from "../../fixes.ts";
import { canonicalHostname, type Hostname } from "../../protocol/hostname.ts";
import type { CredentialStore } from "../../protocol/credential-store.ts";
import type { Deadline } from "../../system/deadline.ts";
import { noAddressReason, sessionBusAddresses } from "./bus-address.ts";
import { BusConnection, BusUnavailable, DbusErrorReply } from "./connection.ts";
import { diagnose, keychainFailure } from "./failures.ts";
import {
  isLockedError,
  ItemGone,
  NoDefaultCollection,
  SecretServiceApi,
  UnexpectedReply,
  canShowPrompt,
  type EncryptedSecret,
  type OpenedSession,
  type PromptPolicy,
  type SearchResult,
} from "./secret-service.ts";
import { SessionError, startKeyExchange, type KeyExchange } from "./session.ts";
import { searchUnlocked, type SearchScope } from "./locked.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * How long an unlock prompt on screen may wait for its person, whatever `--timeout` says:
 * a prompt is not a hang, but Terraform has no timeout of its own, and a prompt on a screen
 * no one looks at must not hold `terraform init` for ever.
 */
const PROMPT_LIMIT_SECONDS = 300;

export interface SecretServiceStoreOptions {
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
  const { service, deadline } = options;
  let client: Client | undefined;

  /** The connection; with `withSession`, our half of the key exchange is made while it connects. */
  const connect = async (withSession: boolean): Promise<Client> => {
    if (client !== undefined) return client;
    const addresses = sessionBusAddresses(options.env);
    if (addresses.length === 0) {
      throw new BusUnavailable(noAddressReason(options.env));
    }
    let lastError: unknown;
    for (const address of addresses) {
      try {
        const opening = BusConnection.open(address, deadline);
        opening.catch(ignore);
        const exchange = withSession ? startKeyExchange() : undefined;
        client = new Client(await opening, exchange, {
          canPrompt: canShowPrompt(options.env),
          promptDeadline: () => Math.max(deadline.at, deadline.now() + PROMPT_LIMIT_SECONDS * 1000),
          afterPrompt: () => Math.max(deadline.at, deadline.now() + deadline.seconds * 1000),
        });
        return client;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  };

  /**
   * Runs `operation` on the connection, again on a fresh one after a failure that a later
   * attempt can get past (a busy bus, a service that stopped and is started anew), with
   * backoff and jitter, never past the deadline.
   */
  const attempt = async <T>(
    action: string,
    operation: (client: Client) => Promise<T>,
    withSession = false,
  ): Promise<T> => {
    let freshSessions = 0;
    for (let round = 0; ; round++) {
      try {
        return await operation(await connect(withSession));
      } catch (error) {
        if (error instanceof CliError) throw error;
        client?.close();
        client = undefined;
        const { transient } = diagnose(error, deadline.seconds);
        // A secret that did not decrypt gets one more try with a fresh session (a server with
        // another unlucky case than the two session.ts avoids), never a "no credentials".
        const retrySession = error instanceof SessionError && freshSessions++ === 0;
        const backoff = Math.min(1000, 50 * 2 ** round) * (1 + Math.random() / 2);
        if (!(transient || retrySession) || deadline.now() + backoff >= deadline.at) {
          throw keychainFailure(action, error, deadline.seconds);
        }
        await deadline.sleep(backoff);
      }
    }
  };

  const ours = (host: Hostname) => ({ service, username: host });
  /** The bus-wide turn that stores and forgets of one host take. */
  const turnOf = (host: Hostname) => `${service}\n${host}`;

  /**
   * One search and read of `host`'s items. An item deleted since the search throws ItemGone,
   * and so does a secret missing from GetSecrets' answer (gnome-keyring leaves out a deleted
   * item), unless this is the `last` search: then a missing secret is a malformed answer.
   */
  const read = async (
    client: Client,
    host: Hostname,
    last: boolean,
  ): Promise<string | undefined> => {
    const { api } = client;
    // Only for a warning when nothing is found: the alias rides along in the first write.
    const defaultCollection = api.readAlias("default");
    defaultCollection.catch(ignore);
    const session = client.session();
    // The secrets of what each search finds leave with its attribute calls.
    let secrets: Promise<Map<string, EncryptedSecret>> | undefined;
    // Only what get would read is unlocked: another program's locked item, whose
    // attributes say so, is not ours to prompt for.
    const { items, attributes } = await searchUnlocked(api, ours(host), {
      unlockReadable: (item, found) =>
        candidatesOf(found.items, found.attributes, service, host).includes(item),
      answered: (found) =>
        found.items.some(
          (item, index) =>
            !found.locked.has(item) && isOurs(found.attributes[index], service, host),
        ),
      searched(found) {
        // Protected before the secrets are asked for, while the session opens.
        secrets =
          found.length === 0
            ? undefined
            : Promise.all([session, options.beforeSecret?.()]).then(([opened]) => {
                const asked = api.getSecrets(found, opened.path);
                // The key's arithmetic overlaps the round trip of the calls just sent.
                opened.key().catch(ignore);
                return asked;
              });
        secrets?.catch(ignore);
      },
    });
    if (items.length === 0) {
      // Absence is no error, but a person running get should learn why terraform login
      // will fail.
      if ((await defaultCollection) === undefined) {
        options.warn(
          `warning: the keyring has no default collection, so nothing can be stored in it; before terraform login, ${renderFix(fixFor("no-default-collection"))}, or ${fixFor("keyring-on-desktop").effect}`,
        );
      }
      return undefined;
    }
    const opened = await session;
    const key = await opened.key();
    const candidates = candidatesOf(items, attributes, service, host);
    const found = (await secrets) ?? new Map<string, EncryptedSecret>();
    // gnome-keyring leaves out an item deleted since the search: search again.
    const missing = candidates.find((item) => !found.has(item));
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
    // A service that leaves out what it found (gnome-keyring skips locked items) must not
    // make get print {}, which reads as "not logged in".
    if (candidates.length > 0 && texts.length === 0) throw new UnexpectedReply("GetSecrets");
    // The same one every time, whatever order the service lists them in.
    texts.sort();
    if (texts.length > 1) {
      options.warn(
        `warning: ${texts.length} keychain items match ${host}; using the first in sorted order; "forget ${host}" removes them all`,
      );
    }
    return texts[0];
  };

  return {
    async get(host) {
      return attempt(
        "read from",
        (client) => searchAgainWhileGone((_round, last) => read(client, host, last)),
        true,
      );
    },

    async store(host, secret) {
      const bytes = new TextEncoder().encode(secret);
      try {
        await attempt(
          "write to",
          async (client) => {
            const { api } = client;
            // Stores (and forgets) of one host take turns: two that both find nothing would
            // otherwise both create an item (or, on KeePassXC 2.7.4, one would wait on a dialog
            // to replace the other's: keepassxreboot/keepassxc#9255).
            const searched = client.searchInTurn(turnOf(host), () => api.searchItems(ours(host)));
            const defaultCollection = client.defaultCollection();
            const session = client.session();
            await searchAgainWhileGone(async (round) => {
              const found = round === 0 ? await searched : await api.searchItems(ours(host));
              const collection = await defaultCollection;
              const planFrom = (search: SearchResult) =>
                planWrite(api, search, service, host, collection.path);
              /** Searched again: an unlock may show an item of ours it hid. */
              const planAgain = async () => planFrom(await api.searchItems(ours(host)));
              let plan = await planFrom(found);
              // A locked item shows gnome-keyring's hashed attributes, and a locked collection
              // hides its items (KeePassXC): whether one of them is ours shows only once it is
              // unlocked. A decision made before would create a second item beside ours after
              // the prompt, which later gets could read instead of the new one. So unlock
              // first (refused at once where no one can answer), then look again.
              const toUnlock = [...found.locked];
              if (plan.existing === undefined && collection.locked && plan.target !== undefined) {
                toUnlock.push(plan.target);
              }
              if (toUnlock.length > 0) {
                await api.unlock(toUnlock);
                plan = await planAgain();
              }
              const opened = await session;
              const encrypted = await (await opened.key()).encrypt(bytes);
              const write = ({ existing, target, replace }: WritePlan) => {
                if (existing !== undefined) return api.setSecret(existing, encrypted, opened.path);
                if (target === undefined) throw new NoDefaultCollection();
                return api.createItem(
                  target,
                  `keyring:${host}@${service}`,
                  ours(host),
                  encrypted,
                  opened.path,
                  replace,
                );
              };
              try {
                await write(plan);
              } catch (error) {
                if (!isLockedError(error) || plan.target === undefined) throw error;
                // Locked meanwhile: unlocked, it may show another item of ours.
                await api.unlock([plan.target]);
                await write(await planAgain());
              }
            });
            // The next store of this host (in this process, or one queued behind us) goes now.
            client.endTurn();
          },
          true,
        );
      } finally {
        bytes.fill(0);
      }
    },

    // Silent however many it deletes: the protocol wants no output from a forget that worked.
    // Every matching item is deleted, another program's too (the user asked for the host to
    // be forgotten), so every one is unlocked first: a forget that could not look everywhere
    // fails rather than claim success.
    async forget(host) {
      await attempt("delete from", async (client) => {
        const { api } = client;
        // Forgets of one host take turns with each other and with stores: KeePassXC 2.7.4
        // crashes on about ten deletes at once.
        const search = () => searchUnlocked(api, ours(host), EVERYTHING);
        const searched = client.searchInTurn(turnOf(host), search);
        await searchAgainWhileGone(async (round) => {
          const { items } = await (round === 0 ? searched : search());
          await Promise.all(items.map((item) => deleteIfThere(api, item)));
        });
        client.endTurn();
      });
    },

    async list() {
      return attempt("list the entries of", async ({ api }) => {
        // Only the attributes are read: a locked item that shows them plainly stays locked.
        const { attributes } = await searchAgainWhileGone(() =>
          searchUnlocked(api, { service }, { unlockReadable: () => false, answered: () => false }),
        );
        const hosts = new Set<Hostname>();
        for (const found of attributes) {
          // Ours are stored in normalized form; anything else under the same service name was
          // written by another program, and get/forget could not reach it by that name.
          const host = canonicalHostname(found.get("username") ?? "");
          if (host !== undefined) hosts.add(host);
        }
        return [...hosts].sort();
      });
    },

    close() {
      client?.close();
      client = undefined;
    },
  } satisfies SecretServiceStore;
}

/** Unlocks every locked item found and every locked collection. */
const EVERYTHING: SearchScope = { unlockReadable: () => true, answered: () => false };

/** One connection with its API and, once asked for, its encrypted session. */
class Client {
  readonly api: SecretServiceApi;
  private opened: Promise<OpenedSession> | undefined;
  private readonly connection: BusConnection;
  private readonly exchange: KeyExchange | undefined;
  private turn: string | undefined;

  constructor(connection: BusConnection, exchange: KeyExchange | undefined, prompts: PromptPolicy) {
    this.connection = connection;
    this.exchange = exchange;
    this.api = new SecretServiceApi(connection, prompts);
  }

  /**
   * Takes the bus-wide turn of `key` until endTurn() or the end of this connection; resolves
   * true when it was free at once. A bus whose policy refuses us the name gives no turns: then every
   * caller goes at once, as before there were turns.
   */
  takeTurn(key: string): Promise<boolean> {
    this.turn = `org.terraform_credentials_keychain.Store.h${fnv1a(key)}`;
    const taken = this.connection.acquireName(this.turn).catch((error: unknown) => {
      if (error instanceof DbusErrorReply) return true;
      throw error;
    });
    taken.catch(ignore);
    return taken;
  }

  /**
   * Takes the turn of `key` and runs `search`; resolves with a search made while the turn is
   * ours. The search leaves with the request for the turn, and is made again when we had to
   * wait: the first may predate the last change.
   */
  async searchInTurn<T>(key: string, search: () => Promise<T>): Promise<T> {
    const turn = this.takeTurn(key);
    const early = search();
    early.catch(ignore);
    return (await turn) ? await early : await search();
  }

  /** Gives the turn taken last to whoever waits for it. */
  endTurn(): void {
    if (this.turn !== undefined) this.connection.releaseName(this.turn);
    this.turn = undefined;
  }

  /**
   * The default collection (`path` undefined when there is none) and whether it is locked,
   * for store: the second question leaves as soon as the first is answered, while the other
   * calls of the first write are still on their way.
   */
  defaultCollection(): Promise<{ path: string | undefined; locked: boolean }> {
    const asked = this.api.readAlias("default").then(async (path) => ({
      path,
      locked: path === undefined ? false : await this.api.collectionLocked(path),
    }));
    asked.catch(ignore);
    return asked;
  }

  /**
   * The session, opened on first use. Asked for in the same turn as the first calls, its
   * OpenSession leaves in their write.
   */
  session(): Promise<OpenedSession> {
    if (this.opened === undefined) {
      this.opened = this.api.openSession(this.exchange ?? startKeyExchange());
      this.opened.catch(ignore);
    }
    return this.opened;
  }

  close(): void {
    this.connection.close();
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
  const mine = items.filter((_, index) => isOurs(attributes[index], service, host));
  if (mine.length > 0) return mine;
  return items.filter((_, index) => {
    const found = attributes[index];
    return found?.get("service") === service && found.get("username") === host;
  });
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

/** How many searches get and store make before an item that keeps disappearing is an error. */
const SEARCHES = 4;

/**
 * Runs `operation` (round 0, 1, ...) again while it fails with ItemGone: an item deleted
 * between the search and the next call is normal, and the next round searches again. The
 * `last` round's ItemGone is thrown (attempt() then tries on a fresh connection).
 */
async function searchAgainWhileGone<T>(
  operation: (round: number, last: boolean) => Promise<T>,
): Promise<T> {
  for (let round = 0; ; round++) {
    const last = round === SEARCHES - 1;
    try {
      return await operation(round, last);
    } catch (error) {
      if (last || !(error instanceof ItemGone)) throw error;
    }
  }
}

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

/** Decides where a store writes, from what a search found (ItemGone if one goes meanwhile). */
async function planWrite(
  api: SecretServiceApi,
  found: SearchResult,
  service: string,
  host: Hostname,
  defaultCollection: string | undefined,
): Promise<WritePlan> {
  const items = [...found.unlocked, ...found.locked];
  const attributes = await Promise.all(items.map((item) => api.itemAttributes(item)));
  const mine = items.filter((_, index) => isOurs(attributes[index], service, host));
  // Which of several to keep is not ours to guess, and deleting them first would lose them
  // all if the write then failed: the user decides.
  if (mine.length > 1) throw severalItems(host, mine.length);
  const [existing] = mine;
  return { existing, target: existing ?? defaultCollection, replace: items.length === 0 };
}

function severalItems(host: Hostname, count: number): CliError {
  return new CliError(
    `${count} keychain items match ${host}, so nothing was stored; "forget ${host}" removes them all, then store again`,
  );
}

function utf8(bytes: Uint8Array, host: Hostname): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(
      `the keychain entry for ${host} is not UTF-8 text; run "terraform logout ${host}" (or "tofu logout ${host}") and log in again`,
    );
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
