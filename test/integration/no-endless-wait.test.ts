/**
 * No command can be made to wait forever: a stdin that never ends or never closes, a
 * signal while stdin is read, a FIFO as the CLI config. Each case hung the helper before
 * (a blocking read on the main thread kept signal handlers from running).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { helperCommand } from "../support/helper-process.ts";
import { PATIENCE_MS } from "../support/timing.ts";

/** Far above how long any case takes when it works; a hang fails the test here. */
const HANG_MS = PATIENCE_MS;

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  /** stdout and stderr together: doctor reports on stdout, other commands fail on stderr. */
  readonly output: string;
}

/**
 * Runs the helper with `stdin` as a child's stdout: "endless" (a writer that never stops),
 * "stalled" (a writer that never writes nor closes) or "none". Once the helper is running
 * (it has spawned), `afterStart` may act on it.
 */
function runWith(
  t: TestContext,
  args: readonly string[],
  stdin: "endless" | "stalled" | "none",
  env: Record<string, string | undefined>,
  afterStart?: (pid: number) => void,
): Promise<Ended> {
  const [command, ...rest] = helperCommand();
  const child = spawn(command, [...rest, ...args], {
    env,
    stdio: [stdin === "none" ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let writing = true;
  if (stdin === "endless") {
    const chunk = Buffer.alloc(64 * 1024, "y");
    const write = () => {
      while (writing && child.stdin?.write(chunk) === true);
      if (writing) child.stdin?.once("drain", write);
    };
    child.stdin?.on("error", () => undefined);
    write();
  }
  let stderr = "";
  let output = "";
  child.stderr?.on("data", (data: Buffer) => {
    stderr += data.toString();
    output += data.toString();
  });
  child.stdout?.on("data", (data: Buffer) => (output += data.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), HANG_MS);
  t.after(() => {
    clearTimeout(timer);
    child.kill("SIGKILL");
  });
  child.once("spawn", () => afterStart?.(child.pid ?? 0));
  return new Promise((resolve) => {
    child.once("close", (code, signal) => {
      writing = false;
      clearTimeout(timer);
      child.stdin?.destroy();
      resolve({ code, signal, stderr, output });
    });
  });
}

function sandboxEnv(t: TestContext): { env: Record<string, string>; dir: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-wait-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const home = path.join(dir, "home");
  mkdirSync(home);
  return { dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home } };
}

describe("no command waits forever", { skip: process.platform === "win32" }, () => {
  // Read on past the cap (the protocol wants stdin read to EOF), so only the deadline ends it.
  test("store with an endless stdin is read on past the cap and refused at the deadline", async (t) => {
    const { env } = sandboxEnv(t);
    const ended = await runWith(t, ["--timeout", "1", "store", "a.example.com"], "endless", env);
    assert.equal(ended.code, 1, ended.stderr);
    assert.equal(
      ended.stderr,
      "the credentials object on stdin did not end within 1 s (Terraform closes it after the object): nothing was stored\n",
    );
  });

  test("store with a stdin nobody closes is refused at the deadline", async (t) => {
    const { env } = sandboxEnv(t);
    const ended = await runWith(t, ["--timeout", "1", "store", "a.example.com"], "stalled", env);
    assert.equal(ended.code, 1, ended.stderr);
    assert.equal(
      ended.stderr,
      "the credentials object on stdin did not end within 1 s (Terraform closes it after the object): nothing was stored\n",
    );
  });

  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    test(`${signal} while stdin is read ends the helper by that signal`, async (t) => {
      const { env } = sandboxEnv(t);
      // Sent once the helper has started; it is then (or soon) waiting on stdin.
      const ended = await runWith(t, ["store", "a.example.com"], "stalled", env, (pid) => {
        setTimeout(() => process.kill(pid, signal), 300);
      });
      assert.deepEqual([ended.code, ended.signal], [null, signal], ended.stderr);
    });
  }

  test("a failing exec whose command has the word store does not read stdin to its end", async (t) => {
    const { env } = sandboxEnv(t);
    const ended = await runWith(
      t,
      ["exec", "--host", "a..b", "--", "grep", "store"],
      "endless",
      env,
    );
    assert.equal(ended.code, 2, ended.stderr);
    assert.match(ended.stderr, /^invalid hostname "a\.\.b"/);
  });

  for (const command of [["install"], ["uninstall"], ["doctor"]]) {
    test(`${command[0]} with a FIFO as the CLI config is refused at once`, async (t) => {
      const { env, dir } = sandboxEnv(t);
      const fifo = path.join(dir, "terraformrc");
      const made = spawnSync("mkfifo", [fifo], { encoding: "utf8" });
      if (made.status !== 0) {
        t.skip(`mkfifo failed here (${made.stderr.trim()})`);
        return;
      }
      const ended = await runWith(t, command, "none", { ...env, TF_CLI_CONFIG_FILE: fifo });
      assert.notEqual(ended.code, 0);
      assert.equal(ended.signal, null);
      assert.match(ended.output, new RegExp(`${fifo} is a FIFO, not a regular file`));
    });
  }
});
