/**
 * `store` run by a person at a terminal: it says what to type and does not echo the token.
 * The terminal is a real pty, made by util-linux's `script`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, test } from "node:test";
import { commandLine } from "../../src/commands/command-line.ts";
import { helperCommand, runHelper } from "../support/helper-process.ts";
import { startKeyringSession } from "../support/keyring-session.ts";
import { onPath } from "../support/find-command.ts";
import { TEST_PATIENCE_MS } from "../support/timing.ts";

const notHere =
  process.platform !== "linux"
    ? "Linux only"
    : onPath("script") === undefined
      ? "util-linux's script is not installed"
      : false;

describe("store at a terminal", { skip: notHere }, () => {
  test(
    "prompts on stderr, shows nothing typed, and stores what was typed",
    { timeout: TEST_PATIENCE_MS },
    async (t) => {
      const session = await startKeyringSession();
      t.after(() => session.close());
      const line = commandLine([...helperCommand(), "store", "tty.example.com"], "linux");
      const child = spawn("script", ["-qefc", line, "/dev/null"], {
        env: session.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let screen = "";
      const prompted = new Promise<void>((resolve) => {
        child.stdout.on("data", (data: Buffer) => {
          screen += data.toString();
          if (screen.includes("nothing is shown")) resolve();
        });
      });
      const ended = new Promise<number | null>((resolve) => child.once("close", resolve));
      // Typed only once the prompt shows, as a person would: the terminal is in raw mode then.
      await prompted;
      child.stdin.write('{"token":"SECRET-typed"}\r');
      child.stdin.write("\x04");
      assert.equal(await ended, 0, screen);
      assert.doesNotMatch(screen, /SECRET-typed/);
      const get = await runHelper(["get", "tty.example.com"], { env: session.env });
      assert.equal(get.stdout, '{"token":"SECRET-typed"}\n');
    },
  );
});
