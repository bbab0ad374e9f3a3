import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { describe, test, type TestContext } from "node:test";
import { promisify } from "node:util";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { assertOneLineFailure, assertSilentSuccess } from "../support/protocol-suite.ts";
import { startPassSession } from "../support/pass-session.ts";
import { PATIENCE_MS, PROMPT_MS } from "../support/timing.ts";

const execFileAsync = promisify(execFile);

/**
 * What a deadline may be overrun by on a loaded 2-core machine: the helper's own start-up
 * and exit, never a second timeout's worth (each bound below is below twice the timeout).
 */
const MARGIN_MS = PROMPT_MS;

/**
 * A pass session of its own for one test, whose gpg-agent `stopAgent()` replaces with one
 * that hangs: a listener on the agent's socket that takes every connection and never says a
 * word, as a hung or stopped agent does. (A real agent stopped with SIGSTOP is sent SIGCONT
 * by the kernel whenever its orphaned process group changes, so it does not stay hung.)
 */
async function sessionWithAgent(t: TestContext) {
  const session = await startPassSession();
  const socketPath = (
    await execFileAsync("gpgconf", ["--list-dirs", "agent-socket"], { env: session.env })
  ).stdout.trim();
  let hung: { server: Server; held: Set<Socket> } | undefined;
  /** As the fix says: that agent ended, so that gpg starts a new one. */
  const killAgent = async () => {
    if (hung === undefined) return;
    const { server, held } = hung;
    hung = undefined;
    for (const connection of held) connection.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(socketPath, { force: true });
  };
  t.after(async () => {
    await killAgent();
    await session.close();
  });
  const helper = (args: readonly string[], stdin?: string): Promise<HelperResult> =>
    runHelper(["--backend", "pass", ...args], {
      env: session.env,
      timeoutMs: PATIENCE_MS,
      ...(stdin === undefined ? {} : { stdin }),
    });
  const stopAgent = async () => {
    await execFileAsync("gpgconf", ["--kill", "gpg-agent"], { env: session.env });
    rmSync(socketPath, { force: true });
    const held = new Set<Socket>();
    const server = createServer((connection) => {
      held.add(connection);
      connection.on("close", () => held.delete(connection));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, resolve);
    });
    hung = { server, held };
  };
  return { helper, stopAgent, killAgent };
}

const within = (result: HelperResult, timeoutMs: number) =>
  assert.ok(
    result.milliseconds < timeoutMs + MARGIN_MS,
    `took ${Math.round(result.milliseconds)} ms`,
  );

describe(
  "pass with a gpg-agent that does not answer",
  { skip: linuxOnly("the pass suite") },
  () => {
    test("a store ends by its --timeout and names the agent that did not answer", async (t) => {
      const { helper, stopAgent, killAgent } = await sessionWithAgent(t);
      await stopAgent();
      const result = await helper(["--timeout", "3", "store", "a.example.com"], '{"token":"x"}');
      await killAgent();
      assertOneLineFailure(result);
      assert.match(result.stderr, /gpg-agent did not answer within 3 s/);
      assert.doesNotMatch(result.stderr, /passphrase that gpg-agent has not cached/);
      within(result, 3000);
      // The fix, as printed: with that agent killed, gpg starts a new one and the store works.
      assertSilentSuccess(
        await helper(["--timeout", "10", "store", "a.example.com"], '{"token":"x"}'),
      );
      const get = await helper(["--timeout", "10", "get", "a.example.com"]);
      assert.equal(get.stdout, '{"token":"x"}\n');
    });

    test("a get ends by its --timeout and names a hung agent among the causes", async (t) => {
      const { helper, stopAgent, killAgent } = await sessionWithAgent(t);
      // An entry for get to decrypt, stored while the agent still answers.
      assertSilentSuccess(await helper(["store", "stored.example.com"], '{"token":"s"}'));
      await stopAgent();
      const result = await helper(["--timeout", "2", "get", "stored.example.com"]);
      await killAgent();
      assertOneLineFailure(result);
      assert.match(result.stderr, /gpg-agent that does not answer/);
      within(result, 2000);
    });

    test("a burst of parallel stores each ends by the one deadline, lock wait included", async (t) => {
      const { helper, stopAgent, killAgent } = await sessionWithAgent(t);
      await stopAgent();
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          helper(["--timeout", "3", "store", `burst${i % 4}.example.com`], '{"token":"y"}'),
        ),
      );
      await killAgent();
      for (const result of results) {
        within(result, 3000);
        assertOneLineFailure(result);
        assert.match(result.stderr, /gpg-agent did not answer within 3 s|is busy/);
      }
    });

    test("doctor probes pass for --timeout, not for a fixed 5 s", async (t) => {
      const { helper, stopAgent, killAgent } = await sessionWithAgent(t);
      await stopAgent();
      const result = await helper(["--timeout", "1", "doctor"]);
      await killAgent();
      assert.match(result.stdout, /gpg-agent did not answer within 1 s/);
      // Each of doctor's probes may take the second; five are far more than both.
      within(result, 2000);
    });
  },
);
