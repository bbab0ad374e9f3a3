import { constants } from "node:os";

/**
 * Whether exec's command is running, kept apart from run-command.ts so that main.ts's
 * signal handlers can ask without loading node:child_process on every call.
 */
let running = 0;

/** True while a command started by exec runs: the signals we forward are then its to handle. */
export function forwardingSignals(): boolean {
  return running > 0;
}

/** Counts a command in (+1) or out (-1). */
export function countRunningCommand(change: 1 | -1): void {
  running += change;
}

/** The shell convention for a command killed by `signal`: 128 plus its number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + constants.signals[signal];
}
