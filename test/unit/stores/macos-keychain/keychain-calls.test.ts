import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CliError } from "../../../../src/errors.ts";
import { deadlineAt, deadlineIn } from "../../../../src/system/deadline.ts";
import { callKeychain } from "../../../../src/stores/macos-keychain/keychain-calls.ts";
import { PROMPT_MS } from "../../../support/timing.ts";

const LOCKED = "Platform secure storage failure: User interaction is not allowed.";

/** Limits on a clock that stands still unless `clock.now` is moved. */
function fakeLimits(timeoutMs: number) {
  const clock = { now: 0 };
  const limits = deadlineAt(timeoutMs, timeoutMs / 1000, {
    now: () => clock.now,
    sleep: async (ms) => {
      clock.now += ms;
    },
  });
  return { limits, clock };
}

const describeError = (error: unknown) => new CliError(`described: ${String(error)}`);

describe("callKeychain", () => {
  test("hands back what the call answers", async () => {
    const { limits } = fakeLimits(30_000);
    assert.equal(await callKeychain(async () => "ok", limits, describeError), "ok");
  });

  test("a failure is described at once, without another attempt", async () => {
    const { limits } = fakeLimits(30_000);
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
      /described: Error: Platform secure storage failure/,
    );
    assert.equal(calls, 1);
  });

  test("a synchronous throw (the entry cannot be opened) is described like a rejection", async () => {
    const { limits } = fakeLimits(30_000);
    await assert.rejects(
      callKeychain(
        () => {
          throw new Error(LOCKED);
        },
        limits,
        describeError,
      ),
      /described: /,
    );
  });

  test("no call starts once the deadline has passed", async () => {
    const { limits, clock } = fakeLimits(5_000);
    clock.now = 5_000;
    let calls = 0;
    await assert.rejects(
      callKeychain(
        async () => {
          calls++;
          return 1;
        },
        limits,
        describeError,
      ),
      /did not answer within 5 s/,
    );
    assert.equal(calls, 0);
  });

  test("a call that never settles is abandoned at the deadline, its signal aborted, naming an unanswered prompt in one line", async () => {
    let signal: AbortSignal | undefined;
    const started = performance.now();
    await assert.rejects(
      callKeychain(
        (given) => {
          signal = given;
          return new Promise<never>(() => {});
        },
        deadlineIn(0.1),
        describeError,
      ),
      (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.match(error.message, /did not answer within 0\.1 s: most likely it waits for a/);
        assert.match(error.message, /TF_CREDENTIALS_KEYCHAIN_TIMEOUT/);
        assert.equal(error.fix?.situation, "macos-keychain-locked");
        assert.ok(!/[\r\n]/.test(error.message));
        return true;
      },
    );
    assert.equal(signal?.aborted, true);
    assert.ok(performance.now() - started < PROMPT_MS);
  });
});
