import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Deadline } from "../../system/deadline.ts";
import { runTool, type ToolRun } from "./tool-run.ts";

type Env = Readonly<Record<string, string | undefined>>;

// What a store shared by a team needs to know before it writes, and doctor before it says ok:
// whom a folder's entries are encrypted to, whether this user is one of them, whether gpg
// will encrypt to each (under its own trust model, as pass's gpg does), and the state of the
// store's git repository, read through git itself and never over the network.

/** The recipients of the entries in a folder, and where pass found them. */
export interface Recipients {
  readonly ids: readonly string[];
  /**
   * The folder (relative to the store, "" for its top) whose `.gpg-id` names them, or
   * undefined when PASSWORD_STORE_KEY does.
   */
  readonly folder: string | undefined;
}

/**
 * The gpg ids `pass` encrypts an entry in `folder` to, as pass 1.7.4's `set_gpg_recipients`
 * finds them: PASSWORD_STORE_KEY (split at white space) when set, else the nearest
 * `.gpg-id` from the entry's folder up to the store's top, each line less a `#` comment.
 */
export function passRecipients(env: Env, storeDir: string, folder: string): Recipients {
  const key = env.PASSWORD_STORE_KEY ?? "";
  if (key !== "") return { ids: key.split(/\s+/).filter((id) => id !== ""), folder: undefined };
  const parts = folder.split("/").filter((part) => part !== "");
  for (let depth = parts.length; depth >= 0; depth--) {
    const here = parts.slice(0, depth);
    let text;
    try {
      text = readFileSync(path.join(storeDir, ...here, ".gpg-id"), "utf8");
    } catch {
      continue; // Not here: one folder up.
    }
    const ids = text
      .split("\n")
      .map((line) => line.replace(/#.*/, "").trim())
      .filter((line) => line !== "");
    return { ids, folder: here.join("/") };
  }
  return { ids: [], folder: "" };
}

/** The recipients whose secret key gpg has here: this user is one of them when any is. */
export async function ownRecipients(
  env: Env,
  ids: readonly string[],
  deadline: Deadline,
): Promise<string[] | "no answer"> {
  const own: string[] = [];
  for (const id of ids) {
    const run = await runTool("gpg", ["--batch", "--with-colons", "--list-secret-keys", "--", id], {
      env,
      deadline,
    });
    if (run.timedOut) return "no answer";
    if (run.code === 0 && /^sec:/m.test(run.stdout)) own.push(id);
  }
  return own;
}

/**
 * Whether gpg has the public key of any of `ids`: when it has none, `.gpg-id` names keys
 * unknown here (a typo, a store made elsewhere) rather than a team this user is not part of.
 */
export async function anyPublicKey(
  env: Env,
  ids: readonly string[],
  deadline: Deadline,
): Promise<boolean> {
  for (const id of ids) {
    const run = await runTool("gpg", ["--batch", "--with-colons", "--list-keys", "--", id], {
      env,
      deadline,
    });
    if (run.code === 0 && /^pub:/m.test(run.stdout)) return true;
  }
  return false;
}

/** Why gpg, as pass runs it, would not encrypt to a recipient. */
export interface UnusableRecipient {
  readonly id: string;
  /** missing: no public key here; untrusted: gpg's trust model gives it no validity. */
  readonly kind: "missing" | "untrusted" | "unusable";
  /** gpg's line, for a message. */
  readonly detail: string;
}

/**
 * The recipients gpg refuses to encrypt to, each tried as `pass insert` runs gpg: `--batch`,
 * the user's PASSWORD_STORE_GPG_OPTS (where a `--trust-model` of theirs would go), and
 * otherwise gpg's own trust model, never `--trust-model always`. A key nobody has signed
 * or trusted is refused here exactly as pass's gpg refuses it.
 */
export async function unusableRecipients(
  env: Env,
  ids: readonly string[],
  deadline: Deadline,
): Promise<UnusableRecipient[] | "no answer"> {
  const userOptions = (env.PASSWORD_STORE_GPG_OPTS ?? "").split(/\s+/).filter((w) => w !== "");
  const unusable: UnusableRecipient[] = [];
  for (const id of ids) {
    const run = await runTool(
      "gpg",
      ["--batch", "--quiet", "--yes", "--no-encrypt-to", ...userOptions, "--encrypt", "-r", id],
      { env, deadline, input: "" },
    );
    if (run.timedOut) return "no answer";
    if (run.code === 0) continue;
    const lines = run.stderr
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line.startsWith("gpg: "));
    const detail = lines.find((line) => /no assurance|skipped|failed/.test(line)) ?? lines[0] ?? "";
    const kind = /no assurance/.test(run.stderr)
      ? "untrusted"
      : /No public key|No name/.test(run.stderr)
        ? "missing"
        : "unusable";
    unusable.push({ id, kind, detail });
  }
  return unusable;
}

/** The state of the store's git repository, as far as it matters to a shared store. */
export interface GitState {
  /** A merge, rebase or cherry-pick stopped half-way (by a conflict, usually). */
  readonly operation: "merge" | "rebase" | "cherry-pick" | undefined;
  /** Paths (relative to the store) with conflicts in git's index. */
  readonly unmerged: readonly string[];
  /** Paths with changes not committed (staged or not), untracked files aside. */
  readonly uncommitted: readonly string[];
  /** The upstream branch ("origin/main") and how far HEAD is from it as last fetched. */
  readonly upstream:
    { readonly name: string; readonly ahead: number; readonly behind: number } | undefined;
}

/**
 * Whether the store is a git repository of its own, as pass decides whether to commit: a
 * `.git` at its top. Reads the file system only, so `get` pays nothing when it is not.
 */
export function isGitStore(storeDir: string): boolean {
  return existsSync(path.join(storeDir, ".git"));
}

/**
 * `git -C storeDir ARGS`, by `deadline`. Reading commands take no optional locks (so a
 * `status` never races a commit for index.lock), and git never asks on a terminal.
 */
export function runGit(
  storeDir: string,
  args: readonly string[],
  env: Env,
  deadline: Deadline,
): Promise<ToolRun> {
  return runTool("git", ["-C", storeDir, ...args], {
    env: { ...env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" },
    deadline,
  });
}

/**
 * The repository's state: `git status --porcelain=v2 --branch` (unmerged and changed
 * paths, the upstream and the counts against it as last fetched) and the marker files of
 * an operation stopped half-way. `undefined` when git did not answer by the deadline.
 */
export async function readGitState(
  storeDir: string,
  env: Env,
  deadline: Deadline,
): Promise<GitState | undefined> {
  const status = await runGit(
    storeDir,
    ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=no"],
    env,
    deadline,
  );
  if (status.timedOut || status.code !== 0) return undefined;
  const unmerged: string[] = [];
  const uncommitted: string[] = [];
  let upstreamName: string | undefined;
  let ahead = 0;
  let behind = 0;
  const records = status.stdout.split("\0");
  for (let i = 0; i < records.length; i++) {
    const record = records[i] ?? "";
    if (record.startsWith("# branch.upstream ")) upstreamName = record.slice(18);
    const ab = /^# branch\.ab \+(\d+) -(\d+)$/.exec(record);
    if (ab !== null) {
      ahead = Number(ab[1]);
      behind = Number(ab[2]);
    }
    // "u XY sub m1 m2 m3 mW h1 h2 h3 path": 10 fields before the path.
    if (record.startsWith("u ")) unmerged.push(record.split(" ").slice(10).join(" "));
    // "1 XY sub mH mI mW hH hI path" (8 before); "2 ... Xscore path" then the old path.
    if (record.startsWith("1 ")) uncommitted.push(record.split(" ").slice(8).join(" "));
    if (record.startsWith("2 ")) {
      uncommitted.push(record.split(" ").slice(9).join(" "));
      i++;
    }
  }
  const markers = await runGit(
    storeDir,
    [
      "rev-parse",
      "--git-path",
      "MERGE_HEAD",
      "--git-path",
      "rebase-merge",
      "--git-path",
      "rebase-apply",
      "--git-path",
      "CHERRY_PICK_HEAD",
    ],
    env,
    deadline,
  );
  if (markers.timedOut || markers.code !== 0) return undefined;
  const [merge, rebaseMerge, rebaseApply, cherryPick] = markers.stdout
    .split("\n")
    .map((line) => path.resolve(storeDir, line));
  const present = (file: string | undefined) => file !== undefined && existsSync(file);
  const operation =
    present(rebaseMerge) || present(rebaseApply)
      ? "rebase"
      : present(merge)
        ? "merge"
        : present(cherryPick)
          ? "cherry-pick"
          : undefined;
  return {
    operation,
    unmerged,
    uncommitted,
    upstream: upstreamName === undefined ? undefined : { name: upstreamName, ahead, behind },
  };
}

/** The commit HEAD names, or undefined (no commit yet, or git did not answer). */
export async function headCommit(
  storeDir: string,
  env: Env,
  deadline: Deadline,
): Promise<string | undefined> {
  const run = await runGit(storeDir, ["rev-parse", "-q", "--verify", "HEAD"], env, deadline);
  return run.code === 0 ? run.stdout.trim() : undefined;
}

/** Whether `file` (relative to the store) differs from HEAD or the index: not committed. */
export async function changedSinceHead(
  storeDir: string,
  file: string,
  env: Env,
  deadline: Deadline,
): Promise<boolean | undefined> {
  const run = await runGit(storeDir, ["status", "--porcelain", "-z", "--", file], env, deadline);
  if (run.timedOut || run.code !== 0) return undefined;
  return run.stdout !== "";
}

/**
 * The remotes the store's git repository pushes to, by name (a URL may hold credentials),
 * or none: whom a deletion reaches once pushed.
 */
export async function storeRemotes(
  storeDir: string,
  env: Env,
  deadline: Deadline,
): Promise<string[]> {
  if (!isGitStore(storeDir)) return [];
  const run = await runGit(storeDir, ["remote"], env, deadline);
  if (run.code !== 0) return [];
  return run.stdout.split("\n").filter((line) => line !== "");
}
