import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CliError } from "../../../../src/errors.ts";
import type { Hostname } from "../../../../src/protocol/hostname.ts";
import {
  CRED_MAX_CREDENTIAL_BLOB_SIZE,
  ERROR_NO_SUCH_LOGON_SESSION,
  Win32Error,
  type CredentialManagerApi,
} from "../../../../src/stores/credential-manager/api.ts";
import {
  createCredentialManagerStore,
  hostsOf,
} from "../../../../src/stores/credential-manager/store.ts";
import { entryName, legacyEntryName } from "../../../../src/stores/windows-entry-name.ts";

const SERVICE = "terraform-credentials";
const HOST = "app.example.com" as Hostname;

/** Credential Manager in memory: target name to user name and blob. */
function fakeCredentialManager() {
  const entries = new Map<string, { userName: string; blob: Uint8Array }>();
  const api: CredentialManagerApi = {
    read: (target) => {
      const entry = entries.get(target);
      return entry === undefined
        ? undefined
        : { userName: entry.userName, blob: new Uint8Array(entry.blob) };
    },
    write: (target, userName, blob) =>
      void entries.set(target, { userName, blob: new Uint8Array(blob) }),
    delete: (target) => entries.delete(target),
    list: () =>
      [...entries].map(([targetName, { userName, blob }]) => ({
        targetName,
        userName,
        blobSize: blob.byteLength,
      })),
  };
  return { api, entries };
}

const unguarded = <T>(call: () => T): T => call();

