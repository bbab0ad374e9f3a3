// A team's day with one shared pass store (issue 46): Alice and Bob are recipients of
// terraform-credentials/team, Carol joins and leaves. Each has their own HOME, GPG key and
// clone of a bare repository, the helper installed with `--backend pass --service team`, and
// the real terraform, whose `init` fetches a module and a provider with the team's token.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassTeam, TEAM_FOLDER, TEAM_SERVICE, type Member } from "../support/pass-team.ts";
import { newToken, startFixtureServer } from "./support/fixture-server.ts";
import {
  assertTokenSentEverywhere,
  describeRun,
  filesContaining,
  startHarness,
  type Harness,
} from "./support/helper-harness.ts";
import { findTerraform, skipWithoutTerraform } from "./support/terraform.ts";
import type { TerraformResult } from "./support/terraform.ts";

const terraform = await findTerraform();
/** Three GPG keys, three installs (~110 MB each) and some twenty terraform runs. */
const TEST_TIMEOUT_MS = 900_000;

function ok(result: TerraformResult): TerraformResult {
  assert.equal(result.exitCode, 0, describeRun(result));
  return result;
}

function failed(result: TerraformResult, pattern?: RegExp): TerraformResult {
  assert.notEqual(result.exitCode, 0, describeRun(result));
  if (pattern !== undefined) assert.match(result.stderr, pattern, describeRun(result));
  return result;
}

/** The quoted command after `run` in a fix the helper printed. */
function printedCommand(text: string, pattern: RegExp): string {
  const command = [...text.matchAll(/run "([^"]+)"/g)]
    .map((match) => match[1] ?? "")
    .find((words) => pattern.test(words));
  assert.ok(command !== undefined, `no printed command matching ${String(pattern)} in: ${text}`);
  return command;
}

