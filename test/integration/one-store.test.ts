/**
 * One store for everything a person types: after `--backend pass install`, `get`, `store`
 * and `forget` typed at a terminal, or run by a script with its own stdin, reach the store
 * the block names, as `list` and Terraform do; a call with Terraform's streams uses only its
 * own args, and when that fails for want of the block's, the printed command runs as printed.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, test, type TestContext } from "node:test";
import { commandLine } from "../../src/commands/command-line.ts";
import { helperCommand, runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { onPath } from "../support/find-command.ts";
import { startPassSession } from "../support/pass-session.ts";
import { PATIENCE_MS, TEST_PATIENCE_MS } from "../support/timing.ts";

const TOKEN = "SECRET-one-store";
const HOST = "app.terraform.io";

const skip =
  linuxOnly("the one-store suite") ||
  (onPath("jq") === undefined && "jq is not installed") ||
  (onPath("script") === undefined && "util-linux's script is not installed");

/** A headless machine with pass set up and `--backend pass install` done; no session bus. */
async function passMachine(t: TestContext) {
  const session = await startPassSession();
  t.after(() => session.close());
  const bin = path.join(session.home, ".local", "bin");
  mkdirSync(bin, { recursive: true });
  const env = { ...session.env, PATH: `${bin}:${session.env.PATH}` };
  const installed = await runHelper(["--backend", "pass", "install"], { env });
  assert.equal(installed.code, 0, installed.stderr);
  // Stored as Terraform stores it: the block's args, the object on a pipe.
  const stored = await runHelper(["--backend", "pass", "store", HOST], {
    env,
    stdin: `{"token":"${TOKEN}"}`,
  });
  assert.equal(stored.code, 0, stored.stderr);
  /** Runs a shell line with stdin a pipe (a script's own), as a person's script would. */
  const sh = (line: string) =>
    spawnSync("sh", ["-c", line], { env, input: "", encoding: "utf8", timeout: PATIENCE_MS });
  /** Runs a shell line on a terminal (a pty made by `script`); what it shows. */
  const atTerminal = (line: string) =>
    spawnSync("script", ["-qefc", line, "/dev/null"], {
      env,
      input: "",
      encoding: "utf8",
      timeout: PATIENCE_MS,
    });
  return { env, sh, atTerminal };
}

describe("get, store and forget typed by a person follow the installed block", { skip }, () => {
  test(
    "docs/usage.md's TFE_TOKEN line, in a script, reaches the pass store the block names",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      const { sh } = await passMachine(t);
      const result = sh(
        'export TFE_TOKEN=$(terraform-credentials-keychain get app.terraform.io | jq -r .token) && printf "%s" "$TFE_TOKEN"',
      );
      assert.equal(result.stdout, TOKEN, result.stderr);
    },
  );

  test(
    "at a terminal: get shows the token, forget deletes it from pass, then get shows {}",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      const { atTerminal, env } = await passMachine(t);
      const shown = atTerminal(`terraform-credentials-keychain get ${HOST}`);
      assert.equal(shown.status, 0, shown.stdout);
      assert.match(shown.stdout, new RegExp(`\\{"token":"${TOKEN}"\\}`));
      const forgot = atTerminal(`terraform-credentials-keychain forget ${HOST}`);
      assert.equal(forgot.status, 0, forgot.stdout);
      // What Terraform's own get now finds in pass:
      const after = await runHelper(["--backend", "pass", "get", HOST], { env });
      assert.deepEqual([after.code, after.stdout], [0, "{}\n"], after.stderr);
    },
  );

  test(
    "with Terraform's streams and no args, get reaches the pass store the block names",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      const { env } = await passMachine(t);
      // Terraform's get: stdin the null device, stdout and stderr pipes; no session bus here.
      const got = await runHelper(["get", HOST], { env });
      assert.deepEqual([got.code, got.stdout, got.stderr], [0, `{"token":"${TOKEN}"}\n`, ""]);
    },
  );

  test(
    "a call with its own --backend keychain is not sent to pass",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      const { atTerminal } = await passMachine(t);
      const line = commandLine([...helperCommand(), "--backend", "keychain", "get", HOST], "linux");
      const result = atTerminal(line);
      assert.notEqual(result.status, 0);
      assert.doesNotMatch(result.stdout, new RegExp(TOKEN));
      // Its own line names the keychain, which this machine does not have: the one fix is
      // the switch to pass, with the call's other options.
      assert.match(result.stdout, /no D-Bus session bus.* --backend pass install --force/);
    },
  );
});
