import { accessSync, constants, existsSync } from "node:fs";
import path from "node:path";
import type { Deadline } from "../../system/deadline.ts";
import { firstSecretKey, gpgDecrypts, recipientOptions } from "./gpg-probe.ts";
import { serviceFolder } from "./entry-names.ts";
import { notRecipient } from "./team-guards.ts";
import { probeTeam } from "./team-probe.ts";
import { anyPublicKey, ownRecipients, passRecipients } from "./team-state.ts";
import { passStoreDir } from "./store-dir.ts";
import type { ProbeResult } from "../store-description.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Whether the pass store can work here, as a `get` from Terraform would find it: `pass` on
 * PATH, a store that `pass init` has set up, and a gpg key that decrypts without a person
 * (see `gpgDecrypts`). Never touches a stored entry, and never pops a pinentry. Its gpg runs
 * end by `deadline`.
 */
export async function probePass(
  service: string,
  env: Env,
  homedir: string,
  platform: NodeJS.Platform,
  deadline: Deadline,
): Promise<ProbeResult> {
  const onPath = (env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => dir !== "")
    .some((dir) => isExecutable(path.join(dir, platform === "win32" ? "pass.exe" : "pass")));
  if (!onPath) {
    return {
      status: "fail",
      summary: "pass is not installed (not on PATH)",
      fix: { situation: "pass-missing" },
      safeToOpen: false,
    };
  }
  let storeDir;
  try {
    storeDir = passStoreDir(env, homedir);
  } catch (error) {
    return {
      status: "fail",
      summary: (error as Error).message,
      fix: { situation: "pass-store-dir-relative" },
      safeToOpen: false,
    };
  }
  if (!existsSync(path.join(storeDir, ".gpg-id"))) {
    // A fix that runs as printed: the key this machine has, or one made for the purpose
    // (no passphrase, as a build machine needs; a person may prefer one gpg-agent caches).
    const key = await firstSecretKey(env, deadline);
    return {
      status: "fail",
      summary: `the password store in ${storeDir} is not initialised`,
      fix:
        key === undefined
          ? { situation: "gpg-key-missing" }
          : { situation: "pass-store-missing", values: { KEY: key } },
      safeToOpen: false,
    };
  }
  // The folder `--service` uses, whose .gpg-id may not be the top one: a team's.
  const folder = serviceFolder(service);
  const team = passRecipients(env, storeDir, folder);
  const recipients = team.ids;
  const own = await ownRecipients(env, recipients, deadline);
  if (own === "no answer") {
    return {
      status: "fail",
      summary: `gpg-agent did not answer within ${deadline.seconds} s (it is hung or stopped)`,
      fix: { situation: "gpg-agent-hung" },
      safeToOpen: false,
    };
  }
  // A team this user is no part of (their keys are known here); keys unknown altogether are
  // gpg's probe's to name.
  if (
    recipients.length > 0 &&
    own.length === 0 &&
    (await anyPublicKey(env, recipients, deadline))
  ) {
    const { reason, fix } = notRecipient(
      storeDir,
      folder,
      team,
      await firstSecretKey(env, deadline),
    );
    return { status: "fail", summary: reason, fix, safeToOpen: false };
  }
  const verdict = await gpgDecrypts(env, recipients, deadline);
  if (!verdict.ok) {
    // Only a passphrase can be dealt with here; a key that is not on this machine cannot.
    return {
      status: "fail",
      summary: `the password store in ${storeDir} is initialised, but ${verdict.reason}`,
      fix:
        verdict.kind === "no answer"
          ? { situation: "gpg-agent-hung" }
          : verdict.kind === "locked"
            ? { situation: "gpg-key-locked", values: { RECIPIENTS: recipientOptions(recipients) } }
            : { situation: "gpg-key-elsewhere" },
      safeToOpen: false,
    };
  }
  const shared = await probeTeam(env, storeDir, folder, team, own, deadline);
  if ("problem" in shared) return shared.problem;
  return {
    status: "ok",
    summary: `pass is installed, ${storeDir} is initialised, and its gpg key decrypts without a passphrase prompt; ${shared.seen}`,
    safeToOpen: true,
  };
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
