/**
 * The Secret Service store against a fake provider of our own (test/support/fake-secret-service.ts)
 * for what no real daemon does on demand: gnome-keyring's hashed attributes of a locked item
 * followed by an unlock prompt that someone answers, a provider that hangs on one call, and
 * a stranger on the bus who sends us large messages while we wait.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { CliError } from "../../../../src/errors.ts";
import { normalizeHostname } from "../../../../src/protocol/hostname.ts";
import { deadlineIn } from "../../../../src/system/deadline.ts";
import {
  createSecretServiceStore,
  type SecretServiceStore,
} from "../../../../src/stores/secret-service/store.ts";
import { MessageType } from "../../../../src/stores/secret-service/wire.ts";
import {
  COLLECTION,
  startFakeSecretService,
  type FakeHooks,
  type FakeSecretService,
} from "../../../support/fake-secret-service.ts";

const HOST = normalizeHostname("fake.example.com");
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

async function startFake(t: TestContext, hooks: FakeHooks = {}): Promise<FakeSecretService> {
  const fake = await startFakeSecretService(hooks);
  t.after(() => fake.close());
  return fake;
}

/** A store on the fake's bus, as a helper run on a desktop (an unlock prompt can be shown). */
function storeOn(t: TestContext, fake: FakeSecretService, timeoutSeconds = 5): SecretServiceStore {
  const store = createSecretServiceStore({
    service: "terraform-credentials",
    env: { DBUS_SESSION_BUS_ADDRESS: fake.address, DISPLAY: ":99" },
    deadline: deadlineIn(timeoutSeconds),
    warn: () => {},
  });
  t.after(() => store.close());
  return store;
}

describe("a store after an unlock prompt", () => {
  test("replaces the item it could not see while locked: one item, the new token", async (t) => {
    const fake = await startFake(t);
    await storeOn(t, fake).store(HOST, '{"token":"old"}');
    assert.equal(fake.items.size, 1);
    // As a screen lock leaves gnome-keyring: the item is found, its attributes are hashes.
    fake.locked = true;
    await storeOn(t, fake).store(HOST, '{"token":"new"}');
    assert.equal(fake.locked, false, "the prompt ran");
    assert.deepEqual(
      [...fake.items.values()].map((item) => text(item.secret)),
      ['{"token":"new"}'],
    );
    assert.equal(await storeOn(t, fake).get(HOST), '{"token":"new"}');
  });
});

describe("who hung", () => {
  test("a Secret Service that never answers Properties.Get is named, not the session bus", async (t) => {
    let hang = false;
    const fake = await startFake(t, {
      beforeAnswer: (call) =>
        hang && call.member === "Get" ? new Promise<void>(() => undefined) : undefined,
    });
    await storeOn(t, fake).store(HOST, '{"token":"x"}');
    hang = true;
    await assert.rejects(storeOn(t, fake, 1).get(HOST), (error) => {
      assert.ok(error instanceof CliError);
      assert.match(
        error.message,
        /^could not read from the keychain: the Secret Service did not answer org\.freedesktop\.DBus\.Properties\.Get within 1 s/,
      );
      return true;
    });
  });
});

describe("messages that are not our replies", () => {
  test("a unicast signal of 70,000 strings, and replies to no call of ours, sent while we wait: skipped, the call succeeds", async (t) => {
    let sent = false;
    const fake = await startFake(t, {
      async beforeAnswer(call, client) {
        if (call.member !== "SearchItems" || sent) return;
        sent = true;
        const strings = Array.from({ length: 70_000 }, (_, index) => `s${index}`);
        await client.send({
          type: MessageType.Signal,
          sender: ":1.66",
          path: "/org/example/Spam",
          interface: "org.example.Spam",
          member: "Flood",
          signature: "as",
          body: [strings],
        });
        // A reply to a serial we never used (a bus lets no one answer a call of ours but
        // its destination), with a body over our limits too.
        await client.send({
          type: MessageType.MethodReturn,
          sender: ":1.66",
          replySerial: 9999,
          signature: "as",
          body: [strings],
        });
      },
    });
    const store = storeOn(t, fake);
    await store.store(HOST, '{"token":"kept"}');
    assert.ok(sent, "the flood was sent");
    assert.equal(await storeOn(t, fake).get(HOST), '{"token":"kept"}');
  });
});

describe("list of many items", () => {
  test("reads the attributes of 3,000 items a few hundred at a time, not all at once", async (t) => {
    let inFlight = 0;
    let most = 0;
    const fake = await startFake(t, {
      async beforeAnswer(call) {
        if (call.member !== "Get") return;
        inFlight++;
        most = Math.max(most, inFlight);
        // Answered only after the calls that came with it have all arrived.
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
      },
    });
    for (let index = 1; index <= 3000; index++) {
      const path = `${COLLECTION}/${index}`;
      fake.items.set(path, {
        path,
        attributes: new Map([
          ["service", "terraform-credentials"],
          ["username", `h${index}.example.com`],
        ]),
        secret: new Uint8Array(0),
      });
    }
    const hosts = await storeOn(t, fake, 30).list();
    assert.equal(hosts.length, 3000);
    assert.ok(most <= 256, `${most} reads in flight at once`);
  });
});
