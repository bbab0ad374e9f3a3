/**
 * Many encrypted sessions, one after another, against kwalletd5 5.103: every call must
 * succeed. Before KWallet 6.25 (KDE bug 514194) kwalletd derives another session key than
 * the client for some exchanges: when the shared secret begins with a zero byte (one in
 * 256), which it strips before HKDF, and when the client's public value has its first nine
 * bits set (one in 512), which QCA's signed BigInteger turns into another number. libsecret's
 * secret-tool fails about one lookup in 120 against it. Each call here opens a session of its
 * own: a client that avoided only the first case would fail about every other run.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import type { KeyringSession } from "../support/keyring-session.ts";
import { startKWalletSession } from "../support/kwallet-session.ts";

const HOST = "sessions.example.com";
const GETS = 300;
const STORES = 100;
// Each call takes ~15 ms (a store ~20 ms); the limit only stops a hung run early.
const LIMIT_MS = 120_000;

interface Failure {
  readonly call: string;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Why `result` is not a silent success that printed `stdout`, or undefined when it is. */
function failure(call: string, result: HelperResult, stdout: string): Failure | undefined {
  if (result.code === 0 && result.stdout === stdout && result.stderr === "") return undefined;
  return { call, code: result.code, stdout: result.stdout, stderr: result.stderr };
}

function assertNoFailures(failures: readonly Failure[], calls: number): void {
  const first = failures
    .slice(0, 3)
    .map(
      ({ call, code, stdout, stderr }) =>
        `${call}: exit ${code}, stdout ${JSON.stringify(stdout)}, stderr:\n${stderr.trimEnd()}`,
    );
  assert.equal(
    failures.length,
    0,
    `${failures.length} of ${calls} calls failed; the first:\n${first.join("\n")}`,
  );
}

describe("KWallet: many sessions in a row", () => {
  let session: KeyringSession | undefined;
  let env: Record<string, string>;
  let object = `{"token":"SECRET-kwallet-sessions-initial"}`;
  before(async () => {
    session = await startKWalletSession();
    // A failure then says its cause (the session error, the D-Bus error) on stderr.
    env = { ...session.env, TF_CREDENTIALS_KEYCHAIN_DEBUG: "1" };
    const stored = await runHelper(["store", HOST], { env, stdin: object });
    assert.equal(failure("store", stored, ""), undefined);
  });
  after(async () => {
    await session?.close();
  });

  test(
    `${GETS} gets one after another all print the stored object`,
    { timeout: LIMIT_MS },
    async () => {
      const failures: Failure[] = [];
      for (let i = 1; i <= GETS; i++) {
        const result = await runHelper(["get", HOST], { env });
        const failed = failure(`get #${i}`, result, `${object}\n`);
        if (failed) failures.push(failed);
      }
      assertNoFailures(failures, GETS);
    },
  );

  test(
    `${STORES} stores of a new token, each read back at once`,
    { timeout: LIMIT_MS },
    async () => {
      const failures: Failure[] = [];
      for (let i = 1; i <= STORES; i++) {
        const next = `{"token":"SECRET-kwallet-sessions-${i}-${Math.random().toString(36).slice(2)}"}`;
        const stored = failure(
          `store #${i}`,
          await runHelper(["store", HOST], { env, stdin: next }),
          "",
        );
        if (stored) {
          failures.push(stored);
          continue;
        }
        object = next;
        const read = failure(
          `get after store #${i}`,
          await runHelper(["get", HOST], { env }),
          `${object}\n`,
        );
        if (read) failures.push(read);
      }
      assertNoFailures(failures, 2 * STORES);
    },
  );
});
