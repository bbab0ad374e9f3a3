/**
 * The tokens `uninstall` leaves: it names them, with a command of the store's own tools that
 * deletes them and still runs after the last uninstall has removed the executable (run here
 * as printed), and it says when it could not check.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { onPath } from "../support/find-command.ts";
import { runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startKeyringSession } from "../support/keyring-session.ts";
import { startPassSession } from "../support/pass-session.ts";
import { PATIENCE_MS, TEST_PATIENCE_MS } from "../support/timing.ts";

const HOST = "app.terraform.io";
const skip = linuxOnly("the uninstall suite");

/** Runs a line in a shell, with the helper's link directory on PATH, as a person would. */
function shell(env: Record<string, string>) {
  const bin = path.join(env.HOME ?? "", ".local", "bin");
  mkdirSync(bin, { recursive: true });
  const withBin = { ...env, PATH: `${bin}:${env.PATH ?? ""}` };
  return {
    env: withBin,
    sh: (line: string, extra: Record<string, string> = {}) =>
      spawnSync("sh", ["-c", line], {
        env: { ...withBin, ...extra },
        input: "",
        encoding: "utf8",
        timeout: PATIENCE_MS,
      }),
  };
}

/** The command after "to delete them, run: " on a line of `output`. */
function deleting(output: string): string {
  const command = /; to delete them, run: (.*)$/m.exec(output)?.[1];
  assert.ok(command !== undefined, output);
  return command;
}

describe("uninstall and the tokens that stay", { skip }, () => {
  test(
    "two pass profiles: each uninstall prints a command that still deletes its tokens after the last one",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      const session = await startPassSession();
      t.after(() => session.close());
      const { env, sh } = shell(session.env);
      const commands: string[] = [];
      for (const profile of ["work", "personal"]) {
        const config = { TF_CLI_CONFIG_FILE: path.join(session.home, `.terraformrc-${profile}`) };
        const profileEnv = { ...env, ...config };
        const installed = await runHelper(["--backend", "pass", "--service", profile, "install"], {
          env: profileEnv,
        });
        assert.equal(installed.code, 0, installed.stderr);
        const stored = await runHelper(["--backend", "pass", "--service", profile, "store", HOST], {
          env: profileEnv,
          stdin: `{"token":"SECRET-${profile}"}`,
        });
        assert.equal(stored.code, 0, stored.stderr);
      }
      for (const profile of ["work", "personal"]) {
        const config = { TF_CLI_CONFIG_FILE: path.join(session.home, `.terraformrc-${profile}`) };
        // By name, as a person runs it: the installed executable, through its link.
        const uninstalled = sh("terraform-credentials-keychain uninstall", config);
        assert.equal(uninstalled.status, 0, uninstalled.stderr);
        assert.match(
          uninstalled.stdout,
          new RegExp(
            `the tokens for ${HOST.replaceAll(".", "\\.")} stay in pass \\(service "${profile}"\\)`,
          ),
        );
        commands.push(deleting(uninstalled.stdout));
      }
      assert.equal(
        existsSync(
          path.join(session.home, ".terraform.d", "plugins", "terraform-credentials-keychain"),
        ),
        false,
        "the last uninstall removed the executable",
      );
      for (const command of commands) {
        const ran = sh(command);
        assert.equal(ran.status, 0, `${command}: ${ran.stderr}`);
      }
      for (const profile of ["work", "personal"]) {
        const left = await runHelper(["--backend", "pass", "--service", profile, "get", HOST], {
          env,
        });
        assert.deepEqual([left.code, left.stdout], [0, "{}\n"], left.stderr);
      }
    },
  );

  test(
    "the Secret Service: the printed secret-tool commands delete what stayed",
    {
      skip: onPath("secret-tool") === undefined && "secret-tool is not installed",
      timeout: TEST_PATIENCE_MS,
    },
    async (t) => {
      const session = await startKeyringSession();
      t.after(() => session.close());
      const { env, sh } = shell(session.env);
      assert.equal((await runHelper(["install"], { env })).code, 0);
      const stored = await runHelper(["store", HOST], { env, stdin: '{"token":"SECRET-kept"}' });
      assert.equal(stored.code, 0, stored.stderr);
      const uninstalled = sh("terraform-credentials-keychain uninstall");
      assert.equal(uninstalled.status, 0, uninstalled.stderr);
      const ran = sh(deleting(uninstalled.stdout));
      assert.equal(ran.status, 0, ran.stderr);
      const left = await runHelper(["get", HOST], { env });
      assert.deepEqual([left.code, left.stdout], [0, "{}\n"], left.stderr);
    },
  );

  test("no keychain here: uninstall says it could not check, not that tokens stay", async (t) => {
    const session = await startPassSession();
    t.after(() => session.close());
    const { env, sh } = shell(session.env);
    assert.equal((await runHelper(["install"], { env })).code, 0);
    const uninstalled = sh("terraform-credentials-keychain uninstall");
    assert.equal(uninstalled.status, 0, uninstalled.stderr);
    assert.match(
      uninstalled.stdout,
      /^could not check which tokens stay in the keychain \(service "terraform-credentials"\): .*no D-Bus session bus/m,
    );
    assert.doesNotMatch(uninstalled.stdout, /the tokens (for .*)?stay in/);
  });
});