describe("Credential Manager store", () => {
  test("stores an object as raw UTF-8 under <service>/<host> with the host as user name", async () => {
    const { api, entries } = fakeCredentialManager();
    const store = createCredentialManagerStore(api, SERVICE, unguarded);
    const object = '{"token":"tök-😀"}';
    await store.store(HOST, object);
    const entry = entries.get(`${SERVICE}/${HOST}`);
    assert.equal(entry?.userName, HOST);
    assert.deepEqual(Buffer.from(entry.blob), Buffer.from(object, "utf8"));
    assert.equal(await store.get(HOST), object);
  });

  test(`keeps ${CRED_MAX_CREDENTIAL_BLOB_SIZE} bytes and refuses one more without writing`, async () => {
    const { api, entries } = fakeCredentialManager();
    const store = createCredentialManagerStore(api, SERVICE, unguarded);
    const at = `"${"x".repeat(CRED_MAX_CREDENTIAL_BLOB_SIZE - 2)}"`;
    await store.store(HOST, at);
    await assert.rejects(store.store(HOST, `${at} `), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.match(error.message, /2561 bytes.*at most 2560 bytes per entry; nothing was stored/);
      return true;
    });
    assert.equal(entries.get(`${SERVICE}/${HOST}`)?.blob.byteLength, CRED_MAX_CREDENTIAL_BLOB_SIZE);
  });

  test("absence is undefined for get and success for forget", async () => {
    const store = createCredentialManagerStore(fakeCredentialManager().api, SERVICE, unguarded);
    assert.equal(await store.get(HOST), undefined);
    await store.forget(HOST);
  });

  test("a blob that is not UTF-8 names the host and the fix", async () => {
    const { api, entries } = fakeCredentialManager();
    entries.set(`${SERVICE}/${HOST}`, { userName: HOST, blob: Uint8Array.of(0xff, 0xfe) });
    const store = createCredentialManagerStore(api, SERVICE, unguarded);
    await assert.rejects(store.get(HOST), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.match(error.message, /app\.example\.com is not UTF-8 text$/);
      assert.deepEqual(error.fix, {
        situation: "entry-unreadable",
        values: { HOST: "app.example.com" },
      });
      return true;
    });
  });

  test("no user profile loaded (ERROR_NO_SUCH_LOGON_SESSION) gets its own line", async () => {
    const api: CredentialManagerApi = {
      ...fakeCredentialManager().api,
      read: () => {
        throw new Win32Error("CredReadW", ERROR_NO_SUCH_LOGON_SESSION);
      },
    };
    const store = createCredentialManagerStore(api, SERVICE, unguarded);
    await assert.rejects(store.get(HOST), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.match(
        error.message,
        /^could not read from Windows Credential Manager: .*no user profile loaded/,
      );
      assert.deepEqual(error.fix, { situation: "credential-manager-unusable" });
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
  });

  test("any other Windows error is named by its call and code", async () => {
    const api: CredentialManagerApi = {
      ...fakeCredentialManager().api,
      write: () => {
        throw new Win32Error("CredWriteW", 5);
      },
    };
    const store = createCredentialManagerStore(api, SERVICE, unguarded);
    await assert.rejects(
      store.store(HOST, "{}"),
      /^CliError: could not write to Windows Credential Manager: CredWriteW failed with Windows error 5$/,
    );
  });

  // (a.example, --service prod.work) and (a.example.prod, --service work): one name once.
  const shortHost = "a.example" as Hostname;
  const longHost = "a.example.prod" as Hostname;
  const longService = "prod.work";
  const shortService = "work";

  test("entry names of two profiles differ where host and service share dots", () => {
    assert.notEqual(entryName(longService, shortHost), entryName(shortService, longHost));
    // What earlier versions named them: one and the same entry.
    assert.equal(legacyEntryName(longService, shortHost), legacyEntryName(shortService, longHost));
  });

  test("profiles whose host and service share dots keep their own tokens", async () => {
    const { api, entries } = fakeCredentialManager();
    const a = createCredentialManagerStore(api, longService, unguarded);
    const b = createCredentialManagerStore(api, shortService, unguarded);
    await a.store(shortHost, '{"token":"A"}');
    await b.store(longHost, '{"token":"B"}');
    assert.equal(await a.get(shortHost), '{"token":"A"}');
    assert.equal(await b.get(longHost), '{"token":"B"}');
    await a.forget(shortHost);
    assert.equal(await b.get(longHost), '{"token":"B"}');
    assert.deepEqual(await b.list(), [longHost]);
    assert.equal(entries.size, 1);
  });

  test("an earlier version's entry of another profile is neither read nor forgotten", async () => {
    const { api, entries } = fakeCredentialManager();
    // As earlier versions stored (a.example.prod, --service work).
    const legacy = legacyEntryName(shortService, longHost);
    entries.set(legacy, { userName: longHost, blob: Buffer.from('{"token":"B"}') });
    const a = createCredentialManagerStore(api, longService, unguarded);
    assert.equal(await a.get(shortHost), undefined);
    assert.deepEqual(await a.list(), []);
    await a.forget(shortHost);
    await a.store(shortHost, '{"token":"A"}');
    assert.equal(entries.get(legacy)?.userName, longHost);
    const b = createCredentialManagerStore(api, shortService, unguarded);
    assert.equal(await b.get(longHost), '{"token":"B"}');
    assert.equal(await a.get(shortHost), '{"token":"A"}');
  });

  test("an earlier version's own entry is read, listed, moved by a store and forgotten", async () => {
    const { api, entries } = fakeCredentialManager();
    const legacy = legacyEntryName(SERVICE, HOST);
    entries.set(legacy, { userName: HOST, blob: Buffer.from('{"token":"old"}') });
    const store = createCredentialManagerStore(api, SERVICE, unguarded);
    assert.equal(await store.get(HOST), '{"token":"old"}');
    assert.deepEqual(await store.list(), [HOST]);
    await store.store(HOST, '{"token":"new"}');
    assert.deepEqual([...entries.keys()], [entryName(SERVICE, HOST)]);
    assert.equal(await store.get(HOST), '{"token":"new"}');
    entries.set(legacy, { userName: HOST, blob: Buffer.from('{"token":"old"}') });
    await store.forget(HOST);
    assert.equal(entries.size, 0);
  });

  test("every call goes through the guard, whose refusal is passed on", async () => {
    const refused = new CliError("deadline");
    const store = createCredentialManagerStore(fakeCredentialManager().api, SERVICE, () => {
      throw refused;
    });
    for (const call of [
      () => store.get(HOST),
      () => store.store(HOST, "{}"),
      () => store.forget(HOST),
      () => store.list(),
    ]) {
      await assert.rejects(call(), (error) => error === refused);
    }
  });
});

describe("hostsOf", () => {
  test("keeps the normalized hosts of this service, in either name, sorted, once, and nothing else", () => {
    const entry = (targetName: string, userName: string) => ({ targetName, userName, blobSize: 3 });
    assert.deepEqual(
      hostsOf(
        [
          entry(`${SERVICE}/b.example.com`, "b.example.com"),
          entry(`a.example.com.${SERVICE}`, "a.example.com"),
          entry(`${SERVICE}/a.example.com`, "a.example.com"),
          entry(`other/d.example.com`, "d.example.com"),
          entry(`${SERVICE}/e.example.com`, "f.example.com"),
          entry("a.example.com.other", "a.example.com"),
          entry(`c.example.com.${SERVICE}`, "someone-else"),
          entry(`UPPER.example.com.${SERVICE}`, "UPPER.example.com"),
          entry(`x.${SERVICE}.${SERVICE}`, `x.${SERVICE}`),
          entry("git:https://github.com", "user"),
          entry(SERVICE, ""),
        ],
        SERVICE,
      ),
      ["a.example.com", "b.example.com", `x.${SERVICE}`],
    );
  });

  test("no credential at all lists nothing", () => {
    assert.deepEqual(hostsOf([], SERVICE), []);
  });
});
