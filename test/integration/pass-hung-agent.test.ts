import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { assertOneLineFailure, assertSilentSuccess } from "../support/protocol-suite.ts";
import { startPassSession, type PassSession } from "../support/pass-session.ts";

const execFileAsync = promisify(execFile);

/**
 * What a deadline may be overrun by on a loaded 2-core machine: the helper's own start-up
 * and exit, never a second timeout's worth (each bound below is below twice the timeout).
 */
const MARGIN_MS = 2500;

describe(
  "pass with a gpg-agent that does not answer",
  { skip: linuxOnly("the pass suite") },
  () => {
    // A real gpg-agent, stopped with SIGSTOP: its socket still accepts connections, and
    // nothing ever answers on them, as with a hung agent.
    let session: PassSession;
    let agentPid: number | undefined;
    const stopAgent = async () => {
      // Starts the agent if it is not running, and asks for its pid.
      const { stdout } = await execFileAsync("gpg-connect-agent", ["getinfo pid", "/bye"], {
        env: session.env,
        timeout: 10_000,
      });
      const pid = Number(/^D ([0-9]+)$/m.exec(stdout)?.[1]);
      assert.ok(pid > 0, `no pid from gpg-agent: ${stdout}`);
      agentPid = pid;
      process.kill(pid, "SIGSTOP");
    };
    /** As the fix says: its process killed (a stopped agent answers no "gpgconf --kill"). */
    const killAgent = () => {
      if (agentPid === undefined) return;
      try {
        process.kill(agentPid, "SIGKILL");
      } catch {
        // Gone already.
      }
      agentPid = undefined;
    };
    const helper = (args: readonly string[], stdin?: string): Promise<HelperResult> =>
      runHelper(["--backend", "pass", ...args], {
        env: session.env,
        timeoutMs: 30_000,
        ...(stdin === undefined ? {} : { stdin }),
      });

    before(async () => {
      session = await startPassSession();
      // An entry for get to decrypt, stored while the agent still answers.
      assertSilentSuccess(await helper(["store", "stored.example.com"], '{"token":"s"}'));
    });
    after(async () => {
      killAgent();
      await session.close();
    });

    test("a store ends by its --timeout and names the agent that did not answer", async () => {
      await stopAgent();
      const result = await helper(["--timeout", "3", "store", "a.example.com"], '{"token":"x"}');
      killAgent();
      assertOneLineFailure(result);
      assert.match(result.stderr, /gpg-agent did not answer within 3 s/);
      assert.doesNotMatch(result.stderr, /passphrase that gpg-agent has not cached/);
      assert.ok(
        result.milliseconds < 3000 + MARGIN_MS,
        `took ${Math.round(result.milliseconds)} ms`,
      );
      // The fix, as printed: with that agent killed, gpg starts a new one and the store works.
      assertSilentSuccess(
        await helper(["--timeout", "10", "store", "a.example.com"], '{"token":"x"}'),
      );
      const get = await helper(["--timeout", "10", "get", "a.example.com"]);
      assert.equal(get.stdout, '{"token":"x"}\n');
    });

    test("a get ends by its --timeout and names a hung agent among the causes", async () => {
      await stopAgent();
      const result = await helper(["--timeout", "2", "get", "stored.example.com"]);
      killAgent();
      assertOneLineFailure(result);
      assert.match(result.stderr, /gpg-agent that does not answer/);
      assert.ok(
        result.milliseconds < 2000 + MARGIN_MS,
        `took ${Math.round(result.milliseconds)} ms`,
      );
    });

    test("a burst of parallel stores each ends by the one deadline, lock wait included", async () => {
      await stopAgent();
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          helper(["--timeout", "3", "store", `burst${i % 4}.example.com`], '{"token":"y"}'),
        ),
      );
      killAgent();
      for (const result of results) {
        assertOneLineFailure(result);
        assert.match(result.stderr, /gpg-agent did not answer within 3 s|is busy/);
      }
      const slowest = Math.max(...results.map((result) => result.milliseconds));
      assert.ok(slowest < 3000 + MARGIN_MS, `the slowest took ${Math.round(slowest)} ms`);
    });

    test("doctor probes pass for --timeout, not for a fixed 5 s", async () => {
      await stopAgent();
      const result = await helper(["--timeout", "1", "doctor"]);
      killAgent();
      assert.match(result.stdout, /gpg-agent did not answer within 1 s/);
      assert.ok(
        result.milliseconds < 1000 + MARGIN_MS + 1000,
        `took ${Math.round(result.milliseconds)} ms`,
      );
    });
  },
);
