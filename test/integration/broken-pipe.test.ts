/**
 * A reader that goes away (`helper get HOST | head -c0`, `doctor | head -1`) must not make
 * the helper print a stack trace: it stops quietly with a non-zero code, as other Unix
 * tools do.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { helperCommand, runHelper } from "../support/helper-process.ts";
import { startKeyringSession, type KeyringSession } from "../support/keyring-session.ts";
import { assertSilentSuccess } from "../support/protocol-suite.ts";

const execFileAsync = promisify(execFile);

describe("stdout into a pipe whose reader has gone", { skip: process.platform === "win32" }, () => {
  let session: KeyringSession;
  before(async () => {
    session = await startKeyringSession();
    assertSilentSuccess(
      await runHelper(["store", "pipe.example.com"], {
        env: session.env,
        stdin: `{"token":"SECRET-pipe","pad":"${"x".repeat(200_000 / 4)}"}`,
      }),
    );
  });
  after(async () => {
    await session.close();
  });

  for (const args of [["get", "pipe.example.com"], ["list"], ["doctor"]]) {
    test(`${args[0]}: no stack trace, exit 1 or 141`, async () => {
      // The reader exits at once; the helper starts writing only after it is gone.
      const script = '{ sleep 0.3; "$@"; echo "exit=$?" >&2; } | head -c0';
      const { stderr } = await execFileAsync(
        "bash",
        ["-c", script, "bash", ...helperCommand(), ...args],
        { env: session.env },
      );
      const match = /exit=(\d+)\n$/.exec(stderr);
      assert.ok(match, stderr);
      assert.ok(["1", "141"].includes(match[1] ?? ""), stderr);
      assert.doesNotMatch(stderr, /EPIPE|Unhandled|^\s+at /m);
    });
  }
});
