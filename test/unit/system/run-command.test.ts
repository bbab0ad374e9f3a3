import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, test } from "node:test";
import { runCommand } from "../../../src/system/run-command.ts";

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
