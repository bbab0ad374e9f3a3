import type { Deadline } from "../system/deadline.ts";
import type { Machine } from "../system/io.ts";
import { captureCommand } from "../system/run-command.ts";
import { stacksHostnameNote } from "../terraform/stacks-hostname.ts";

/**
 * The stacks note (stacksHostnameNote) where it applies: only when the `terraform` on PATH
 * has `terraform stacks` (1.16 and later); older ones, and OpenTofu, take no host from there.
 */
export async function stacksNoteHere(
  machine: Machine,
  hosts: readonly string[],
  deadline: Deadline,
): Promise<string | undefined> {
  const note = stacksHostnameNote(hosts, machine.env);
  if (note === undefined) return undefined;
  return (await terraformHasStacks(machine, deadline)) ? note : undefined;
}

/** Whether `terraform version` names 1.16 or later; not when it is missing or fails. */
async function terraformHasStacks(machine: Machine, deadline: Deadline): Promise<boolean> {
  const outcome = await captureCommand("terraform", ["version"], {
    // No call to HashiCorp's checkpoint service for this.
    env: { ...machine.env, CHECKPOINT_DISABLE: "1" },
    deadline,
  });
  if (outcome.kind !== "exited" || outcome.code !== 0) return false;
  const version = /^Terraform v(\d+)\.(\d+)\./m.exec(outcome.stdout);
  if (version === null) return false;
  const [major, minor] = [Number(version[1]), Number(version[2])];
  return major > 1 || (major === 1 && minor >= 16);
}
