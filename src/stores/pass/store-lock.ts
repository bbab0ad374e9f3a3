import { statSync, unlinkSync } from "node:fs";
import { lstat, readlink, rmdir, symlink, unlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CliError } from "../../errors.ts";
import type { Deadline } from "../../system/deadline.ts";
import { registerCleanup } from "../../system/exit-cleanups.ts";

/**
 * This process, recorded in the store's lock, and a way to tell whether another is still
 * running: a lock whose holder has died is then taken over at once. Without it, only a
 * lock older than the stale age is.
 */
export interface LockProcesses {
  readonly pid: number;
  isAlive(pid: number): boolean;
}

// The lock is a symlink (creating one is atomic) at the top of the store whose target names
// its holder, "<host>:<pid>", so that a waiter can see the holder has died. Hidden, so
// `pass ls` does not show it; in a git store, inside .git (see lockPath). Older versions made it a directory: either kind refuses the
// other (EEXIST), so they still exclude each other.
const LOCK_NAME = ".terraform-credentials.lock";
const LOCK_POLL_MS = 25;

/**
 * Runs `operation` while holding the store's lock. gpg writes an entry in place (truncate,
 * then write), so without it two `store`s at once leave a damaged entry and a `get` during a
 * `store` reads half a file (seen with 20 parallel `pass insert`s: "invalid packet",
 * "encrypted message has been manipulated"). In a git store, two commits at once would also
 * collide on git's index.lock. Terraform does start several helpers at once.
 *
 * The lock is released when the operation ends, and also when the process is interrupted
 * (exit-cleanups.ts). A lock whose holder on this machine is no longer running (killed with
 * SIGKILL) is taken over at once; any other lock older than the timeout plus a margin is too.
 * When the lock cannot be created at all (no store directory yet, a read-only store),
 * `operation` runs without it: pass then reports what is wrong, and nothing can write anyway.
 */
export async function withStoreLock<T>(
  storeDir: string,
  deadline: Deadline,
  processes: LockProcesses | undefined,
  operation: () => Promise<T>,
): Promise<T> {
  const lock = lockPath(storeDir);
  const staleAfterMs = deadline.seconds * 1000 + 10_000;
  const owner = `${os.hostname()}:${processes?.pid ?? 0}`;
  let release: (() => void) | undefined;
  for (;;) {
    try {
      await symlink(owner, lock);
      release = registerCleanup(() => unlinkSync(lock));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException | undefined)?.code !== "EEXIST") break;
    }
    const holder = await lockHolder(lock);
    if (holder === "released") continue;
    // A holder on this machine is asked whether it still runs: a live one is never robbed,
    // however long it takes (gpg waiting for a passphrase). Only a lock whose holder cannot
    // be asked (another machine sharing the store, an older version's lock) goes by its age.
    const askable =
      processes !== undefined && holder.host === os.hostname() && holder.pid !== undefined;
    const deadHolder =
      askable && holder.pid !== processes.pid && !processes.isAlive(holder.pid ?? 0);
    if (deadHolder || (!askable && holder.ageMs > staleAfterMs)) {
      // A small race remains: two waiters may both see the same stale lock. It only arises
      // after a process was killed while holding it.
      await (holder.isDirectory ? rmdir(lock) : unlink(lock)).catch(() => undefined);
      continue;
    }
    // The call's own deadline: what the holder leaves of it is all the operation gets.
    if (deadline.remainingMs() <= 0) {
      throw new CliError(
        `the password store in ${storeDir} is busy: ${lock} has been held for ${heldFor(holder.ageMs)} by another process; if no terraform-credentials helper is running, remove it`,
      );
    }
    await new Promise((resolve) =>
      setTimeout(resolve, LOCK_POLL_MS + Math.random() * LOCK_POLL_MS),
    );
  }
  try {
    return await operation();
  } finally {
    if (release !== undefined) {
      release();
      await unlink(lock).catch(() => undefined);
    }
  }
}

/**
 * Where the lock is: inside the store's own git directory when the store is a repository
 * (git never shows what is in `.git`, so the lock appears in no `git status` and no commit
 * of a team's store), else at the store's top. Every version of the helper that shares a
 * store must agree: a store that `pass git init` turns into a repository while a lock is
 * held is the one moment two could miss each other.
 */
function lockPath(storeDir: string): string {
  let gitDir = false;
  try {
    gitDir = statSync(path.join(storeDir, ".git")).isDirectory();
  } catch {
    // Not a repository (or not one of its own: a worktree's .git is a file).
  }
  return gitDir ? path.join(storeDir, ".git", LOCK_NAME) : path.join(storeDir, LOCK_NAME);
}

/** "0.4 s" for a moment, whole seconds for anything a person would count. */
export function heldFor(ageMs: number): string {
  const seconds = ageMs / 1000;
  return seconds < 10 ? `${Number(seconds.toFixed(1))} s` : `${Math.round(seconds)} s`;
}

interface LockHolder {
  readonly ageMs: number;
  readonly isDirectory: boolean;
  readonly host?: string;
  readonly pid?: number;
}

/** Who holds the lock and for how long, or "released" when it went meanwhile. */
async function lockHolder(lock: string): Promise<LockHolder | "released"> {
  try {
    const stat = await lstat(lock);
    const ageMs = Date.now() - stat.mtimeMs;
    if (!stat.isSymbolicLink()) return { ageMs, isDirectory: stat.isDirectory() };
    const match = /^(.*):([0-9]+)$/s.exec(await readlink(lock));
    if (match === null) return { ageMs, isDirectory: false };
    return { ageMs, isDirectory: false, host: match[1] ?? "", pid: Number(match[2]) };
  } catch {
    return "released";
  }
}
