/**
 * The deadline of the Windows store's synchronous calls (deadline-watchdog.ts), run here on
 * Node's worker threads as Bun runs it in the Windows build: a Wine Credential Manager
 * never hangs, so this is where a call that does not return is made.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { test } from "node:test";

const FIXTURE = path.join(import.meta.dirname, "../support/deadline-watchdog-fixture.ts");

async function runFixture(mode: "hang" | "idle", seconds: number) {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, mode, String(seconds)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const started = performance.now();
  const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout, stderr, seconds: (performance.now() - started) / 1000 };
}

test("a call that never returns ends the process at the deadline, with its one line on stderr", async () => {
  const result = await runFixture("hang", 1);
  assert.equal(result.stderr, "deadline of 1 s\n");
  assert.equal(result.signal, "SIGKILL");
  assert.ok(result.seconds >= 1, `ended after ${result.seconds} s`);
});

test("past the deadline an idle process lives on, and no call starts", async () => {
  const result = await runFixture("idle", 0.5);
  assert.equal(result.stderr, "");
  assert.equal(result.code, 0);
  assert.equal(result.stdout, "answered\nrefused: deadline of 0.5 s\n");
});
