import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  searchUnlocked,
  type LockedPlacesApi,
  type SearchScope,
} from "../../../../src/stores/secret-service/locked.ts";
import { KeyringLocked } from "../../../../src/stores/secret-service/secret-service.ts";

const QUERY = { service: "terraform-credentials", username: "app.example.com" };
const OURS = new Map(Object.entries(QUERY));
/** gnome-keyring's attributes of a locked item loaded from disk. */
const HASHED = new Map([
  ["gkr:compat:hashed:service", "3b1f…"],
  ["gkr:compat:hashed:username", "9a0c…"],
]);
const THEIRS = new Map([...OURS, ["origin", "other"]]);

interface Item {
  readonly collection: string;
  readonly attributes: Map<string, string>;
  /** What its attributes read as once its collection is unlocked. */
  readonly unlockedAttributes?: Map<string, string>;
}

/**
 * A Secret Service with collections, some locked, and items in them; `unlock` opens what it
 * is given when `canUnlock`, else throws as a client without a display does.
 */
function fakeService(
  collections: Record<string, boolean>,
  items: Record<string, Item>,
  canUnlock = true,
) {
  const locked = new Map(Object.entries(collections));
  const unlockCalls: string[][] = [];
  const isLocked = (item: string) => locked.get(items[item]!.collection) === true;
  const api: LockedPlacesApi = {
    async searchItems() {
      const all = Object.keys(items);
      return { unlocked: all.filter((i) => !isLocked(i)), locked: all.filter(isLocked) };
    },
    async itemAttributes(item) {
      const { attributes, unlockedAttributes } = items[item]!;
      return isLocked(item) ? attributes : (unlockedAttributes ?? attributes);
    },
    async collections() {
      return [...locked.keys()];
    },
    async collectionLocked(collection) {
      return locked.get(collection) === true;
    },
    async unlock(objects) {
      unlockCalls.push([...objects]);
      if (!canUnlock) throw new KeyringLocked("no-prompt");
      for (const object of objects) {
        const collection = items[object]?.collection ?? object;
        locked.set(collection, false);
      }
    },
  };
  return { api, unlockCalls };
}

const GET_LIKE: SearchScope = {
  unlockReadable: () => true,
  answered: (found) => found.items.some((item) => !found.locked.has(item)),
};
const LIST_LIKE: SearchScope = { unlockReadable: () => false, answered: () => false };
/** A provider that hides a locked collection's items from a search (KeePassXC, KWallet). */
const HIDES_LOCKED = async () => false;

describe("searchUnlocked", () => {
  test("everything unlocked: one search, no Unlock", async () => {
    const { api, unlockCalls } = fakeService(
      { "/c/login": false },
      { "/c/login/1": { collection: "/c/login", attributes: OURS } },
    );
    const found = await searchUnlocked(api, QUERY, GET_LIKE, HIDES_LOCKED);
    assert.deepEqual(found.items, ["/c/login/1"]);
    assert.deepEqual(unlockCalls, []);
  });

  test("a locked item with hashed attributes is unlocked and then read, never taken for another program's", async () => {
    const { api, unlockCalls } = fakeService(
      { "/c/login": true },
      { "/c/login/1": { collection: "/c/login", attributes: HASHED, unlockedAttributes: OURS } },
    );
    const found = await searchUnlocked(api, QUERY, LIST_LIKE, HIDES_LOCKED);
    assert.deepEqual(found.attributes, [OURS]);
    assert.deepEqual(unlockCalls, [["/c/login", "/c/login/1"]]);
  });

  test("a locked collection that hides its items (KeePassXC) is unlocked before nothing is believed", async () => {
    const { api, unlockCalls } = fakeService({ "/c/db": true, "/c/session": false }, {});
    const found = await searchUnlocked(api, QUERY, GET_LIKE, HIDES_LOCKED);
    assert.deepEqual(found.items, []);
    assert.deepEqual(unlockCalls, [["/c/db"]]);
  });

  test("where no prompt can be shown, a locked place is an error, not nothing found", async () => {
    const { api } = fakeService({ "/c/login": true }, {}, false);
    await assert.rejects(searchUnlocked(api, QUERY, GET_LIKE, HIDES_LOCKED), KeyringLocked);
  });

  test("an answer found unlocked needs no look into locked collections", async () => {
    const { api, unlockCalls } = fakeService(
      { "/c/login": false, "/c/other": true },
      { "/c/login/1": { collection: "/c/login", attributes: OURS } },
    );
    await searchUnlocked(api, QUERY, GET_LIKE, HIDES_LOCKED);
    assert.deepEqual(unlockCalls, []);
  });

  test("a locked item whose plain attributes show it is another program's is let be when the scope says so", async () => {
    const { api, unlockCalls } = fakeService(
      { "/c/login": false, "/c/other": true },
      {
        "/c/login/1": { collection: "/c/login", attributes: OURS },
        "/c/other/1": { collection: "/c/other", attributes: THEIRS },
      },
    );
    const found = await searchUnlocked(
      api,
      QUERY,
      { ...GET_LIKE, unlockReadable: () => false },
      HIDES_LOCKED,
    );
    assert.deepEqual(unlockCalls, []);
    assert.deepEqual([...found.locked], ["/c/other/1"]);
  });

  test("an Unlock that leaves the place locked is an error, not a loop", async () => {
    const { api } = fakeService({ "/c/login": true }, {});
    const stuck: LockedPlacesApi = { ...api, unlock: async () => undefined };
    await assert.rejects(searchUnlocked(stuck, QUERY, GET_LIKE, HIDES_LOCKED), KeyringLocked);
  });

  test("a provider that lists locked items (gnome-keyring): nothing found is the answer, no collection is asked about", async () => {
    const { api, unlockCalls } = fakeService({ "/c/login": true }, {});
    const asked: string[] = [];
    const counted: LockedPlacesApi = {
      ...api,
      collections: async () => {
        asked.push("Collections");
        return api.collections();
      },
    };
    const found = await searchUnlocked(counted, QUERY, GET_LIKE, async () => true);
    assert.deepEqual([found.items, asked, unlockCalls], [[], [], []]);
  });

  test('"all" unlocks every locked item without reading an attribute', async () => {
    const { api, unlockCalls } = fakeService(
      { "/c/login": true },
      { "/c/login/1": { collection: "/c/login", attributes: THEIRS } },
    );
    const noAttributes: LockedPlacesApi = {
      ...api,
      itemAttributes: async () => assert.fail("an attribute was read"),
    };
    const found = await searchUnlocked(
      noAttributes,
      QUERY,
      { unlockReadable: "all", answered: () => false },
      async () => true,
    );
    assert.deepEqual(unlockCalls, [["/c/login/1"]]);
    assert.deepEqual(found.items, ["/c/login/1"]);
  });
});
