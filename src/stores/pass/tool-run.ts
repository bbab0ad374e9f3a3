import type { Deadline } from "../../system/deadline.ts";
import { captureCommand } from "../../system/run-command.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** A run of one of the store's tools (gpg, git), its output and whether the deadline cut it short. */
export interface ToolRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Ended at the deadline (or not started, none being left). */
  readonly timedOut: boolean;
}

/**
 * `command ARGS` by `deadline`, for a probe or a check that reads the answer itself: every way
 * it can end is a ToolRun, one that could not start or wrote without end with a line in
 * `stderr` that says so.
 */
export async function runTool(
  command: string,
  args: readonly string[],
  options: { readonly env: Env; readonly deadline: Deadline; readonly input?: string },
): Promise<ToolRun> {
  const outcome = await captureCommand(command, args, {
    env: options.env,
    input: options.input ?? "",
    deadline: options.deadline,
  });
  switch (outcome.kind) {
    case "exited":
    case "signalled":
    case "timed-out":
      return { ...outcome, timedOut: outcome.kind === "timed-out" };
    case "too-much-output":
      return {
        code: null,
        stdout: "",
        stderr: `${command} wrote more than ${outcome.limit} to ${outcome.stream} and was ended`,
        timedOut: false,
      };
    case "not-found":
    case "not-executable":
    case "too-big":
    case "not-started":
      return {
        code: null,
        stdout: "",
        stderr: `${command} could not be run (${outcome.kind})`,
        timedOut: false,
      };
  }
}
