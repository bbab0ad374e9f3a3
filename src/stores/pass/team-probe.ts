import type { Deadline } from "../../system/deadline.ts";
import type { ProbeResult } from "../store-description.ts";
import { readdirSync } from "node:fs";
import path from "node:path";
import { TOP_FOLDER } from "./entry-names.ts";
import { firstSecretKey } from "./gpg-probe.ts";
import { conflictFix, conflictReason, notRecipient } from "./team-guards.ts";
import {
  anyPublicKey,
  isGitStore,
  ownRecipients,
  passRecipients,
  readGitState,
  unusableRecipients,
  type Recipients,
} from "./team-state.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * What doctor says of a store that may be shared, beyond whether this user can decrypt it:
 * whether gpg will encrypt to every recipient of the folder in use (its real trust model,
 * as `pass insert` runs it), and the state of its git repository as last fetched (a merge or
 * rebase stopped half-way, entries in conflict, commits not pushed or not merged); the
 * folders of the store's other services (profiles) the same way, as warnings. A
 * problem found is the probe's result; otherwise what was seen, for the ok summary.
 */
export async function probeTeam(
  env: Env,
  storeDir: string,
  folder: string,
  recipients: Recipients,
  own: readonly string[],
  deadline: Deadline,
): Promise<{ problem: ProbeResult } | { seen: string }> {
  const from =
    recipients.folder === undefined
      ? "PASSWORD_STORE_KEY"
      : `${recipients.folder || "the store's top"}/.gpg-id`;
  const seen = [
    `${folder}'s entries are encrypted to ${recipients.ids.join(", ")} (${from}; yours: ${own.join(", ")})`,
  ];
  const unusable = await unusableRecipients(env, recipients.ids, deadline);
  if (unusable === "no answer") {
    return {
      problem: failed(`gpg-agent did not answer within ${deadline.seconds} s`, {
        situation: "gpg-agent-hung",
      }),
    };
  }
  const [first] = unusable;
  if (first !== undefined) {
    const list = unusable.map((key) => `${key.id} (${key.detail})`).join(", ");
    return {
      problem: failed(
        `${seen[0]}, but gpg, as pass runs it, will not encrypt to ${list}: the next store fails`,
        first.kind === "untrusted"
          ? { situation: "gpg-recipient-untrusted", values: { KEY: first.id } }
          : {
              situation: "gpg-recipient-missing",
              values: { KEY: first.id, FOLDER: recipients.folder || folder },
            },
      ),
    };
  }
  // The folders of the other services (profiles) in the store: a problem there is the
  // next profile's, so a warning.
  for (const other of otherFolders(storeDir, folder)) {
    const theirs = passRecipients(env, storeDir, other);
    if (theirs.ids.length === 0 || theirs.ids.join("\n") === recipients.ids.join("\n")) continue;
    const problem = await folderProblem(env, storeDir, other, theirs, deadline);
    if (problem !== undefined) return { problem };
    seen.push(`${other}'s are encrypted to ${theirs.ids.join(", ")}`);
  }
  if (!isGitStore(storeDir)) return { seen: seen.join("; ") };
  const state = await readGitState(storeDir, env, deadline);
  if (state === undefined) {
    return { problem: failed(`git did not answer about ${storeDir} within ${deadline.seconds} s`) };
  }
  const conflict = conflictReason(state);
  if (conflict !== undefined) {
    return {
      problem: failed(
        `the password store in ${storeDir}: ${conflict}`,
        conflictFix(state, storeDir),
      ),
    };
  }
  const { upstream } = state;
  if (upstream === undefined) {
    seen.push("its git repository has no upstream branch to share through");
  } else if (upstream.ahead > 0 || upstream.behind > 0) {
    return {
      problem: {
        status: "warn",
        summary: `${seen[0]}; its git repository is ${upstream.ahead} commit${upstream.ahead === 1 ? "" : "s"} ahead of ${upstream.name} and ${upstream.behind} behind, as last fetched`,
        fix: { situation: "pass-store-unsynced" },
        safeToOpen: false,
      },
    };
  } else {
    seen.push(`its git repository is in step with ${upstream.name} as last fetched`);
  }
  return { seen: seen.join("; ") };
}

function failed(summary: string, fix?: ProbeResult["fix"]): ProbeResult {
  return { status: "fail", summary, ...(fix === undefined ? {} : { fix }), safeToOpen: false };
}

/** The folders of the store's other services: `terraform-credentials/*` but `folder`. */
function otherFolders(storeDir: string, folder: string): string[] {
  try {
    return readdirSync(path.join(storeDir, TOP_FOLDER), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
      .map((entry) => `${TOP_FOLDER}/${entry.name}`)
      .filter((other) => other !== folder)
      .sort();
  } catch {
    return [];
  }
}

/** What is wrong with another service's folder, as a warning, or nothing. */
async function folderProblem(
  env: Env,
  storeDir: string,
  folder: string,
  recipients: Recipients,
  deadline: Deadline,
): Promise<ProbeResult | undefined> {
  const own = await ownRecipients(env, recipients.ids, deadline);
  const unusable = await unusableRecipients(env, recipients.ids, deadline);
  if (own === "no answer" || unusable === "no answer") {
    return failed(`gpg-agent did not answer within ${deadline.seconds} s`, {
      situation: "gpg-agent-hung",
    });
  }
  if (own.length === 0 && (await anyPublicKey(env, recipients.ids, deadline))) {
    const { reason, fix } = notRecipient(
      storeDir,
      folder,
      recipients,
      await firstSecretKey(env, deadline),
    );
    return {
      status: "warn",
      summary: `another service's folder: ${reason}`,
      fix,
      safeToOpen: false,
    };
  }
  const [first] = unusable;
  if (first === undefined) return undefined;
  const list = unusable.map((key) => `${key.id} (${key.detail})`).join(", ");
  return {
    status: "warn",
    summary: `another service's folder, ${folder}: gpg, as pass runs it, will not encrypt to ${list}`,
    fix:
      first.kind === "untrusted"
        ? { situation: "gpg-recipient-untrusted", values: { KEY: first.id } }
        : { situation: "gpg-recipient-missing", values: { KEY: first.id, FOLDER: folder } },
    safeToOpen: false,
  };
}
