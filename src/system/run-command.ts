import { spawn } from "node:child_process";
import process from "node:process";
import { countRunningCommand } from "./signal-forwarding.ts";

/** How a command ended: its exit code, or the signal that killed it. */
export type CommandOutcome =
  | { readonly kind: "exited"; readonly code: number }
  | { readonly kind: "signalled"; readonly signal: NodeJS.Signals }
  | { readonly kind: "not-found" }
  | { readonly kind: "not-executable" }
  /** The arguments and environment together are more than the system takes (E2BIG). */
  | { readonly kind: "too-big" }
  /** It could not be started for another reason, named by its error code. */
  | { readonly kind: "not-started"; readonly code: string };

/** Where the signals to forward come from: the running process, passed in by main.ts. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

// SIGHUP too: main.ts leaves all three to the command while it runs. The others would end
// exec by their default action and leave the command running with the tokens, unattended;
// Windows has none of them.
const FORWARDED: readonly NodeJS.Signals[] = [
  "SIGINT",
  "SIGTERM",
  "SIGHUP",
  ...(process.platform === "win32" ? [] : (["SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM"] as const)),
];

function startFailure(error: unknown): CommandOutcome {
  const code = (error as NodeJS.ErrnoException).code ?? "unknown";
  if (code === "ENOENT") return { kind: "not-found" };
  if (code === "EACCES") return { kind: "not-executable" };
  if (code === "E2BIG") return { kind: "too-big" };
  return { kind: "not-started", code };
}

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
    let child;
    try {
      child = spawn(command, args, { env, stdio: "inherit" });
    } catch (error) {
      // Refused before it started (E2BIG from posix_spawn): nothing runs, nothing to forward.
      resolve(startFailure(error));
      return;
    }
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
    child.on("error", (error: NodeJS.ErrnoException) => finish(startFailure(error)));
    child.on("exit", (code, signal) => {
      finish(signal === null ? { kind: "exited", code: code ?? 1 } : { kind: "signalled", signal });
    });
  });
}
