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

const SERVICE = "terraform-credentials";
const HOST = "app.example.com" as Hostname;

/** Credential Manager in memory: target name to user name and blob. */
function fakeCredentialManager() {
  const entries = new Map<string, { userName: string; blob: Uint8Array }>();
  const api: CredentialManagerApi = {
    read: (target) => {
      const entry = entries.get(target);
      return entry === undefined ? undefined : new Uint8Array(entry.blob);
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
  test("stores an object as raw UTF-8 under <host>.<service> with the host as user name", async () => {
    const { api, entries } = fakeCredentialManager();
    const store = createCredentialManagerStore(api, SERVICE, unguarded);
    const object = '{"token":"tök-😀"}';
    await store.store(HOST, object);
    const entry = entries.get(`${HOST}.${SERVICE}`);
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
    assert.equal(entries.get(`${HOST}.${SERVICE}`)?.blob.byteLength, CRED_MAX_CREDENTIAL_BLOB_SIZE);
  });

  test("absence is undefined for get and success for forget", async () => {
    const store = createCredentialManagerStore(fakeCredentialManager().api, SERVICE, unguarded);
    assert.equal(await store.get(HOST), undefined);
    await store.forget(HOST);
  });

  test("a blob that is not UTF-8 names the host and the fix", async () => {
    const { api, entries } = fakeCredentialManager();
    entries.set(`${HOST}.${SERVICE}`, { userName: HOST, blob: Uint8Array.of(0xff, 0xfe) });
    const store = createCredentialManagerStore(api, SERVICE, unguarded);
    await assert.rejects(
      store.get(HOST),
      /not UTF-8 text; run "terraform logout app\.example\.com"/,
    );
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
        /^could not read from Windows Credential Manager: .*no user profile loaded.*--backend pass/,
      );
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
  test("keeps the normalized hosts of this service, sorted, and nothing else", () => {
    const entry = (targetName: string, userName: string) => ({ targetName, userName, blobSize: 3 });
    assert.deepEqual(
      hostsOf(
        [
          entry(`b.example.com.${SERVICE}`, "b.example.com"),
          entry(`a.example.com.${SERVICE}`, "a.example.com"),
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
