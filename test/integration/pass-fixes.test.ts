/**
 * What the helper tells a `pass` user, run as printed: install's warning on a machine where
 * pass is not set up, doctor's fix for a key that is not here, and store's for a key that
 * needs a passphrase.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { describe, test, type TestContext } from "node:test";
import { onPath } from "../support/find-command.ts";
import { runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession } from "../support/pass-session.ts";
import { PATIENCE_MS, TEST_PATIENCE_MS } from "../support/timing.ts";

const HOST = "app.terraform.io";
const skip =
  linuxOnly("the pass fixes suite") ||
  (onPath("pass") === undefined && "pass is not installed") ||
  (onPath("script") === undefined && "util-linux's script is not installed");

/** A machine pass was never set up on; USER for the fixes that name it. */
async function bareMachine(t: TestContext) {
  const session = await startPassSession({ bare: true });
  t.after(() => session.close());
  return { env: { ...session.env, USER: "tester" } };
}

/** The command a fix prints as `run "COMMAND" (what it changes)` (src/fixes.ts's renderFix). */
function printedCommand(output: string): string {
  const command = /run "(.*)" \(/m.exec(output)?.[1];
  assert.ok(command !== undefined, output);
  return command;
}

function sh(line: string, env: Record<string, string>) {
  return spawnSync("sh", ["-c", line], { env, encoding: "utf8", timeout: PATIENCE_MS });
}

/** Stores a token as Terraform would, then reads it back. */
async function assertPassWorks(env: Record<string, string>) {
  const stored = await runHelper(["--backend", "pass", "store", HOST], {
    env,
    stdin: '{"token":"SECRET-fixed"}',
  });
  assert.equal(stored.code, 0, stored.stderr);
  const got = await runHelper(["--backend", "pass", "get", HOST], { env });
  assert.deepEqual([got.code, got.stdout], [0, '{"token":"SECRET-fixed"}\n'], got.stderr);
}

describe("what the helper tells a pass user works as printed", { skip }, () => {
  test(
    "--backend pass install with no password store warns with doctor's fix, which makes pass work",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      const { env } = await bareMachine(t);
      const installed = await runHelper(["--backend", "pass", "install"], { env });
      assert.equal(installed.code, 0, installed.stderr);
      assert.match(
        installed.stdout,
        /^warning: pass cannot store tokens here yet: the password store in .* is not initialised$/m,
      );
      const fixed = sh(printedCommand(installed.stdout), env);
      assert.equal(fixed.status, 0, fixed.stderr);
      await assertPassWorks(env);
    },
  );

  test(
    "a store whose key is not here: doctor shows gpg's error line and a fix for the key, not for a passphrase",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      // A store made elsewhere (its key is in another keyring), read with an empty one.
      const elsewhere = await startPassSession();
      t.after(() => elsewhere.close());
      const { env: bare } = await bareMachine(t);
      const env = { ...bare, PASSWORD_STORE_DIR: elsewhere.storeDir };
      const doctor = await runHelper(["--backend", "pass", "doctor"], { env });
      assert.notEqual(doctor.code, 0);
      const fail = doctor.stdout.split("\n").find((line) => line.includes("store --backend pass"));
      assert.ok(fail !== undefined && fail.startsWith("FAIL"), doctor.stdout);
      assert.match(fail, /skipped: No public key/);
      assert.doesNotMatch(doctor.stdout, /keybox .* created/);
      const fix = /^ {6}fix: (.*)$/m.exec(doctor.stdout.slice(doctor.stdout.indexOf(fail)))?.[1];
      assert.ok(fix !== undefined, doctor.stdout);
      assert.doesNotMatch(fix, /unlock|cached|pass show/);
      // No command can bring a key here: the fix says what to do (printed-fixes.test.ts
      // checks that it runs nothing).
      assert.match(
        fix,
        /point PASSWORD_STORE_DIR at a store initialised for a key this machine has/,
      );
      assert.doesNotMatch(fix, /export-secret-keys/);
    },
  );

  test(
    "a key with a passphrase: store stores nothing, claims nothing of terraform login, and its unlock command works at a terminal",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      const locked = await startPassSession({ passphrase: "correct horse" });
      t.after(() => locked.close());
      const refused = await runHelper(["--backend", "pass", "store", HOST], {
        env: locked.env,
        stdin: '{"token":"SECRET-locked"}',
      });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^nothing was stored in pass: /);
      assert.doesNotMatch(refused.stderr, /terraform login|pass show/);
      const unlock = printedCommand(refused.stderr);
      // Typed at a terminal (a pty made by `script`): pinentry asks there, once.
      const child = spawn("script", ["-qefc", unlock, "/dev/null"], {
        env: { ...locked.env, TERM: "dumb" },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let screen = "";
      const asked = new Promise<void>((resolve) => {
        child.stdout.on("data", (data: Buffer) => {
          screen += data.toString();
          if (/Please enter|assphrase/.test(screen)) resolve();
        });
      });
      const ended = new Promise<number | null>((resolve) => child.once("close", resolve));
      await asked;
      child.stdin.write("correct horse\r");
      assert.equal(await ended, 0, screen);
      await assertPassWorks(locked.env);
    },
  );
});
