/**
 * What `pass` runs is bounded by the helper: a `pass` that writes without end is ended once
 * it has written more than any answer holds (not at the deadline, and not after filling
 * memory), and at the deadline everything it started (git, a hook's shell and what that
 * started) ends with it, so nothing stays running with no parent.
 */
import assert from "node:assert/strict";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { runHelperMeasured } from "../support/peak-memory.ts";
import { startPassSession } from "../support/pass-session.ts";
import { assertOneLineFailure } from "../support/protocol-suite.ts";

/** Generous on a loaded 2-core machine: the bounds are against seconds and gigabytes. */
const TIMEOUT_S = 2;
const MARGIN_MS = 8000;
const MEMORY_MB = 200;

/** The live processes (zombies not counted) whose process group is `group`. */
function liveInGroup(group: number): string[] {
  const live: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      if (Number(pgrp) === group && state !== "Z") live.push(pid);
    } catch {
      // ended meanwhile
    }
  }
  return live;
}

/** Waits, up to a bound that holds on a loaded machine, until `group` has no live process. */
async function groupEnded(group: number): Promise<string[]> {
  const until = performance.now() + 10_000;
  for (;;) {
    const live = liveInGroup(group);
    if (live.length === 0 || performance.now() > until) return live;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits, up to a bound that holds on a loaded machine, until `pid` is gone (or a zombie). */
async function processEnded(pid: number): Promise<boolean> {
  const until = performance.now() + 10_000;
  for (;;) {
    let state = "gone";
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      state = stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[0] ?? "gone";
    } catch {
      // gone
    }
    if (state === "gone" || state === "Z") return true;
    if (performance.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe(
  "a pass that writes without end, or leaves programs running",
  { skip: linuxOnly("the pass suite") },
  () => {
    let home: string;
    before(() => {
      home = mkdtempSync(path.join(os.tmpdir(), "tfck-pass-runaway-"));
    });
    after(() => rmSync(home, { recursive: true, force: true }));

    /** A directory with `script` as its `pass`, for PATH. */
    const fakePass = (name: string, script: string) => {
      const bin = path.join(home, name);
      mkdirSync(bin);
      writeFileSync(path.join(bin, "pass"), `#!/bin/sh\n${script}\n`);
      chmodSync(path.join(bin, "pass"), 0o755);
      return { HOME: home, PATH: `${bin}:${process.env.PATH ?? ""}` };
    };

    for (const stream of ["stdout", "stderr"] as const) {
      test(`a pass that writes to ${stream} without end is ended at once, in bounded memory`, async () => {
        const env = fakePass(
          `endless-${stream}`,
          `exec yes ${"x".repeat(200)}${stream === "stderr" ? " >&2" : ""}`,
        );
        const result = await runHelperMeasured(
          ["--backend", "pass", "--timeout", String(TIMEOUT_S), "get", "example.com"],
          { env, timeoutMs: 60_000 },
        );
        assertOneLineFailure(result);
        assert.match(
          result.stderr,
          new RegExp(
            `^"pass show [^"]*example\\.com" wrote more than 4 MiB to ${stream}, more than any entry holds, and was ended`,
          ),
        );
        assert.ok(
          result.milliseconds < TIMEOUT_S * 1000 + MARGIN_MS,
          `took ${Math.round(result.milliseconds)} ms`,
        );
        assert.ok(result.peakMegabytes < MEMORY_MB, `took ${Math.round(result.peakMegabytes)} MB`);
      });
    }

    test("at the deadline, what pass started ends with it, and the message names it", async (t) => {
      const groupFile = path.join(home, "group");
      const grandchildFile = path.join(home, "grandchild");
      // As pass runs git, and git a hook whose push hangs: a shell, and a child it started.
      const env = fakePass(
        "leaves-children",
        `echo $$ > "${groupFile}"\nsh -c 'sleep 1000 & echo $! > "${grandchildFile}"; wait'`,
      );
      t.after(() => {
        try {
          process.kill(-Number(readFileSync(groupFile, "utf8")), "SIGKILL");
        } catch {
          // ended, as it should be
        }
      });
      const result = await runHelperMeasured(
        ["--backend", "pass", "--timeout", String(TIMEOUT_S), "get", "example.com"],
        { env, timeoutMs: 60_000 },
      );
      assertOneLineFailure(result);
      assert.match(
        result.stderr,
        /^"pass show [^"]*example\.com" did not finish within 2 s: it still ran sh, sleep, ended now with it/,
      );
      assert.ok(
        result.milliseconds < TIMEOUT_S * 1000 + MARGIN_MS,
        `took ${Math.round(result.milliseconds)} ms`,
      );
      const group = Number(readFileSync(groupFile, "utf8"));
      assert.ok(Number(readFileSync(grandchildFile, "utf8")) > 0);
      assert.deepEqual(await groupEnded(group), []);
    });

    test(
      "a real pass whose git post-commit hook hangs: the store names git, and nothing stays running",
      // Before the fix the hook's sleep kept running, and the run waited for it: bounded.
      { timeout: 120_000 },
      async (t) => {
        const session = await startPassSession({ git: true });
        t.after(() => session.close());
        const hookPid = path.join(home, "hook-pid");
        // As a hook that pushes to a remote that does not answer: it waits, and so do git and pass.
        const hook = path.join(session.storeDir, ".git", "hooks", "post-commit");
        writeFileSync(hook, `#!/bin/sh\necho $$ > "${hookPid}"\nexec sleep 1000\n`);
        chmodSync(hook, 0o755);
        const hookProcess = () => Number(readFileSync(hookPid, "utf8"));
        t.after(() => {
          try {
            process.kill(hookProcess(), "SIGKILL");
          } catch {
            // ended, as it should be
          }
        });
        const result = await runHelperMeasured(
          ["--backend", "pass", "--timeout", "5", "store", "example.com"],
          { env: session.env, stdin: '{"token":"SECRET-hook"}', timeoutMs: 60_000 },
        );
        assertOneLineFailure(result);
        assert.match(result.stderr, /did not finish within 5 s: it still ran git, .*sleep/);
        assert.doesNotMatch(result.stderr, /gpg waits|SECRET/);
        assert.ok(
          result.milliseconds < 5000 + MARGIN_MS,
          `took ${Math.round(result.milliseconds)} ms`,
        );
        assert.equal(await processEnded(hookProcess()), true, "the hook's sleep still runs");
      },
    );
  },
);
