import { spawn } from "node:child_process";
import { countRunningCommand } from "./signal-forwarding.ts";

/** How a command ended: its exit code, or the signal that killed it. */
export type CommandOutcome =
  | { readonly kind: "exited"; readonly code: number }
  | { readonly kind: "signalled"; readonly signal: NodeJS.Signals }
  | { readonly kind: "not-found" }
  | { readonly kind: "not-executable" };

/** Where the signals to forward come from: the running process, passed in by main.ts. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

// SIGHUP too: main.ts leaves all three to the command while it runs.
const FORWARDED: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Runs `command` with our stdin, stdout and stderr and `env`, forwarding SIGINT, SIGTERM and SIGHUP
 * to it while it runs (we stay alive to report how it ended), and resolves when it ends.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  signals: SignalSource,
): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: "inherit" });
    countRunningCommand(1);
    const forwarders = FORWARDED.map((signal) => {
      const forward = () => child.kill(signal);
      signals.on(signal, forward);
      return () => signals.off(signal, forward);
    });
    let finished = false;
    const finish = (outcome: CommandOutcome) => {
      if (finished) return;
      finished = true;
      countRunningCommand(-1);
      for (const stop of forwarders) stop();
      resolve(outcome);
    };
    child.on("error", (error: NodeJS.ErrnoException) => {
      finish(
        error.code === "ENOENT"
          ? { kind: "not-found" }
          : error.code === "EACCES"
            ? { kind: "not-executable" }
            : { kind: "exited", code: 1 },
      );
    });
    child.on("exit", (code, signal) => {
      finish(signal === null ? { kind: "exited", code: code ?? 1 } : { kind: "signalled", signal });
    });
  });
}
