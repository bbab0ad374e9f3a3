import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CliError, ExitCode } from "../../../src/errors.ts";
import type { Hostname } from "../../../src/protocol/hostname.ts";
import * as verbs from "../../../src/protocol/verbs.ts";
import { createMemoryStore } from "../../support/memory-store.ts";

// Stores are keyed by already-normalized hostnames; normalization has its own tests.
const HOST = "app.example.com" as Hostname;
const OTHER = "other.example.com" as Hostname;
const SECRET = "SECRET-abc123";

describe("get", () => {
  test("with nothing stored prints {}", async () => {
    const store = createMemoryStore();
    assert.equal(await verbs.get(store, HOST), "{}");
  });

  test("does not read another host's entry", async () => {
    const store = createMemoryStore({ [OTHER]: '{"token":"other"}' });
    assert.equal(await verbs.get(store, HOST), "{}");
  });

  const corrupt = [
    ["text that is not JSON", `not json ${SECRET}`],
    ["an array", `["${SECRET}"]`],
    ["a number token", `{"token":5,"note":"${SECRET}"}`],
    ["a JSON string", `"${SECRET}"`],
    ["null", "null"],
    ["an empty string", ""],
    ["an object followed by more text", `{"token":"${SECRET}"} trailing`],
  ] as const;
  for (const [what, stored] of corrupt) {
    test(`a stored entry that is ${what} fails without quoting it and is kept`, async () => {
      const store = createMemoryStore({ [HOST]: stored });
      const error = await verbs.get(store, HOST).then(
        () => assert.fail("get succeeded"),
        (error: unknown) => error,
      );
      assert.ok(error instanceof CliError, `expected a CliError, got ${String(error)}`);
      assert.equal(error.exitCode, ExitCode.Failure);
      assert.equal(error.message, `the stored entry for ${HOST} is not a JSON credentials object`);
      assert.deepEqual(error.fix, { situation: "entry-unreadable", values: { HOST } });
      assert.ok(!error.message.includes(SECRET));
      assert.equal(store.entries.get(HOST), stored, "a corrupt entry must not be silently dropped");
    });
  }
});

describe("store of an empty object", () => {
  // get prints {} for "nothing stored", so an entry holding {} would read as no credentials
  // while list and doctor count the host: store refuses it, and keeps what was there.
  for (const empty of ["{}", "{ }", "\n{\n}\n"]) {
    test(`refuses ${JSON.stringify(empty)}, names forget, and keeps the earlier entry`, async () => {
      const store = createMemoryStore({ [HOST]: '{"token":"earlier"}' });
      await assert.rejects(verbs.store(store, HOST, empty), (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.equal(
          error.message,
          `the credentials object on stdin is the empty object {}, which get prints for "no credentials": it is not stored`,
        );
        return true;
      });
      assert.equal(store.entries.get(HOST), '{"token":"earlier"}');
      assert.deepEqual(await store.list(), [HOST]);
    });
  }
});

describe("store then get", () => {
  const objects = [
    ["a token", '{"token":"abc.def-123"}'],
    ["an empty token", '{"token":""}'],
    ["no token at all", '{"expires":"2030-01-01T00:00:00Z"}'],
    ["nested extra properties", '{"token":"t","extra":{"list":[1,{"deep":null}],"flag":false}}'],
    [
      "unicode as written and escaped",
      '{"token":"münchen ☃ 😀","escaped":"\\u00fc\\ud83d\\ude00\\n"}',
    ],
    [
      "numbers JSON.parse would change",
      '{"big":12345678901234567890,"exp":1.0e+2,"neg":-0,"token":"t"}',
    ],
    ["property order", '{"z":1,"token":"t","a":2,"m":{"y":1,"b":2}}'],
    ["white space inside the object", '{ "token" :\n\t"t" ,  "n" : 1 }'],
  ] as const;
  for (const [what, object] of objects) {
    test(`returns the object byte for byte: ${what}`, async () => {
      const store = createMemoryStore();
      await verbs.store(store, HOST, object);
      assert.equal(store.entries.get(HOST), object);
      assert.equal(await verbs.get(store, HOST), object);
    });
  }

  test("white space around the object is trimmed, the rest is kept", async () => {
    const store = createMemoryStore();
    await verbs.store(store, HOST, '\r\n  {"token":"t" , "n":1.50}\n\n');
    assert.equal(await verbs.get(store, HOST), '{"token":"t" , "n":1.50}');
  });
});

