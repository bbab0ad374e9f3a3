/**
 * The watchdog thread of deadline-watchdog.ts: at the deadline it ends the process if a
 * call is still running, with the deadline's message on stderr; otherwise it marks the
 * deadline passed, so that no call starts after it. Like main.ts it stands at the edge of
 * the process, and so may use `process`.
 */
import { writeSync } from "node:fs";
import process from "node:process";
import { parentPort } from "node:worker_threads";
import { WATCHDOG_STATE, type WatchdogOrders } from "./deadline-watchdog.ts";

parentPort?.once("message", ({ state, delayMs, message }: WatchdogOrders) => {
  const { idle, expired } = WATCHDOG_STATE;
  setTimeout(() => {
    if (Atomics.compareExchange(state, 0, idle, expired) === idle) return;
    try {
      writeSync(2, `${message}\n`);
    } catch {
      // stderr is gone: the exit code is all that is left.
    }
    // TerminateProcess on Windows: the blocked thread cannot be interrupted any other way.
    process.kill(process.pid, "SIGKILL");
  }, delayMs);
});
