// A pass store shared by a team through git (issue 46): three people, their own HOMEs and
// keys, a bare repository as the remote, and the built helper. Alice and Bob are recipients
// of terraform-credentials/team, Carol is not.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import {
  startPassTeam,
  TEAM_FOLDER,
  TEAM_SERVICE,
  type Member,
  type PassTeam,
} from "../support/pass-team.ts";

const ONLY_ON_LINUX = linuxOnly("a pass store shared through git");
const HOST = "registry.example.com";
const ENTRY = `${TEAM_FOLDER}/${HOST}.gpg`;
const token = (text: string) => `{"token":"${text}"}`;

/** The helper as each member runs it, on the team's folder. */
function helper(member: Member, args: readonly string[], stdin?: string): Promise<HelperResult> {
  return runHelper(["--backend", "pass", "--service", TEAM_SERVICE, ...args], {
    env: member.env,
    timeoutMs: 120_000,
    ...(stdin === undefined ? {} : { stdin }),
  });
}

function describeRun(result: HelperResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

function assertOk(result: HelperResult): void {
  assert.equal(result.code, 0, describeRun(result));
}

/** One line on stderr, a non-zero exit, nothing on stdout. */
function assertRefused(result: HelperResult, pattern: RegExp): void {
  assert.notEqual(result.code, 0, describeRun(result));
  assert.equal(result.stdout, "", describeRun(result));
  assert.equal(result.stderr.trimEnd().split("\n").length, 1, describeRun(result));
  assert.match(result.stderr, pattern);
}

function git(member: Member, args: readonly string[]): { code: number | null; stdout: string } {
  const run = spawnSync("git", ["-C", member.storeDir, ...args], {
    env: member.env,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: run.status, stdout: run.stdout };
}

/** As a team member would without sync: plain git, which must succeed. */
function push(member: Member): void {
  assert.equal(git(member, ["push", "--quiet"]).code, 0, `${member.name}: git push`);
}

function pull(member: Member): void {
  assert.equal(git(member, ["pull", "--ff-only", "--quiet"]).code, 0, `${member.name}: git pull`);
}

const head = (member: Member) => git(member, ["rev-parse", "HEAD"]).stdout.trim();

async function team(t: TestContext): Promise<PassTeam> {
  const started = await startPassTeam();
  t.after(() => started.close());
  return started;
}

/** A git hook in `member`'s store. */
function hook(member: Member, name: string, script: string): void {
  const file = path.join(member.storeDir, ".git", "hooks", name);
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
}

describe("a pass store shared by a team", { skip: ONLY_ON_LINUX, timeout: 600_000 }, () => {
  test("finding 4: Carol, no recipient, cannot store or forget a shared entry; nothing is written", async (t) => {
    const { alice, carol } = await team(t);
    const before = head(carol);
    const stored = await helper(carol, ["store", HOST], token("carol"));
    assertRefused(
      stored,
      /^nothing was stored: .*you are no recipient; run "gpg --quick-lsign-key [0-9A-F]{40} && pass init -p terraform-credentials\/team /,
    );
    assert.doesNotMatch(stored.stderr, /export-secret-keys/);
    assert.equal(existsSync(path.join(carol.storeDir, ENTRY)), false);
    assert.equal(head(carol), before);
    // Nor does she delete what the team stored.
    assertOk(await helper(alice, ["store", HOST], token("alice")));
    push(alice);
    pull(carol);
    assertRefused(
      await helper(carol, ["forget", HOST]),
      /^nothing was deleted: .*you are no recipient/,
    );
    assert.equal(existsSync(path.join(carol.storeDir, ENTRY)), true);
    // A forget of what is not there changes nothing for anyone: exit 0, as ever.
    assertOk(await helper(carol, ["forget", "other.example.com"]));
  });

  test("findings 1, 2, 3: doctor reads the --service folder's recipients, gpg's real trust, and sends Carol to a recipient", async (t) => {
    const { alice, bob, carol } = await team(t);
    // Carol: the top .gpg-id is Alice's key, whose public half she has; the folder's names
    // Alice and Bob. She is no recipient, and is never told to copy a secret key.
    const carolDoctor = await helper(carol, ["doctor", "--offline"]);
    assert.match(
      carolDoctor.stdout,
      /FAIL {2}store --backend pass \(service "team"\): the entries of terraform-credentials\/team .* you are no recipient/,
    );
    assert.match(carolDoctor.stdout, /pass init -p terraform-credentials\/team /);
    assert.doesNotMatch(carolDoctor.stdout, /export-secret-keys/);
    // Alice adds Carol; Bob has her public key, but nobody told his gpg to trust it.
    await alice.run("gpg", ["--batch", "--yes", "--quick-lsign-key", carol.fingerprint]);
    await alice.run("pass", [
      "init",
      "-p",
      TEAM_FOLDER,
      alice.fingerprint,
      bob.fingerprint,
      carol.fingerprint,
    ]);
    push(alice);
    pull(bob);
    const bobDoctor = await helper(bob, ["doctor", "--offline"]);
    assert.match(
      bobDoctor.stdout,
      new RegExp(
        `FAIL {2}store --backend pass \\(service "team"\\): .*will not encrypt to ${carol.fingerprint}`,
      ),
    );
    assert.match(
      bobDoctor.stdout,
      new RegExp(`fix: run "gpg --quick-lsign-key ${carol.fingerprint}"`),
    );
    // What doctor warned of: pass's gpg refuses the key, so Bob's store fails.
    assert.notEqual((await helper(bob, ["store", HOST], token("bob"))).code, 0);
  });

  test("finding 2: doctor reads the folders of the store's other services (profiles) too, and warns of one this user cannot read", async (t) => {
    const { alice, bob } = await team(t);
    await alice.run("pass", ["init", "-p", "terraform-credentials/ops", alice.fingerprint]);
    push(alice);
    pull(bob);
    const doctor = await helper(bob, ["doctor", "--offline"]);
    assert.match(
      doctor.stdout,
      /^warn {2}store --backend pass \(service "team"\): another service's folder: the entries of terraform-credentials\/ops .* you are no recipient\n +fix: run "gpg --quick-lsign-key [0-9A-F]{40} && pass init -p terraform-credentials\/ops /m,
    );
    // Alice, a recipient of both, hears of both.
    const aliceDoctor = await helper(alice, ["doctor", "--offline"]);
    assert.match(aliceDoctor.stdout, /terraform-credentials\/ops's are encrypted to [0-9A-F]{40}/);
  });

  test("finding 5: after a pull that leaves the entry in conflict, get, store and doctor refuse; sync names the entry and leaves the store as it was", async (t) => {
    const { alice, bob } = await team(t);
    assertOk(await helper(alice, ["store", HOST], token("alice-1")));
    push(alice);
    pull(bob);
    // Both rotate the token; Alice pushes first.
    assertOk(await helper(alice, ["store", HOST], token("alice-2")));
    push(alice);
    assertOk(await helper(bob, ["store", HOST], token("bob-2")));
    const bobHead = head(bob);
    // Bob pulls as git users do: a merge, stopped by the conflict.
    assert.notEqual(git(bob, ["pull", "--no-rebase", "--quiet"]).code, 0);
    assertRefused(await helper(bob, ["get", HOST]), /is in conflict/);
    const doctor = await helper(bob, ["doctor", "--offline"]);
    assert.match(
      doctor.stdout,
      /FAIL {2}store --backend pass .*entries in conflict \(terraform-credentials\/team\/registry\.example\.com\.gpg\)/,
    );
    assert.match(doctor.stdout, /fix: run "git -C \S+ merge --abort"/);
    assertRefused(
      await helper(bob, ["store", HOST], token("bob-3")),
      /^nothing was stored: .*in conflict/,
    );
    assertRefused(await helper(bob, ["sync"]), /^nothing was synced: .*in conflict/);
    // Undone, sync rebases, meets the conflict, undoes it and names the entry.
    assert.equal(git(bob, ["merge", "--abort"]).code, 0);
    const synced = await helper(bob, ["sync"]);
    assertRefused(
      synced,
      new RegExp(
        `^nothing was synced: ${TEAM_FOLDER}/${HOST.replace(/\./g, "\\.")} changed both here and on origin/main .*reset --keep @\\{upstream\\}`,
      ),
    );
    assert.equal(head(bob), bobHead);
    assert.equal(git(bob, ["status", "--porcelain"]).stdout, "");
    assert.equal((await helper(bob, ["get", HOST])).stdout, `${token("bob-2")}\n`);
  });

  test("finding 5: a store whose git commit fails is a failure, although pass exits 0", async (t) => {
    const { alice } = await team(t);
    hook(alice, "pre-commit", "echo 'refused by the team policy' >&2; exit 1");
    const before = head(alice);
    assertRefused(
      await helper(alice, ["store", HOST], token("alice")),
      /but git did not commit it, so no one else gets the change/,
    );
    assert.equal(head(alice), before);
  });

  test("finding 6: a store that outlives --timeout after its commit says the commit was made and what was still running, not gpg", async (t) => {
    const { alice } = await team(t);
    const pidFile = path.join(alice.home, "hook.pid");
    // A post-commit hook that pushes to a remote that does not answer.
    hook(alice, "post-commit", `echo $$ > '${pidFile}'\nexec sleep 120`);
    const before = head(alice);
    let stored;
    try {
      stored = await helper(alice, ["--timeout", "15", "store", HOST], token("alice"));
    } finally {
      // The hook's sleep: ending what the helper started is run-command.ts's part.
      if (existsSync(pidFile)) spawnSync("kill", [readFileSync(pidFile, "utf8").trim()]);
    }
    assertRefused(
      stored,
      /was stored and committed in .*, but "pass insert .*" did not finish within 15 s: it still ran .*\(what the commit started, a git hook/,
    );
    assert.doesNotMatch(stored.stderr, /gpg/);
    assert.notEqual(head(alice), before);
  });

  test("finding 7: uninstall says --forget empties the entries for everyone, and prints one pass rm per entry that keeps .gpg-id", async (t) => {
    const { alice } = await team(t);
    assertOk(await helper(alice, ["store", HOST], token("alice")));
    const forget = await helper(alice, ["uninstall", "--forget", "--dry-run"]);
    assertOk(forget);
    assert.match(
      forget.stdout,
      /is shared through its git remote origin: the deletions would be commits, and the next push deletes these tokens for everyone/,
    );
    const keep = await helper(alice, ["uninstall", "--dry-run"]);
    assertOk(keep);
    const command = /to delete them, run: (.*)$/m.exec(keep.stdout)?.[1];
    assert.equal(command, `PASSWORD_STORE_DIR=${alice.storeDir} pass rm -f ${TEAM_FOLDER}/${HOST}`);
    const ran = spawnSync("sh", ["-c", command], {
      env: alice.env,
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(ran.status, 0, ran.stderr);
    assert.equal(existsSync(path.join(alice.storeDir, ENTRY)), false);
    assert.equal(existsSync(path.join(alice.storeDir, TEAM_FOLDER, ".gpg-id")), true);
  });

  test("finding 8: the lock is not in git's view while it is held", async (t) => {
    const { alice } = await team(t);
    const seen = path.join(alice.home, "status-during-store");
    // The commit runs while the store's lock is held: what git status says then.
    hook(alice, "pre-commit", `git status --porcelain --untracked-files=all > '${seen}'`);
    assertOk(await helper(alice, ["store", HOST], token("alice")));
    const status = readFileSync(seen, "utf8");
    assert.doesNotMatch(status, /lock/, status);
    assert.match(status, /registry\.example\.com\.gpg/, status);
  });

  test("sync: for a store shared through git only; other stores are refused in one line", async (t) => {
    const { alice } = await team(t);
    assertRefused(
      await runHelper(["--backend", "keychain", "sync"], { env: alice.env }),
      /keeps its entries on this machine only: there is nothing to sync \(sync is for a store shared through git: --backend pass\)/,
    );
    const synced = await helper(alice, ["sync"]);
    assertOk(synced);
    assert.match(
      synced.stdout,
      /^synced \S+ with origin\/main: nothing new on origin\/main, nothing to push\n$/,
    );
  });
});
