import { readFileSync } from "node:fs";
import path from "node:path";
import { CliError } from "../../errors.ts";
import { deadlineIn, type Deadline } from "../../system/deadline.ts";
import { oneLine } from "../../system/quote.ts";
import { firstSecretKey } from "./gpg-probe.ts";
import {
  anyPublicKey,
  changedSinceHead,
  headCommit,
  ownRecipients,
  passRecipients,
  readGitState,
  runGit,
  type GitState,
  type Recipients,
} from "./team-state.ts";
import type { FixNeeded } from "../../fixes.ts";

type Env = Readonly<Record<string, string | undefined>>;

// The refusals that keep a store shared through git safe: each runs under the store's lock,
// by the call's deadline, before (or right after) pass touches the store.

/** The fix for a repository stopped half-way, or holding conflicts. */
export function conflictFix(state: GitState, storeDir: string) {
  return {
    situation:
      state.operation === "rebase"
        ? ("pass-rebase-in-progress" as const)
        : ("pass-merge-in-progress" as const),
    values: { STOREDIR: storeDir },
  };
}

/** What is wrong with the repository for a write, in a few words, or undefined. */
export function conflictReason(state: GitState): string | undefined {
  if (state.unmerged.length > 0) {
    return `its git repository has entries in conflict (${state.unmerged.join(", ")})`;
  }
  if (state.operation !== undefined)
    return `its git repository is in the middle of a ${state.operation}`;
  return undefined;
}

/**
 * Refuses to write to a store whose repository is in a merge or rebase, or has entries in
 * conflict: pass would write, its commit would fail (or commit the conflict), and it would
 * still exit 0.
 */
export async function refuseConflicts(
  action: string,
  storeDir: string,
  env: Env,
  deadline: Deadline,
): Promise<void> {
  const state = await readGitState(storeDir, env, deadline);
  if (state === undefined) return; // git did not answer: pass and its commit will say more
  const reason = conflictReason(state);
  if (reason === undefined) return;
  throw new CliError(
    `nothing was ${action}: the password store in ${storeDir}: ${reason}`,
    undefined,
    {
      fix: conflictFix(state, storeDir),
    },
  );
}

/**
 * Refuses a write by someone who is no recipient of the entry's folder: what they store
 * would be encrypted to others only, an entry they cannot read back, and what they delete
 * is the team's. The fix is for a recipient to add their key (never a copy of a secret key).
 */
export async function refuseNonRecipient(
  action: string,
  storeDir: string,
  folder: string,
  env: Env,
  deadline: Deadline,
): Promise<void> {
  const recipients = passRecipients(env, storeDir, folder);
  if (recipients.ids.length === 0) return; // not initialised: pass says so
  const own = await ownRecipients(env, recipients.ids, deadline);
  if (own === "no answer" || own.length > 0) return; // gpg's own probe follows
  // Keys unknown here altogether: pass's gpg names them when it cannot encrypt.
  if (!(await anyPublicKey(env, recipients.ids, deadline))) return;
  const { reason, fix } = notRecipient(
    storeDir,
    folder,
    recipients,
    await firstSecretKey(env, deadline),
  );
  throw new CliError(`nothing was ${action}: ${reason}`, undefined, { fix });
}

/**
 * Why a user who is no recipient of `folder` cannot write there, and the fix: a recipient
 * adds their key. For store's and forget's errors and doctor's probe alike.
 */
export function notRecipient(
  storeDir: string,
  folder: string,
  recipients: Recipients,
  key: string | undefined,
): { reason: string; fix: FixNeeded } {
  const from =
    recipients.folder === undefined
      ? "PASSWORD_STORE_KEY"
      : path.join(storeDir, recipients.folder, ".gpg-id");
  return {
    reason: `the entries of ${folder} in ${storeDir} are encrypted to ${recipients.ids.join(", ")} (${from}), and gpg has the secret key of none of them here: you are no recipient`,
    fix: {
      situation: "pass-not-recipient",
      values: {
        // pass init -p writes the .gpg-id in force for the folder, wherever pass found it.
        FOLDER:
          recipients.folder === undefined || recipients.folder === "" ? folder : recipients.folder,
        IDS: recipients.ids.map((id) => (/^[\w@.:+-]+$/.test(id) ? id : `"${id}"`)).join(" "),
        ...(key === undefined ? {} : { KEY: key }),
      },
    },
  };
}

/**
 * Refuses to read an entry in conflict: git's index holds both sides (a merge stopped by
 * it), or the file holds conflict markers (a merge that wrote them). Either way the file is
 * one side at most, and maybe not the token in use.
 */
export async function refuseEntryInConflict(
  storeDir: string,
  file: string,
  env: Env,
  deadline: Deadline,
): Promise<void> {
  const run = await runGit(storeDir, ["ls-files", "--unmerged", "-z", "--", file], env, deadline);
  let markers = false;
  try {
    const text = readFileSync(path.join(storeDir, file), "latin1");
    markers = text.startsWith("<<<<<<< ") && /\n=======\r?\n/.test(text);
  } catch {
    // No such entry: pass says so.
  }
  if ((run.code === 0 && run.stdout !== "") || markers) {
    throw new CliError(
      `${file} in the password store ${storeDir} is in conflict (a git merge met changes to it from both sides): it holds one side at most`,
      undefined,
      { fix: { situation: "pass-merge-in-progress", values: { STOREDIR: storeDir } } },
    );
  }
}

/**
 * After pass ran `insert` or `rm`: the change must be committed, for the team to get it.
 * pass 1.7.4 ignores its `git commit`'s failure and exits 0; an entry still differing from
 * HEAD tells.
 */
export async function requireCommitted(
  action: string,
  storeDir: string,
  file: string,
  passStderr: string,
  env: Env,
  deadline: Deadline,
): Promise<void> {
  const changed = await changedSinceHead(storeDir, file, env, deadline);
  if (changed !== true) return;
  const gitLine =
    passStderr
      .split("\n")
      .map((line) => line.trim())
      .find((line) => /^(fatal|error): |Author identity unknown|nothing to commit/.test(line)) ??
    "";
  throw new CliError(
    `${file} was ${action} in ${storeDir}, but git did not commit it, so no one else gets the change${gitLine === "" ? "" : ` (${oneLine(gitLine, 100)})`}`,
    undefined,
    { fix: { situation: "pass-commit-failed", values: { STOREDIR: storeDir } } },
  );
}

/**
 * When `pass` ran past the deadline in a git store: whether the change was committed by
 * then, which means pass and gpg were done and what was still running is what the commit
 * started (git's hooks: a post-commit that pushes to a remote that does not answer). The
 * run's deadline is over, so git gets a few seconds of its own to say.
 */
export async function committedDespiteTimeout(
  storeDir: string,
  file: string,
  headBefore: string | undefined,
  env: Env,
): Promise<boolean> {
  const grace = deadlineIn(COMMIT_CHECK_SECONDS);
  const head = await headCommit(storeDir, env, grace);
  if (head === undefined || head === headBefore) return false;
  return (await changedSinceHead(storeDir, file, env, grace)) === false;
}

const COMMIT_CHECK_SECONDS = 3;
