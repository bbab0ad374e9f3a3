import { KeyringLocked, type SearchResult } from "./secret-service.ts";

/** The calls of the Secret Service API that a search through locked places makes. */
export interface LockedPlacesApi {
  searchItems(attributes: Readonly<Record<string, string>>): Promise<SearchResult>;
  itemAttributes(item: string): Promise<Map<string, string>>;
  collections(): Promise<string[]>;
  collectionLocked(collection: string): Promise<boolean>;
  unlock(objects: readonly string[]): Promise<void>;
}

/**
 * What a search found, every item with its attributes (same order, none when the scope
 * unlocks "all"), each of them readable.
 */
interface Found {
  readonly items: readonly string[];
  readonly attributes: readonly ReadonlyMap<string, string>[];
  /** The items that are locked: only those the `SearchScope` lets be. */
  readonly locked: ReadonlySet<string>;
}

/** Which locked places a caller needs opened, beyond those whose items cannot be read. */
export interface SearchScope {
  /**
   * Whether the locked `item`, whose attributes can be read, must be unlocked too; "all"
   * unlocks every locked item, and then no attributes are read at all (forget).
   */
  readonly unlockReadable: "all" | ((item: string, found: Found) => boolean);
  /** Whether what was found already answers, so that no locked collection needs a look. */
  answered(found: Found): boolean;
}

/**
 * Searches for items whose attributes include `query`, so that the answer holds for every
 * place where such an item could be: a locked place is unlocked first (the `Unlock` call
 * and its prompt, as secret-tool does), and where it cannot be (no display, the prompt
 * dismissed) this throws `KeyringLocked`, never "nothing there". The spec allows "no
 * credentials" only when the helper "definitively has no credentials for the given host".
 *
 * Unlocked, as `scope` needs: every locked item whose attributes do not show what it is
 * (gnome-keyring loaded locked from disk gives them only hashed, `gkr:compat:hashed:NAME`:
 * that is no proof the item is another program's); locked items `scope.unlockReadable`
 * names; and, unless `scope.answered` or the provider `listsLockedItems` (asked only then),
 * every locked collection (KeePassXC and KWallet hide a locked collection's items from a
 * search altogether; a provider that lists them in the search's second list, as the API
 * asks, hides nothing, and its collections need no look). One `Unlock` for all of them, then one
 * search again. `first` is the first search, when the caller has made it already.
 */
export async function searchUnlocked(
  api: LockedPlacesApi,
  query: Readonly<Record<string, string>>,
  scope: SearchScope,
  listsLockedItems: () => Promise<boolean>,
  first?: SearchResult,
): Promise<Found> {
  for (let round = 0; ; round++) {
    const { unlocked, locked } =
      round === 0 && first !== undefined ? first : await api.searchItems(query);
    const items = [...unlocked, ...locked];
    const { unlockReadable } = scope;
    // A few hundred reads in flight at a time, not one per item at once: list's 60,000
    // items took 270 MB with every call and reply held together.
    const attributes =
      unlockReadable === "all"
        ? []
        : await mapLimited(items, ATTRIBUTE_READS, (item) => api.itemAttributes(item));
    const found: Found = { items, attributes, locked: new Set(locked) };
    const hidden: string[] = [];
    for (const item of locked) {
      if (
        unlockReadable === "all" ||
        !showsWhatItIs(attributes[items.indexOf(item)], query) ||
        unlockReadable(item, found)
      ) {
        hidden.push(item);
      }
    }
    const lockedOnes =
      scope.answered(found) || (await listsLockedItems()) ? [] : await lockedCollections(api);
    const toUnlock = [...lockedOnes, ...hidden];
    if (toUnlock.length === 0) return found;
    // An Unlock that completed and left them locked: nothing more can be done here.
    if (round > 0) throw new KeyringLocked("dismissed");
    await api.unlock(toUnlock);
  }
}

/** How many attribute reads a search keeps in flight; all of a few leave in one write. */
const ATTRIBUTE_READS = 256;

/** `use` of every item, in order, with at most `width` running at a time. */
async function mapLimited<T, R>(
  items: readonly T[],
  width: number,
  use: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await use(items[index] as T);
    }
  };
  const workers: Promise<void>[] = [];
  while (workers.length < Math.min(width, items.length)) workers.push(worker());
  await Promise.all(workers);
  return results;
}

/** The prefix gnome-keyring gives the attributes of a locked item: their values are hashes. */
const HASHED = "gkr:compat:hashed:";

/**
 * Whether the attributes show what the item is: none hashed, and the ones searched for there
 * in plain text (a search only finds an item that carries them).
 */
function showsWhatItIs(
  attributes: ReadonlyMap<string, string> | undefined,
  query: Readonly<Record<string, string>>,
): boolean {
  if (attributes === undefined) return false;
  for (const name of attributes.keys()) if (name.startsWith(HASHED)) return false;
  for (const name of Object.keys(query)) if (attributes.get(name) !== query[name]) return false;
  return true;
}

/** Of the service's collections, those that are locked, asked in one write. */
async function lockedCollections(api: LockedPlacesApi): Promise<string[]> {
  const collections = await api.collections();
  const asked: Promise<boolean>[] = [];
  for (const collection of collections) asked.push(api.collectionLocked(collection));
  const locked = await Promise.all(asked);
  const lockedOnes: string[] = [];
  for (let index = 0; index < collections.length; index++) {
    if (locked[index] === true) lockedOnes.push(collections[index] ?? "");
  }
  return lockedOnes;
}
