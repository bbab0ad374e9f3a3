import { CliError } from "../../errors.ts";
import { oneLine } from "../../system/quote.ts";
import type { StoreContext } from "../store-description.ts";
import { ENTRY_SUFFIX } from "./entry-names.ts";
import { passStoreDir } from "./store-dir.ts";
import { withStoreLock } from "./store-lock.ts";
import { conflictFix, conflictReason } from "./team-guards.ts";
import { isGitStore, readGitState, runGit } from "./team-state.ts";
import type { ToolRun } from "./tool-run.ts";

/**
 * `sync` for the pass store: fetch the upstream branch, fast-forward to it or rebase this
 * store's commits onto it, and push; through git itself (pass 1.7.4's `pass git` exits 0
 * whatever git did), each step by its exit code, all by the deadline, under the store's
 * lock so that no `store` commits meanwhile.
 *
 * The policy for conflicts (two people changed one entry): the rebase is aborted, so the
 * store is as it was before sync, and the error names the entries and what to do. An
 * entry is ciphertext: git cannot merge two of them, and neither side is more right than
 * the other without a person.
 */
export async function syncPassStore({
  io,
  deadline,
}: Omit<StoreContext, "beforeSecret">): Promise<string> {
  const storeDir = passStoreDir(io.env, io.homedir);
  const env = io.env;
  if (!isGitStore(storeDir)) {
    throw new CliError(
      `the password store in ${storeDir} is not a git repository: there is nothing to sync with; pass git init and git remote add make it one`,
    );
  }
  const git = async (args: readonly string[]): Promise<ToolRun> => {
    const run = await runGit(storeDir, args, env, deadline);
    if (run.timedOut) {
      throw new CliError(
        `"git ${args.join(" ")}" in ${storeDir} did not finish within ${deadline.seconds} s (a remote that does not answer?); nothing more was done`,
      );
    }
    return run;
  };
  const failed = (args: readonly string[], run: ToolRun, after: string) =>
    new CliError(
      `"git ${args.join(" ")}" in ${storeDir} failed (code ${run.code ?? "?"}: ${gitLine(run.stderr)})${after}`,
    );

  return withStoreLock(storeDir, deadline, io.processes, async () => {
    const state = await readGitState(storeDir, env, deadline);
    if (state === undefined) throw new CliError(`git could not read the state of ${storeDir}`);
    const conflict = conflictReason(state);
    if (conflict !== undefined) {
      throw new CliError(
        `nothing was synced: the password store in ${storeDir}: ${conflict}`,
        undefined,
        {
          fix: conflictFix(state, storeDir),
        },
      );
    }
    if (state.uncommitted.length > 0) {
      throw new CliError(
        `nothing was synced: the password store in ${storeDir} has changes not committed (${state.uncommitted.join(", ")}); commit them (git -C ${storeDir} commit -a) or undo them first`,
      );
    }
    if (state.upstream === undefined) {
      throw new CliError(
        `nothing was synced: the password store's branch in ${storeDir} has no upstream; set one with git -C ${storeDir} push -u REMOTE BRANCH`,
      );
    }
    const upstream = state.upstream.name;
    const fetchArgs = ["fetch", "--quiet"];
    const fetched = await git(fetchArgs);
    if (fetched.code !== 0) throw failed(fetchArgs, fetched, "; nothing was changed");
    const counts = await git(["rev-list", "--left-right", "--count", "HEAD...@{upstream}"]);
    const [ahead = 0, behind = 0] = counts.stdout.trim().split(/\s+/).map(Number);
    let done: string;
    if (behind === 0) {
      done = `nothing new on ${upstream}`;
    } else if (ahead === 0) {
      const args = ["merge", "--ff-only", "--quiet", "@{upstream}"];
      const merged = await git(args);
      if (merged.code !== 0) throw failed(args, merged, "; nothing was changed");
      done = `fast-forwarded ${behind} commit${behind === 1 ? "" : "s"} from ${upstream}`;
    } else {
      const args = ["rebase", "--quiet", "@{upstream}"];
      const rebased = await git(args);
      if (rebased.code !== 0) {
        const unmerged = (await git(["diff", "--name-only", "--diff-filter=U", "-z"])).stdout
          .split("\0")
          .filter((file) => file !== "");
        const aborted = await git(["rebase", "--abort"]);
        const entries = unmerged.map((file) => file.replace(new RegExp(`\\${ENTRY_SUFFIX}$`), ""));
        if (aborted.code !== 0)
          throw failed(["rebase", "--abort"], aborted, "; the rebase is still in progress");
        throw new CliError(
          entries.length === 0
            ? `nothing was synced: rebasing onto ${upstream} failed (${gitLine(rebased.stderr)}) and was undone; the store is as it was`
            : `nothing was synced: ${entries.join(", ")} changed both here and on ${upstream} (a token rotated on both sides); the rebase was undone and the store is as it was`,
          undefined,
          entries.length === 0
            ? {}
            : { fix: { situation: "pass-sync-conflict", values: { STOREDIR: storeDir } } },
        );
      }
      done = `rebased ${ahead} local commit${ahead === 1 ? "" : "s"} onto ${behind} from ${upstream}`;
    }
    if (ahead === 0) return `synced ${storeDir} with ${upstream}: ${done}, nothing to push`;
    const pushArgs = ["push", "--quiet"];
    const pushed = await git(pushArgs);
    if (pushed.code !== 0) throw failed(pushArgs, pushed, `; ${done}, nothing was pushed`);
    return `synced ${storeDir} with ${upstream}: ${done}, pushed ${ahead} commit${ahead === 1 ? "" : "s"}`;
  });
}

/** git's line that says what failed: its fatal or error line, else its last. */
function gitLine(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return oneLine(
    lines.find((line) => /^(fatal|error):/.test(line)) ?? lines.at(-1) ?? "no message",
    200,
  );
}
