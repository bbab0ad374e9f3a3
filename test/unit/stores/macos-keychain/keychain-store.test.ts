import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Credential, EntryOptions } from "@napi-rs/keyring";
import { CliError, ExitCode } from "../../../../src/errors.ts";
import type { KeyringBinding } from "../../../../src/stores/macos-keychain/load-keyring.ts";
import type { Hostname } from "../../../../src/protocol/hostname.ts";
import { deadlineIn } from "../../../../src/system/deadline.ts";
import {
  createKeychainStore as createStore,
  describeKeychainProblem,
} from "../../../../src/stores/macos-keychain/keychain-store.ts";

// The Security framework's own texts for its status codes, as the binding passes them on.
const LOCKED = "Platform secure storage failure: User interaction is not allowed.";
const DENIED = "Platform secure storage failure: User canceled the operation.";
const NO_KEYCHAIN =
  "Couldn't access platform secure storage: The specified keychain could not be found.";

const SERVICE = "terraform-credentials";
const HOST = "app.example.com" as Hostname;

const createKeychainStore = (binding: KeyringBinding, service: string) =>
  createStore(binding, service, deadlineIn(30));

describe("describeKeychainProblem", () => {
  test("a keychain that cannot prompt is explained as locked, with the command that unlocks it", () => {
    const advice = describeKeychainProblem(LOCKED);
    assert.match(advice, /locked/);
    assert.match(advice, /security unlock-keychain/);
  });

  test("a refused or cancelled prompt says to choose Always Allow", () => {
    for (const detail of [
      DENIED,
      "Platform secure storage failure: The user name or passphrase you entered is not correct.",
    ]) {
      assert.match(describeKeychainProblem(detail), /refused.*"Always Allow"/);
    }
  });

  test("no default keychain says which keychain to make the default", () => {
    assert.match(describeKeychainProblem(NO_KEYCHAIN), /no default keychain.*"login"/);
  });

  test("a recognised problem is one short line that says what to do, without the framework's text", () => {
    for (const detail of [LOCKED, DENIED, NO_KEYCHAIN]) {
      const message = `could not write to the keychain: ${describeKeychainProblem(`${detail}\n`)}`;
      assert.ok(message.length < 200, `${message.length} chars: ${message}`);
      assert.ok(!/[\r\n]/.test(message), message);
      assert.ok(!/Platform secure storage|Couldn't access/.test(message), message);
      assert.match(message, /[.:;] .*(run|unlock|open)/i, "says what to do");
    }
  });

  test("passes an unrecognised message through without guessing a cause", () => {
    const advice = describeKeychainProblem("Attribute 'x' is not valid");
    assert.ok(advice.includes("Attribute 'x' is not valid"), advice);
    assert.ok(!/locked|refused|default keychain|--backend/.test(advice), advice);
  });
});

type Operation = "constructor" | "getSecret" | "setSecret" | "deleteCredential" | "findCredentials";

/**
 * A stand-in for @napi-rs/keyring: entries live in a map keyed by service and account, and
 * every construction and lookup is recorded. `failure` makes one kind of call throw.
 */
function createFakeKeyring(found: readonly Credential[] = []) {
  const state = {
    secrets: new Map<string, Uint8Array>(),
    constructed: [] as {
      service: string;
      account: string;
      options: EntryOptions | null | undefined;
    }[],
    findCalls: [] as unknown[][],
    failure: undefined as { in: Operation; error: unknown } | undefined,
  };
  const key = (service: string, account: string) => `${service}\u0000${account}`;
  const maybeFail = (operation: Operation) => {
    if (state.failure?.in === operation) throw state.failure.error;
  };

  class FakeEntry {
    readonly #key: string;

    constructor(service: string, account: string, options?: EntryOptions | null) {
      state.constructed.push({ service, account, options });
      maybeFail("constructor");
      this.#key = key(service, account);
    }

    getSecret(): number[] | null {
      maybeFail("getSecret");
      const secret = state.secrets.get(this.#key);
      return secret === undefined ? null : [...secret];
    }

    setSecret(secret: Uint8Array): void {
      maybeFail("setSecret");
      state.secrets.set(this.#key, Uint8Array.from(secret));
    }

    deleteCredential(): boolean {
      maybeFail("deleteCredential");
      return state.secrets.delete(this.#key);
    }
  }

  // The binding's asynchronous API, which the store uses: the same calls, settled later.
  class FakeAsyncEntry {
    readonly #entry: FakeEntry;

    constructor(service: string, account: string, options?: EntryOptions | null) {
      this.#entry = new FakeEntry(service, account, options);
    }

    async getSecret(): Promise<number[] | null> {
      return this.#entry.getSecret();
    }

    async setSecret(secret: Uint8Array): Promise<void> {
      this.#entry.setSecret(secret);
    }

    async deleteCredential(): Promise<boolean> {
      return this.#entry.deleteCredential();
    }
  }

  const binding = {
    AsyncEntry: FakeAsyncEntry,
    async findCredentialsAsync(...args: unknown[]): Promise<Credential[]> {
      state.findCalls.push(args);
      maybeFail("findCredentials");
      return [...found];
    },
  };
  // The fake has only what the store uses; the real binding has more (Entry, ...).
  return { binding: binding as unknown as KeyringBinding, state, key };
}

describe("createKeychainStore", () => {
  test("opens each entry with the service, the host as account, and no other option", async () => {
    const { binding, state } = createFakeKeyring();
    const store = createKeychainStore(binding, "work");
    await store.store(HOST, '{"token":"t"}');
    await store.get(HOST);
    await store.forget(HOST);
    assert.deepEqual(state.constructed, [
      { service: "work", account: HOST, options: undefined },
      { service: "work", account: HOST, options: undefined },
      { service: "work", account: HOST, options: undefined },
    ]);
  });

  test("get returns undefined, not null, when there is no entry", async () => {
    const { binding } = createFakeKeyring();
    assert.equal(await createKeychainStore(binding, SERVICE).get(HOST), undefined);
  });

  test("store writes the text as the entry's secret in UTF-8, and get reads it back", async () => {
    const { binding, state, key } = createFakeKeyring();
    const store = createKeychainStore(binding, SERVICE);
    const secret = '{"token":"tök-😀","n":1.0e+2}';
    await store.store(HOST, secret);
    assert.deepEqual(
      state.secrets.get(key(SERVICE, HOST)),
      new Uint8Array(Buffer.from(secret, "utf8")),
    );
    assert.equal(await store.get(HOST), secret);
  });

  test("get refuses an entry whose bytes are not UTF-8, without quoting them", async () => {
    const { binding, state, key } = createFakeKeyring();
    state.secrets.set(key(SERVICE, HOST), Uint8Array.from([0x7b, 0xff, 0x7d]));
    await assert.rejects(createKeychainStore(binding, SERVICE).get(HOST), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.match(error.message, /is not UTF-8 text/);
      return true;
    });
  });

  test("services keep separate entries for the same host", async () => {
    const { binding } = createFakeKeyring();
    await createKeychainStore(binding, "personal").store(HOST, '{"token":"p"}');
    assert.equal(await createKeychainStore(binding, "work").get(HOST), undefined);
  });

  test("forget deletes the entry, and succeeds when there is none", async () => {
    const { binding, state } = createFakeKeyring();
    const store = createKeychainStore(binding, SERVICE);
    await store.store(HOST, '{"token":"t"}');
    await store.forget(HOST);
    assert.equal(state.secrets.size, 0);
    await store.forget(HOST);
    assert.equal(await store.get(HOST), undefined);
  });

  test("list returns sorted, normalized, de-duplicated hosts and skips accounts that are not hostnames", async () => {
    const accounts = [
      "zeta.example.com",
      "App.Example.COM",
      "app.example.com",
      "EXAMPLE.com:443",
      "example.com",
      "localhost:8443",
      "a..b",
      "",
      "https://app.example.com",
      "not a host",
    ];
    const { binding, state } = createFakeKeyring(
      accounts.map((account) => ({ account, password: "SECRET" })),
    );
    const hosts = await createKeychainStore(binding, "work").list();
    assert.deepEqual(hosts, [
      "app.example.com",
      "example.com",
      "localhost:8443",
      "zeta.example.com",
    ]);
    assert.equal(state.findCalls[0]?.[0], "work", "searches the store's own service");
  });

  test("list of an empty service is empty", async () => {
    const { binding } = createFakeKeyring();
    assert.deepEqual(await createKeychainStore(binding, SERVICE).list(), []);
  });

  // The exact wording after "could not <verb>" is free; the verb says which operation failed.
  const failures = [
    ["get", "getSecret", "read", (s) => s.get(HOST)],
    ["store", "setSecret", "write", (s) => s.store(HOST, '{"token":"SECRET-abc123"}')],
    ["forget", "deleteCredential", "delete", (s) => s.forget(HOST)],
    ["list", "findCredentials", "list", (s) => s.list()],
    ["get with an entry that cannot be opened", "constructor", "read", (s) => s.get(HOST)],
    [
      "store with an entry that cannot be opened",
      "constructor",
      "write",
      (s) => s.store(HOST, "{}"),
    ],
  ] as const satisfies readonly (readonly [
    string,
    Operation,
    string,
    (store: ReturnType<typeof createKeychainStore>) => Promise<unknown>,
  ])[];
  for (const [what, operation, verb, call] of failures) {
    test(`a binding exception in ${what} becomes a CliError that starts with "could not ${verb}" and keeps the cause`, async () => {
      const { binding, state } = createFakeKeyring();
      const original = new Error(LOCKED);
      state.failure = { in: operation, error: original };
      await assert.rejects(call(createKeychainStore(binding, SERVICE)), (error: unknown) => {
        assert.ok(error instanceof CliError, `expected a CliError, got ${String(error)}`);
        assert.ok(error.message.startsWith(`could not ${verb} `), error.message);
        assert.match(error.message, /keychain: the keychain is locked/);
        assert.equal(error.exitCode, ExitCode.Failure);
        assert.equal(error.cause, original);
        assert.ok(!error.message.includes("SECRET-abc123"), error.message);
        return true;
      });
    });
  }

  // What the binding gives for macOS's errSecInteractionNotAllowed and errSecAuthFailed
  // (keyring-rs wraps the Security framework's own message).
  for (const [what, detail, says] of [
    [
      "errSecInteractionNotAllowed",
      "Platform secure storage failure: User interaction is not allowed.",
      /: the keychain is locked and cannot ask for its password here .*"security unlock-keychain"/,
    ],
    [
      "errSecAuthFailed",
      "Platform secure storage failure: The user name or passphrase you entered is not correct.",
      /: access was refused at the keychain prompt: run the command again/,
    ],
    [
      "a bare OSStatus -25308",
      "Couldn't access platform secure storage: OSStatus -25308",
      /: the keychain is locked/,
    ],
  ] as const) {
    for (const [verb, operation, call] of [
      ["get", "getSecret", (s: ReturnType<typeof createKeychainStore>) => s.get(HOST)],
      ["forget", "deleteCredential", (s: ReturnType<typeof createKeychainStore>) => s.forget(HOST)],
    ] as const) {
      test(`macOS ${what} in ${verb} is an error that says what to do, never {}`, async () => {
        const { binding, state } = createFakeKeyring();
        state.failure = { in: operation, error: new Error(detail) };
        await assert.rejects(call(createKeychainStore(binding, SERVICE)), (error: unknown) => {
          assert.ok(error instanceof CliError);
          assert.match(error.message, says);
          assert.ok(!/Seahorse|D-Bus/.test(error.message), error.message);
          return true;
        });
      });
    }
  }

  test("a thrown non-Error value still becomes a CliError", async () => {
    const { binding, state } = createFakeKeyring();
    state.failure = { in: "setSecret", error: "User interaction is not allowed." };
    await assert.rejects(
      createKeychainStore(binding, SERVICE).store(HOST, "{}"),
      (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.match(error.message, /^could not write\b.*keychain: the keychain is locked/);
        return true;
      },
    );
  });

  test("a binding message spanning several lines still gives a one-line error", {}, async () => {
    const { binding, state } = createFakeKeyring();
    state.failure = {
      in: "getSecret",
      error: new Error("Platform failure: first line\nsecond line"),
    };
    await assert.rejects(createKeychainStore(binding, SERVICE).get(HOST), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.ok(!/[\r\n]/.test(error.message), JSON.stringify(error.message));
      return true;
    });
  });
});
