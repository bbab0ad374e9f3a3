import process from "node:process";
import { runCleanups } from "./exit-cleanups.ts";

/**
 * Whether exec's command is running, kept apart from run-command.ts so that the signal
 * handlers of endOnSignals can ask without loading node:child_process on every call.
 */
let running = 0;

/** True while a command started by exec runs: the signals we forward are then its to handle. */
function forwardingSignals(): boolean {
  return running > 0;
}

/** Counts a command in (+1) or out (-1). */
export function countRunningCommand(change: 1 | -1): void {
  running += change;
}

/**
 * Ctrl-C, SIGTERM and a closed terminal first undo what must not outlive the process (the
 * pass store's lock), then end it by the same signal, as if there were no handler. Nothing
 * on the main thread blocks (stdin is read asynchronously), so this runs at once.
 */
export function endOnSignals(): void {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      runCleanups();
      // While exec's command runs, it gets the signal (run-command.ts) and exec ends with its code.
      if (forwardingSignals()) return;
      process.kill(process.pid, signal);
    });
  }
}
