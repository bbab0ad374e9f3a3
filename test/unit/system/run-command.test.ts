import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, test } from "node:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { deadlineAt, deadlineIn } from "../../../src/system/deadline.ts";
import { captureCommand, runCommand } from "../../../src/system/run-command.ts";

/** A signal source the test fires by hand, in place of the process. */
function signalSource() {
  const emitter = new EventEmitter();
  return {
    on: (signal: NodeJS.Signals, listener: () => void) => emitter.on(signal, listener),
    off: (signal: NodeJS.Signals, listener: () => void) => emitter.off(signal, listener),
    fire: (signal: NodeJS.Signals) => emitter.emit(signal),
    listeners: (signal: NodeJS.Signals) => emitter.listenerCount(signal),
  };
}

const posix = process.platform !== "win32";

describe("runCommand", { skip: !posix && "POSIX commands and signals" }, () => {
  test("an environment larger than the system takes is reported, not thrown", async () => {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", BIG: "x".repeat(3_000_000) };
    assert.deepEqual(await runCommand("true", [], env, signalSource()), { kind: "too-big" });
  });

  for (const signal of ["SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGTERM"] as const) {
    test(`${signal} is passed on to the command, which ends by it`, async () => {
      const signals = signalSource();
      // Forwarding is in place once the listener is registered.
      const ready = new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (signals.listeners(signal) > 0) {
            clearInterval(check);
            resolve();
          }
        }, 10);
      });
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
      const outcome = runCommand("sleep", ["30"], env, signals);
      await ready;
      // Even before sleep has exec'd, the child ends by the signal: all this test asserts.
      signals.fire(signal);
      assert.deepEqual(await outcome, { kind: "signalled", signal });
      assert.equal(signals.listeners(signal), 0, "the forwarder is removed afterwards");
    });
  }
});

describe("captureCommand", { skip: !posix && "POSIX commands" }, () => {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

  test("its input reaches stdin, and stdout, stderr and the exit code come back", async () => {
    const outcome = await captureCommand("sh", ["-c", "cat; echo oops >&2; exit 3"], {
      env,
      input: "hello",
      deadline: deadlineIn(30),
    });
    assert.deepEqual(outcome, { kind: "exited", code: 3, stdout: "hello", stderr: "oops\n" });
  });

  test("a command still running at the deadline is killed, and says so", async () => {
    const outcome = await captureCommand("sleep", ["30"], { env, deadline: deadlineIn(0.2) });
    assert.equal(outcome.kind, "timed-out");
  });

  test("none is started once the deadline has passed", async (t) => {
    const marker = path.join(mkdtempSync(path.join(os.tmpdir(), "tfck-capture-")), "started");
    t.after(() => rmSync(path.dirname(marker), { recursive: true, force: true }));
    const passed = deadlineAt(0, 1, { now: () => 1, sleep: async () => {} });
    const outcome = await captureCommand("touch", [marker], { env, deadline: passed });
    assert.equal(outcome.kind, "timed-out");
    assert.equal(existsSync(marker), false, "touch was not run");
  });

  // 4 MiB, OUTPUT_LIMIT_BYTES: kept whole up to it, ended one byte past it.
  for (const stream of ["stdout", "stderr"] as const) {
    test(`what it writes to ${stream} is kept up to 4 MiB, and one byte more ends it`, async () => {
      const write = (bytes: number) =>
        captureCommand(
          "sh",
          ["-c", `head -c ${bytes} /dev/zero${stream === "stderr" ? " >&2" : ""}`],
          {
            env,
            deadline: deadlineIn(30),
          },
        );
      const whole = await write(4 * 1024 * 1024);
      assert.equal(whole.kind, "exited");
      assert.equal("code" in whole && whole[stream].length, 4 * 1024 * 1024);
      assert.deepEqual(await write(4 * 1024 * 1024 + 1), {
        kind: "too-much-output",
        stream,
        limit: "4 MiB",
      });
    });
  }

  test("at the deadline its whole process group ends, and what ran is named", async () => {
    const outcome = await captureCommand("sh", ["-c", "sleep 1000 & echo $!; wait"], {
      env,
      // Long enough for sh to start and say its child's pid on a loaded machine.
      deadline: deadlineIn(3),
    });
    assert.equal(outcome.kind, "timed-out");
    if (process.platform === "linux") assert.deepEqual(outcome.running, ["sleep"]);
    const grandchild = Number(outcome.stdout);
    assert.ok(grandchild > 0);
    // Gone, or a zombie its new parent has not reaped yet.
    let state = "gone";
    try {
      process.kill(grandchild, 0);
      state = process.platform === "linux" ? stateOf(grandchild) : "alive";
    } catch {
      // gone
    }
    assert.match(state, /^(gone|Z)$/);
  });

  test("a command that is not there is said to be so, not thrown", async () => {
    const outcome = await captureCommand("no-such-command-tfck", [], {
      env,
      deadline: deadlineIn(30),
    });
    assert.deepEqual(outcome, { kind: "not-found" });
  });
});

/** The state letter of process `pid` in /proc ("Z" for a zombie), or "gone". */
function stateOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[0] ?? "gone";
  } catch {
    return "gone";
  }
}
