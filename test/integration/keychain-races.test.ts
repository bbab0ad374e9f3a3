/**
 * Our own calls of one host at the same time, on real providers: forgets beside gets and
 * stores of the same host, and another program deleting the item meanwhile. An item that
 * goes between a search and the next call is normal: forget has nothing left to do, get
 * searches again (and prints {} when nothing is left), store searches again and creates.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import type { KeyringSession } from "../support/keyring-session.ts";
import { assertSilentSuccess } from "../support/protocol-suite.ts";
import { countItems, deleteItems } from "../support/secret-service-items.ts";
import { startKeePassXcSession } from "../support/keepassxc-session.ts";
import { SECRET_SERVICE_PROVIDERS } from "../support/secret-service-providers.ts";
import { PATIENCE_MS } from "../support/timing.ts";

const ONLY_ON_LINUX = linuxOnly("the Secret Service race suite");
const SERVICE = "terraform-credentials";
const HOST = "race.example.com";
/** Bursts, and calls of each kind per burst: bounded; on main, gnome-keyring failed within a few bursts, KWallet within 16. */
const BURSTS = 16;
const FORGETS = 5;
const GETS = 12;
const STORES = 3;

// KeePassXC 2.7.4 crashes on parallel deletes (also secret-tool's): this suite's other program
// would bring it down. Our own forgets take turns; "forgets of one host take turns" covers it.
const RACED = SECRET_SERVICE_PROVIDERS.filter(({ name }) => name !== "KeePassXC");

for (const provider of RACED) {
  describe(`calls of one host at the same time (${provider.name})`, { skip: ONLY_ON_LINUX }, () => {
    let session: KeyringSession;
    before(async () => {
      session = await provider.start();
    });
    after(async () => {
      await session.close();
    });

    test("forgets beside gets, stores and another program's delete: every call succeeds with the right outcome", async () => {
      const { env } = session;
      const helper = (args: string[], stdin?: string) =>
        runHelper(args, { env, timeoutMs: PATIENCE_MS, ...(stdin === undefined ? {} : { stdin }) });
      const tokens = new Set<string>();
      const object = (burst: number, index: number) => {
        const text = JSON.stringify({ token: `race-${burst}-${index}` });
        tokens.add(`${text}\n`);
        return text;
      };
      for (let burst = 0; burst < BURSTS; burst++) {
        assertSilentSuccess(await helper(["store", HOST], object(burst, 0)));
        const forgets = Array.from({ length: FORGETS }, () => helper(["forget", HOST]));
        const gets = Array.from({ length: GETS }, () => helper(["get", HOST]));
        const stores = Array.from({ length: STORES }, (_, index) =>
          helper(["store", HOST], object(burst, index + 1)),
        );
        const deleted = deleteItems(env, { service: SERVICE, username: HOST });
        for (const result of [...(await Promise.all(forgets)), ...(await Promise.all(stores))]) {
          assertSilentSuccess(result);
        }
        for (const result of await Promise.all(gets)) {
          assert.deepEqual(
            { code: result.code, stderr: result.stderr },
            { code: 0, stderr: "" },
            `get: ${result.stdout}`,
          );
          assert.ok(
            result.stdout === "{}\n" || tokens.has(result.stdout),
            `get printed ${result.stdout}`,
          );
        }
        await deleted;
        const left = await countItems(env, { service: SERVICE, username: HOST });
        assert.ok(left <= 1, `${left} items of one host`);
      }
      // What is left is one of ours, or nothing: a get agrees with the search.
      const last: HelperResult = await helper(["get", HOST]);
      assert.equal(last.code, 0, last.stderr);
    });
  });
}

describe("forgets of one host take turns (KeePassXC)", { skip: ONLY_ON_LINUX }, () => {
  let session: KeyringSession;
  before(async () => {
    session = await startKeePassXcSession();
  });
  after(async () => {
    await session.close();
  });

  test("a dozen forgets of three hosts at once: all succeed, and KeePassXC is still there", async () => {
    const { env } = session;
    const hosts = ["k0.example.com", "k1.example.com", "k2.example.com"];
    for (let burst = 0; burst < 4; burst++) {
      for (const host of hosts) {
        assertSilentSuccess(await runHelper(["store", host], { env, stdin: '{"token":"k"}' }));
      }
      // KeePassXC 2.7.4 crashed (or left a delete's prompt unanswered) on about ten deletes
      // at once; our own take turns by host.
      const forgets = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          runHelper(["--timeout", "10", "forget", hosts[index % hosts.length]!], {
            env,
            timeoutMs: PATIENCE_MS,
          }),
        ),
      );
      for (const result of forgets) assertSilentSuccess(result);
      for (const host of hosts) {
        const got = await runHelper(["get", host], { env });
        assert.deepEqual([got.code, got.stdout, got.stderr], [0, "{}\n", ""]);
      }
    }
  });
});
