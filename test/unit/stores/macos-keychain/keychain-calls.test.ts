import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CliError } from "../../../../src/errors.ts";
import {
  callKeychain,
  isTransient,
  type CallLimits,
} from "../../../../src/stores/macos-keychain/keychain-calls.ts";

const NO_REPLY =
  "Platform failure: DBus error: Did not receive a reply. Possible causes include: the remote application did not send a reply";
const LOCKED = "Couldn't access platform storage: Secret Service: unlock prompt was dismissed";

/** Limits on a clock that only the fake sleep moves; `timeoutMs` from now. */
function fakeLimits(timeoutMs: number) {
  let clock = 0;
  const slept: number[] = [];
  const limits: CallLimits = {
    deadline: timeoutMs,
    timeoutSeconds: timeoutMs / 1000,
    now: () => clock,
    sleep: async (ms) => {
      slept.push(ms);
      clock += ms;
    },
  };
  return { limits, slept };
}

const describeError = (error: unknown) => new CliError(`described: ${String(error)}`);

describe("isTransient", () => {
  test("a D-Bus reply timeout is worth another attempt; a locked keyring or a missing bus is not", () => {
    assert.equal(isTransient(NO_REPLY), true);
    assert.equal(isTransient("org.freedesktop.DBus.Error.LimitsExceeded"), true);
    assert.equal(isTransient(LOCKED), false);
    assert.equal(isTransient("Failed to connect to socket /x: No such file or directory"), false);
  });
});

describe("callKeychain", () => {
  test("retries reply timeouts with growing pauses until the call succeeds", async () => {
    const { limits, slept } = fakeLimits(30_000);
    let calls = 0;
    const result = await callKeychain(
      async () => {
        calls++;
        if (calls < 4) throw new Error(NO_REPLY);
        return "ok";
      },
      limits,
      describeError,
    );
    assert.equal(result, "ok");
    assert.equal(calls, 4);
    assert.equal(slept.length, 3);
    assert.ok(slept[0]! >= 50 && slept[0]! < 80, String(slept));
    assert.ok(slept[2]! >= 200, String(slept));
  });

  test("a failure that is not transient is described at once, without a retry", async () => {
    const { limits, slept } = fakeLimits(30_000);
    let calls = 0;
    await assert.rejects(
      callKeychain(
        async () => {
          calls++;
          throw new Error(LOCKED);
        },
        limits,
        describeError,
      ),
      /described: Error: Couldn't access/,
    );
    assert.equal(calls, 1);
    assert.deepEqual(slept, []);
  });

  test("a synchronous throw (the entry cannot be opened) is handled like a rejection", async () => {
    const { limits } = fakeLimits(30_000);
    let calls = 0;
    const result = await callKeychain(
      () => {
        calls++;
        if (calls === 1) throw new Error(NO_REPLY);
        return Promise.resolve(1);
      },
      limits,
      describeError,
    );
    assert.equal(result, 1);
  });

  test("retries stop at the deadline with one line that names an overloaded service", async () => {
    const { limits } = fakeLimits(5_000);
    await assert.rejects(
      callKeychain(() => Promise.reject(new Error(NO_REPLY)), limits, describeError),
      (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.match(error.message, /did not answer within 5 s: the Secret Service is overloaded/);
        assert.match(error.message, /TF_CREDENTIALS_KEYCHAIN_TIMEOUT/);
        assert.ok(!/[\r\n]/.test(error.message));
        return true;
      },
    );
  });

  test("a call that never settles is abandoned at the deadline, its signal aborted, naming a locked keyring", async () => {
    let signal: AbortSignal | undefined;
    const started = performance.now();
    await assert.rejects(
      callKeychain(
        (given) => {
          signal = given;
          return new Promise<never>(() => {});
        },
        {
          deadline: performance.now() + 100,
          timeoutSeconds: 0.1,
          now: () => performance.now(),
          sleep: async () => {},
        },
        describeError,
      ),
      /did not answer within 0\.1 s: most likely the keyring is locked/,
    );
    assert.equal(signal?.aborted, true);
    assert.ok(performance.now() - started < 2000);
  });
});
