import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";

/**
 * Whether a child is started in a process group of its own (`detached`), so that what it
 * starts in turn (pass's gpg and git, a git hook's children) can be ended with it. POSIX
 * only: Windows has no process groups, and `detached` there opens a new console.
 */
export const OWN_GROUP = process.platform !== "win32";

/**
 * The names (the kernel's `comm`: the executable's name, never its arguments, which may
 * hold anything) of the live processes in the group `group`, read from Linux's /proc;
 * undefined where there is none to read (macOS, /proc hidden). A zombie, dead but not yet
 * reaped by its new parent, is not counted. With `leader` false, the group's leader (the
 * command we started, whatever it has exec'd since) is left out.
 */
export function groupMembers(group: number, leader = true): string[] | undefined {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return undefined;
  }
  const names: string[] = [];
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // "PID (COMM) STATE PPID PGRP ...": COMM may hold ") ", so split at the last one.
    const end = stat.lastIndexOf(") ");
    const [state, , pgrp] = stat.slice(end + 2).split(" ");
    if (Number(pgrp) !== group || state === "Z" || (!leader && Number(pid) === group)) continue;
    names.push(stat.slice(stat.indexOf("(") + 1, end));
  }
  return names;
}

/** Sends `signal` to every process of the group `group`; false when none is left. */
function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is empty
  }
}

/** Whether a live process is left in the group `group`. */
function groupAlive(group: number): boolean {
  const members = groupMembers(group);
  return members === undefined ? signalGroup(group, 0) : members.length > 0;
}

/** How long the group has to end after SIGTERM (git removes its lock files) before SIGKILL. */
const TERM_GRACE_MS = 500;
const POLL_MS = 20;

/**
 * Ends the process group `group`: SIGTERM, so that git and gpg remove their lock and
 * temporary files, then SIGKILL to whatever is left after TERM_GRACE_MS. Resolves once it
 * is sent; waiting for the group is bounded by the grace alone.
 */
export async function endGroup(
  group: number,
  sleep: (ms: number) => Promise<void>,
  now: () => number,
): Promise<void> {
  if (!signalGroup(group, "SIGTERM")) return;
  const until = now() + TERM_GRACE_MS;
  while (now() < until) {
    await sleep(POLL_MS);
    if (!groupAlive(group)) return;
  }
  signalGroup(group, "SIGKILL");
}

/** SIGTERM to the group now, for an exit clean-up, which cannot wait. */
export function termGroup(group: number): void {
  signalGroup(group, "SIGTERM");
}