describe("store", () => {
  test("replaces what was stored for the host", async () => {
    const store = createMemoryStore();
    await verbs.store(store, HOST, '{"token":"old","extra":"kept?"}');
    await verbs.store(store, HOST, '{"token":"new"}');
    assert.equal(await verbs.get(store, HOST), '{"token":"new"}');
    assert.deepEqual([...store.entries], [[HOST, '{"token":"new"}']]);
  });

  test("leaves other hosts alone", async () => {
    const store = createMemoryStore({ [OTHER]: '{"token":"other"}' });
    await verbs.store(store, HOST, '{"token":"mine"}');
    assert.equal(await verbs.get(store, OTHER), '{"token":"other"}');
  });

  const badInputs = [
    ["not JSON", `not json ${SECRET}`],
    ["an array", `["${SECRET}"]`],
    ["a number token", '{"token":5}'],
    ["a null token", '{"token":null}'],
    ["an object token", `{"token":{"value":"${SECRET}"}}`],
    ["empty", ""],
    ["two objects", `{"token":"${SECRET}"} {}`],
    ["an object and garbage", `{"token":"${SECRET}"}garbage`],
  ] as const;
  for (const [what, input] of badInputs) {
    test(`refusing input that is ${what} leaves the earlier value exactly as it was`, async () => {
      const earlier = '{"token":"earlier", "n":1.0e+2}';
      const store = createMemoryStore({ [HOST]: earlier });
      await assert.rejects(verbs.store(store, HOST, input), (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.ok(!error.message.includes(SECRET), error.message);
        return true;
      });
      assert.equal(store.entries.get(HOST), earlier);
      assert.deepEqual(
        store.calls.filter(([operation]) => operation !== "get"),
        [],
        "the store must not be touched",
      );
    });
  }

  test("refused input stores nothing for a host that had nothing", async () => {
    const store = createMemoryStore();
    await assert.rejects(verbs.store(store, HOST, "[]"), CliError);
    assert.equal(store.entries.size, 0);
  });

  test("a failure of the store reaches the caller unchanged", async () => {
    const store = createMemoryStore();
    const failure = new CliError("could not write the keychain: it is locked");
    store.failNext(failure, "store");
    await assert.rejects(
      verbs.store(store, HOST, '{"token":"t"}'),
      (error: unknown) => error === failure,
    );
    assert.equal(store.entries.size, 0);
  });
});

describe("forget", () => {
  test("deletes the host's entry so that get prints {}", async () => {
    const store = createMemoryStore({ [HOST]: '{"token":"t"}', [OTHER]: '{"token":"o"}' });
    await verbs.forget(store, HOST);
    assert.equal(await verbs.get(store, HOST), "{}");
    assert.deepEqual([...store.entries.keys()], [OTHER]);
  });

  test("succeeds when nothing is stored, and again after forgetting", async () => {
    const store = createMemoryStore();
    await verbs.forget(store, HOST);
    await verbs.store(store, HOST, '{"token":"t"}');
    await verbs.forget(store, HOST);
    await verbs.forget(store, HOST);
    assert.equal(store.entries.size, 0);
  });

  test("deletes a corrupt entry too, so that the advice in get's error works", async () => {
    const store = createMemoryStore({ [HOST]: "not json" });
    await verbs.forget(store, HOST);
    assert.equal(await verbs.get(store, HOST), "{}");
  });
});
