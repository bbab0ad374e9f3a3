/**
 * Many helpers at once against one Secret Service, as `terragrunt run-all` over many
 * modules starts them: every call must succeed, however long gnome-keyring takes to answer.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runHelper } from "../support/helper-process.ts";
import { startKeyringSession } from "../support/keyring-session.ts";
import { linuxOnly, startDefaultKeychain } from "../support/keychain-backends.ts";
import type { ProtocolBackend } from "../support/protocol-suite.ts";
import { assertSilentSuccess } from "../support/protocol-suite.ts";
import { PATIENCE_MS, PROMPT_MS } from "../support/timing.ts";

const HOST = "load.example.com";
const OBJECT = `{"token":"SECRET-load-token"}`;
const PARALLEL = Number(process.env.TFCK_TEST_PARALLEL ?? "150");

describe("under load", () => {
  let session: ProtocolBackend;
  before(async () => {
    session = await startDefaultKeychain();
    assertSilentSuccess(
      await runHelper([...session.args, "store", HOST], { env: session.env, stdin: OBJECT }),
    );
  });
  after(async () => {
    await session.close();
  });

  test(`${PARALLEL} gets at once all print the stored object`, async () => {
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, () =>
        runHelper([...session.args, "get", HOST], { env: session.env, timeoutMs: PATIENCE_MS }),
      ),
    );
    const failed = results.filter((result) => result.code !== 0 || result.stdout !== `${OBJECT}\n`);
    assert.deepEqual(
      failed.slice(0, 3).map(({ code, stderr }) => ({ code, stderr })),
      [],
      `${failed.length} of ${PARALLEL} failed`,
    );
  });
});

describe("the deadline of a call", () => {
  test(
    "with a locked keyring, concurrent calls all give up before the deadline with one line naming the cause",
    { skip: linuxOnly("locking a Secret Service collection") },
    async () => {
      const session = await startKeyringSession();
      try {
        assertSilentSuccess(
          await runHelper(["store", "locked.example.com"], { env: session.env, stdin: OBJECT }),
        );
        await session.lockCollection();
        // Far beyond PROMPT_MS, so that a wait for it shows.
        const env = { ...session.env, TF_CREDENTIALS_KEYCHAIN_TIMEOUT: "60" };
        const results = await Promise.all(
          Array.from({ length: 6 }, () => runHelper(["get", "locked.example.com"], { env })),
        );
        // No desktop can show an unlock prompt here: each says so at once, with exit code 1
        // (never a signal), well before the deadline.
        for (const result of results) {
          assert.equal(result.code, 1, result.stderr);
          assert.equal(result.stdout, "");
          assert.match(result.stderr, /^[^\n]*locked[^\n]*\n$/);
          assert.ok(result.milliseconds < PROMPT_MS, `took ${result.milliseconds} ms`);
        }
      } finally {
        await session.close();
      }
    },
  );

  test("a timeout that is not a positive number of seconds is refused as a usage error", async () => {
    for (const [args, env] of [
      [["--timeout", "0", "get", "example.com"], {}],
      [["get", "example.com"], { TF_CREDENTIALS_KEYCHAIN_TIMEOUT: "soon" }],
    ] as const) {
      const result = await runHelper(args, { env: { PATH: process.env.PATH, ...env } });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /^invalid (--timeout|TF_CREDENTIALS_KEYCHAIN_TIMEOUT) /);
    }
  });
});
