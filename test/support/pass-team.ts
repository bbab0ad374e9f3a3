import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startPassSession, type PassSession } from "./pass-session.ts";

const execFileAsync = promisify(execFile);

/** The folder the team's entries live in: `--service team`. */
export const TEAM_SERVICE = "team";
export const TEAM_FOLDER = `terraform-credentials/${TEAM_SERVICE}`;

/** One member: their own HOME, GNUPGHOME and key, and a clone of the team's store. */
export interface Member extends PassSession {
  readonly name: string;
  /** Runs `command args` with this member's environment; rejects when it exits non-zero. */
  run(command: string, args: readonly string[], input?: string): Promise<string>;
}

/** Three people and a bare repository as their remote. */
export interface PassTeam {
  /** A recipient, who set the store up. */
  readonly alice: Member;
  /** A recipient, who cloned it. */
  readonly bob: Member;
  /** No recipient (yet): cloned it, her key known to Alice and Bob but not in .gpg-id. */
  readonly carol: Member;
  /** The bare repository every store pushes to. */
  readonly remote: string;
  close(): Promise<void>;
}

/**
 * Sets up a team's store as docs/usage.md says: each member makes a key (ed25519, no
 * passphrase, quick), the recipients exchange public keys and sign each other's locally;
 * Alice runs `pass init -p terraform-credentials/team ALICE BOB`, pushes to a bare
 * repository, and Bob and Carol clone it. Carol's public key is imported (not signed) by
 * Alice and Bob, as when she asked to join.
 */
export async function startPassTeam(): Promise<PassTeam> {
  const sandbox = mkdtempSync(path.join(os.tmpdir(), "tfck-team-"));
  const remote = path.join(sandbox, "remote.git");
  const sessions: PassSession[] = [];
  const close = async () => {
    await Promise.all(sessions.map((session) => session.close()));
    rmSync(sandbox, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) sessions.push(await startPassSession({ git: true }));
    const [alice, bob, carol] = (["alice", "bob", "carol"] as const).map((name, i) =>
      member(name, sessions[i] as PassSession),
    ) as [Member, Member, Member];
    const exportKey = (from: Member) => from.run("gpg", ["--export", "--armor", from.fingerprint]);
    const importKey = async (to: Member, key: string) =>
      to.run("gpg", ["--batch", "--import"], key);
    const [aliceKey, bobKey, carolKey] = await Promise.all([alice, bob, carol].map(exportKey));
    await importKey(alice, bobKey ?? "");
    await importKey(alice, carolKey ?? "");
    await importKey(bob, aliceKey ?? "");
    await importKey(bob, carolKey ?? "");
    await importKey(carol, aliceKey ?? "");
    await importKey(carol, bobKey ?? "");
    await alice.run("gpg", ["--batch", "--yes", "--quick-lsign-key", bob.fingerprint]);
    await bob.run("gpg", ["--batch", "--yes", "--quick-lsign-key", alice.fingerprint]);

    await execFileAsync("git", ["init", "--quiet", "--bare", "--initial-branch=main", remote]);
    await alice.run("pass", ["init", "-p", TEAM_FOLDER, alice.fingerprint, bob.fingerprint]);
    await alice.run("git", ["-C", alice.storeDir, "remote", "add", "origin", remote]);
    await alice.run("git", ["-C", alice.storeDir, "push", "--quiet", "-u", "origin", "main"]);
    for (const clone of [bob, carol]) {
      rmSync(clone.storeDir, { recursive: true, force: true });
      await clone.run("git", ["clone", "--quiet", remote, clone.storeDir]);
    }
    return { alice, bob, carol, remote, close };
  } catch (error) {
    await close();
    throw error;
  }
}

function member(name: string, session: PassSession): Member {
  return {
    ...session,
    name,
    async run(command, args, input) {
      const child = execFileAsync(command, [...args], {
        env: session.env,
        timeout: 60_000,
      });
      if (input !== undefined) child.child.stdin?.end(input);
      else child.child.stdin?.end();
      try {
        return (await child).stdout;
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        throw new Error(`${name}: ${command} ${args.join(" ")} failed: ${detail}`, {
          cause: error,
        });
      }
    },
  };
}