/** Runs a printed command through sh in `harness`'s environment, as its person would. */
function shell(harness: Harness, command: string): void {
  const ran = spawnSync("sh", ["-c", command], {
    env: harness.env(),
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(ran.status, 0, `"${command}" failed: ${ran.stdout}${ran.stderr}`);
}

test(
  "a team's day through one pass store: join, store, rotate, conflict, leave",
  { timeout: TEST_TIMEOUT_MS, skip: linuxOnly("a pass store shared through git") },
  async (t) => {
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    let token = newToken();
    const server = await startFixtureServer({ token });
    t.after(() => server.close());
    const team = await startPassTeam();
    t.after(() => team.close());
    const { host } = server;
    const entry = join(TEAM_FOLDER, `${host.replace(/:/g, "%3A")}.gpg`);
    // Each member's harness: the shared fixture, their own session, the helper installed.
    const member = (who: Member) =>
      startHarness(t, {
        terraform,
        token,
        server,
        startSession: () =>
          Promise.resolve({ env: who.env, home: who.home, close: () => Promise.resolve() }),
        installArgs: ["--backend", "pass", "--service", TEAM_SERVICE],
      });
    const alice = await member(team.alice);
    const bob = await member(team.bob);
    const carol = await member(team.carol);
    const sync = (harness: Harness) => harness.helper(["sync"]);
    const initSendsToken = async (harness: Harness) => {
      server.clearRequests();
      ok((await harness.init()).result);
      assertTokenSentEverywhere(harness);
    };

    // Store: Alice logs in; the entry is encrypted to Alice and Bob and committed, and sync
    // pushes it. Bob syncs, and his terraform init sends her token.
    ok(await alice.login(token));
    await initSendsToken(alice);
    assert.match(ok(await sync(alice)).stdout, /^synced .* pushed 1 commit\n$/);
    assert.match(ok(await sync(bob)).stdout, /fast-forwarded 1 commit/);
    await initSendsToken(bob);
    // No token in plain text anywhere: HOMEs, GPG homes, stores, the remote's history.
    for (const dir of [alice.sandbox, bob.sandbox, carol.sandbox, team.remote]) {
      assert.deepEqual(await filesContaining(dir, token), []);
    }

    // Join: Carol is no recipient. Her get fails (never "{}"), so init gets no token; her
    // login is refused and writes nothing; doctor sends her to a recipient.
    ok(await sync(carol));
    failed(await carol.helper(["get", host]));
    // Terraform says why only in its log: the helper's message needs TF_LOG (docs/usage.md).
    const quiet = failed((await carol.init()).result);
    assert.doesNotMatch(quiet.stdout + quiet.stderr, /could not decrypt|no recipient/);
    const logged = failed((await carol.init({ extra: { TF_LOG: "debug" } })).result);
    assert.match(logged.stderr, /gpg could not decrypt/);
    failed(await carol.login(token));
    assert.equal(existsSync(join(team.carol.storeDir, entry)), true); // Alice's, untouched
    assert.equal(existsSync(carol.credentialsFile), false);
    const carolDoctor = await carol.helper(["doctor", "--offline"]);
    assert.match(carolDoctor.stdout, /you are no recipient/);
    assert.doesNotMatch(carolDoctor.stdout, /export-secret-keys/);
    // Alice runs what Carol's doctor printed (she has Carol's public key), then Carol syncs.
    shell(alice, printedCommand(carolDoctor.stdout, /^gpg --quick-lsign-key .* pass init -p /));
    ok(await sync(carol));
    await initSendsToken(carol);
    // Bob's gpg does not trust Carol's key yet: doctor says so, and its printed lsign fixes it.
    ok(await sync(bob));
    const bobDoctor = await bob.helper(["doctor", "--offline"]);
    assert.match(bobDoctor.stdout, /FAIL {2}store --backend pass .*will not encrypt to/);
    shell(bob, printedCommand(bobDoctor.stdout, /^gpg --quick-lsign-key [0-9A-F]{40}$/));

    // Rotate: the registry now takes a new token; Bob logs in with it and syncs. Alice's old
    // one is refused until she syncs.
    token = newToken();
    server.setToken(token);
    ok(await bob.login(token));
    ok(await sync(bob));
    failed((await alice.init()).result);
    ok(await sync(alice));
    await initSendsToken(alice);

    // Conflict: Alice and Bob both rotate, each in their own store; Alice pushes first. Bob's sync undoes its rebase,
    // names the entry, and prints how to take the team's token; after it, his init works.
    token = newToken();
    server.setToken(token);
    ok(await alice.login(token));
    ok(await sync(alice));
    // (terraform login checks a token with its host: Bob pastes the same new one.)
    ok(await bob.login(token));
    const conflict = failed(await sync(bob), /changed both here and on origin\/main/);
    shell(bob, printedCommand(conflict.stderr, /reset --keep @\{upstream\}$/));
    await initSendsToken(bob);
    ok(await sync(bob));

    // Leave: Carol's key leaves the folder, and the token is rotated (her clone and git's
    // history keep the old ciphertext, which her key decrypts).
    shell(
      alice,
      `pass init -p ${TEAM_FOLDER} ${team.alice.fingerprint} ${team.bob.fingerprint} && pass git push`,
    );
    token = newToken();
    server.setToken(token);
    ok(await alice.login(token));
    ok(await sync(alice));
    ok(await sync(bob));
    await initSendsToken(bob);
    ok(await sync(carol));
    failed(await carol.helper(["get", host]));
    failed((await carol.init()).result);
    // Carol uninstalls: the printed commands delete per entry, keeping the team's .gpg-id;
    // Alice's --forget would delete for everyone, and says so.
    const carolLeaves = ok(await carol.helper(["uninstall"]));
    assert.match(carolLeaves.stdout, new RegExp(`pass rm -f ${TEAM_FOLDER}/`));
    assert.doesNotMatch(carolLeaves.stdout, /rm -r/);
    const aliceForget = ok(await alice.helper(["uninstall", "--forget", "--dry-run"]));
    assert.match(
      aliceForget.stdout,
      /shared through its git remote origin: .*deletes these tokens for everyone/,
    );
    for (const harness of [alice, bob, carol]) {
      assert.deepEqual(await filesContaining(harness.sandbox, token), []);
    }
  },
);
