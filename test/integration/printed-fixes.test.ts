/**
 * Every fix the helper prints is a command that works where it is printed: each situation is
 * built for real (private D-Bus sessions and keyrings, a private HOME), the command is taken
 * from the helper's own output and run as printed by a shell, and then the helper works.
 * `PASSWORD` is the one placeholder a person fills in (src/fixes.ts says so).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, test, type TestContext } from "node:test";
import { requireBuiltHelper, runHelper, type HelperResult } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import {
  dbusSend,
  startKeyringSession,
  waitFor,
  nameHasOwner,
  KEYRING_PASSWORD,
  type KeyringSession,
} from "../support/keyring-session.ts";
import { startPassSession } from "../support/pass-session.ts";
import { startPassTeam, TEAM_SERVICE, type Member } from "../support/pass-team.ts";
import { assertOneLineFailure, assertSilentSuccess } from "../support/protocol-suite.ts";
import { PATIENCE_MS } from "../support/timing.ts";

const ONLY_ON_LINUX = linuxOnly("the printed fixes of the Secret Service");
const TOKEN = "printed-fix-token-0123456789";

/**
 * The command of the first fix in `text` that mentions `program`: the quoted text after
 * `run`, as the helper prints it (on main before issue 32, a quoted command in the advice).
 */
function printedCommand(text: string, program: string): string {
  const quoted = [...text.matchAll(/"([^"]*)"/g)].map((match) => match[1] ?? "");
  const command = quoted.find((words) => words.includes(program));
  assert.ok(command !== undefined, `no command with ${program} in: ${text}`);
  return command;
}

/** Runs `command` through sh, as a person pasting it would, with `PASSWORD` filled in. */
function runInShell(
  command: string,
  env: Record<string, string>,
  password: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command.replace(/\bPASSWORD\b/g, password)], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: PATIENCE_MS,
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** The process that owns org.freedesktop.secrets on the session's bus, if any. */
async function secretServicePid(session: KeyringSession): Promise<number | undefined> {
  const reply = await dbusSend(session.env, [
    "--dest=org.freedesktop.DBus",
    "/org/freedesktop/DBus",
    "org.freedesktop.DBus.GetConnectionUnixProcessID",
    "string:org.freedesktop.secrets",
  ]).catch(() => "");
  const pid = /uint32 (\d+)/.exec(reply)?.[1];
  return pid === undefined ? undefined : Number(pid);
}

/**
 * A keyring session whose gnome-keyring a printed command may replace: close() also ends the
 * daemon that command started (it left the shell as a daemon of its own).
 */
async function sessionFor(
  options: Parameters<typeof startKeyringSession>[0],
): Promise<KeyringSession> {
  const session = await startKeyringSession(options);
  return {
    ...session,
    async close() {
      const pid = await secretServicePid(session);
      await session.close();
      if (pid !== undefined) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // Gone with the bus.
        }
      }
    },
  };
}

const store = (session: KeyringSession, host: string, token = TOKEN) =>
  runHelper(["store", host], { env: session.env, stdin: `{"token":"${token}"}` });
const get = (session: KeyringSession, host: string) =>
  runHelper(["get", host], { env: session.env });

/** The fix in a failed store's message, run as printed; then store and get work. */
async function followFix(session: KeyringSession, failed: HelperResult): Promise<void> {
  assertOneLineFailure(failed);
  const command = printedCommand(failed.stderr, "gnome-keyring-daemon");
  const ran = await runInShell(command, session.env, KEYRING_PASSWORD);
  assert.equal(ran.code, 0, `"${command}" failed: ${ran.output}`);
  await waitFor(() => nameHasOwner(session.env, "org.freedesktop.secrets"), "a Secret Service");
  const stored = await store(session, "after-fix.example.com");
  assertSilentSuccess(stored);
  assert.equal(
    (await get(session, "after-fix.example.com")).stdout,
    `{"token":"${TOKEN}"}\n`,
    "the helper works after the printed fix",
  );
}

describe("the printed fixes for GNOME Keyring without a desktop", { skip: ONLY_ON_LINUX }, () => {
  test("no default collection: the printed command creates the login keyring", async (t) => {
    const session = await sessionFor({ loginKeyring: false });
    t.after(() => session.close());
    const failed = await store(session, "app.terraform.io");
    assert.match(failed.stderr, /has no default collection/);
    // doctor prints the same fix for the same state.
    const doctor = await runHelper(["doctor"], { env: session.env });
    assert.equal(
      printedCommand(doctor.stdout, "gnome-keyring-daemon"),
      printedCommand(failed.stderr, "gnome-keyring-daemon"),
    );
    await followFix(session, failed);
  });

  test("no default collection: with an empty PASSWORD the command creates no keyring, as it says", async (t) => {
    const session = await sessionFor({ loginKeyring: false });
    t.after(() => session.close());
    const failed = await store(session, "app.terraform.io");
    assert.match(failed.stderr, /an empty PASSWORD creates none/);
    const ran = await runInShell(
      printedCommand(failed.stderr, "gnome-keyring-daemon"),
      session.env,
      "",
    );
    assert.equal(ran.code, 0, ran.output);
    await waitFor(() => nameHasOwner(session.env, "org.freedesktop.secrets"), "a Secret Service");
    const again = await store(session, "app.terraform.io");
    assertOneLineFailure(again);
    assert.match(again.stderr, /has no default collection/);
  });

  test("a locked keyring with its daemon running: the printed command unlocks it, and nothing stored is lost", async (t) => {
    const session = await sessionFor({});
    t.after(() => session.close());
    assertSilentSuccess(await store(session, "kept.example.com", "kept-token"));
    await session.lockCollection();
    const failed = await store(session, "app.terraform.io");
    assert.match(failed.stderr, /the keyring "Login" is locked/);
    await followFix(session, failed);
    assert.equal((await get(session, "kept.example.com")).stdout, '{"token":"kept-token"}\n');
  });

  test("a locked keyring with no daemon running (the bus starts one, locked): the printed command unlocks it", async (t) => {
    const session = await sessionFor({});
    t.after(() => session.close());
    assertSilentSuccess(await store(session, "kept.example.com", "kept-token"));
    // As after a reboot on a server: the keyring file stays, no daemon runs, and the bus
    // starts gnome-keyring on the next call, which cannot unlock it.
    const pid = await secretServicePid(session);
    assert.ok(pid !== undefined);
    session.signalService("SIGTERM");
    await waitFor(
      async () => !(await nameHasOwner(session.env, "org.freedesktop.secrets")),
      "gnome-keyring to stop",
    );
    const failed = await store(session, "app.terraform.io");
    assert.match(failed.stderr, /the keyring "Login" is locked/);
    await followFix(session, failed);
    assert.equal((await get(session, "kept.example.com")).stdout, '{"token":"kept-token"}\n');
  });

  test("no session bus at all: the printed command switches the helper to pass, where a get and a store with no options then work", async (t) => {
    const pass = await startPassSession();
    t.after(() => pass.close());
    // A headless machine: pass set up, no D-Bus, the helper not installed yet.
    const failed = await runHelper(["store", "app.terraform.io"], {
      env: pass.env,
      stdin: `{"token":"${TOKEN}"}`,
    });
    assertOneLineFailure(failed);
    assert.match(failed.stderr, /^could not write to the keychain: no D-Bus session bus/);
    const command = printedCommand(failed.stderr, "install --force");
    assert.equal(command, `${requireBuiltHelper()} --backend pass install --force`);
    // doctor, in the same state, gives the switch once: the keychain's own fix is that switch.
    const doctor = (await runHelper(["doctor"], { env: pass.env })).stdout.split("\n");
    const keychainFix =
      doctor[doctor.findIndex((line) => line.includes("store --backend keychain")) + 1];
    assert.equal(keychainFix?.split("--backend pass install --force").length, 2, doctor.join("\n"));
    const ran = await runInShell(command, pass.env, "");
    assert.equal(ran.code, 0, `"${command}" failed: ${ran.output}`);
    // No user directory on PATH: the note's command, run once ~/.local/bin is on it, links
    // the helper there and keeps the block's store (a bare install would refuse, and its
    // --force put the keychain back).
    const again = printedCommand(ran.output, " install");
    const home = pass.env.HOME ?? "";
    const bin = path.join(home, ".local", "bin");
    mkdirSync(bin, { recursive: true });
    const onPath = { ...pass.env, PATH: `${bin}:${pass.env.PATH ?? ""}` };
    const linked = await runInShell(again, onPath, "");
    assert.equal(linked.code, 0, `"${again}" failed: ${linked.output}`);
    assert.ok(existsSync(path.join(bin, "terraform-credentials-keychain")), linked.output);
    assert.match(readFileSync(path.join(home, ".terraformrc"), "utf8"), /"--backend", "pass"/);
    // The same calls as before, with no options: the installed block names pass.
    assertSilentSuccess(
      await runHelper(["store", "app.terraform.io"], {
        env: pass.env,
        stdin: `{"token":"${TOKEN}"}`,
      }),
    );
    assert.equal(
      (await runHelper(["get", "app.terraform.io"], { env: pass.env })).stdout,
      `{"token":"${TOKEN}"}\n`,
    );
  });

  test("a wrong password given to gnome-keyring-daemon --unlock: the error says it may have been wrong, and the printed command with the right one unlocks it", async (t) => {
    const session = await sessionFor({});
    t.after(() => session.close());
    assertSilentSuccess(await store(session, "kept.example.com", "kept-token"));
    const before = await secretServicePid(session);
    const wrong = await runInShell(
      "echo -n WRONG | gnome-keyring-daemon --replace --unlock --components=secrets",
      session.env,
      "",
    );
    assert.equal(wrong.code, 0, wrong.output);
    await waitFor(async () => {
      const now = await secretServicePid(session);
      return now !== undefined && now !== before;
    }, "the replacing gnome-keyring to own org.freedesktop.secrets");
    const failed = await store(session, "app.terraform.io");
    assert.match(
      failed.stderr,
      /the keyring "Login" is locked.*although gnome-keyring was started with --unlock: the password it was given may have been wrong/,
    );
    await followFix(session, failed);
    assert.equal((await get(session, "kept.example.com")).stdout, '{"token":"kept-token"}\n');
  });

  test("no Secret Service on the bus: the printed command starts one with a login keyring", async (t) => {
    const session = await sessionFor({ secretService: false });
    t.after(() => session.close());
    const failed = await store(session, "app.terraform.io");
    assert.match(failed.stderr, /no Secret Service on the D-Bus session bus/);
    await followFix(session, failed);
  });
});

/** Every command of the `run "..."` fixes in `text`, in order. */
function runCommands(text: string): string[] {
  return [...text.matchAll(/run "(.*?)" \(/g)].map((match) => match[1] ?? "");
}

/** A keyring session with the helper installed into its HOME; `rc` is its ~/.terraformrc. */
async function installedSession(t: TestContext) {
  const session = await sessionFor({});
  t.after(() => session.close());
  const { env, home } = session;
  assert.equal((await runHelper(["install"], { env })).code, 0);
  return { session, env, home, rc: path.join(home, ".terraformrc") };
}

describe(
  "the printed fix for hosts shadowed by files and variables",
  { skip: ONLY_ON_LINUX },
  () => {
    test("credentials.tfrc.json, a credentials block and TF_TOKEN_*: the fix, run as printed in one shell, moves every token and ends the shadowing", async (t) => {
      const { session, env, home, rc } = await installedSession(t);
      const block = 'credentials "block.example.com" {\n  token = "block-token"\n}\n';
      appendFileSync(rc, `\n${block}`);
      const plaintext = path.join(home, ".terraform.d", "credentials.tfrc.json");
      writeFileSync(
        plaintext,
        JSON.stringify({ credentials: { "file.example.com": { token: "file-token" } } }),
        { mode: 0o600 },
      );
      // The variable's host was logged in to before; the variable wins over it.
      assertSilentSuccess(await store(session, "var.example.com", "var-token"));
      const shadowed = { ...env, TF_TOKEN_var_example_com: "var-token" };

      const doctor = await runHelper(["doctor"], { env: shadowed });
      const fix =
        /^ {6}fix: (.*)$/m.exec(
          doctor.stdout.slice(doctor.stdout.indexOf("do not use the helper")),
        )?.[1] ?? "";
      // Every command in the fix (quoted, as printed), run in order in the shell that has the
      // variable, then the helper.
      const commands = [...fix.matchAll(/"([^"]*)"/g)].map((match) => match[1] ?? "");
      const [helper] = commands[0]?.split(" ") ?? [];
      const ran = await runInShell(
        `${commands.join(" && ")} && ${helper} doctor`,
        shadowed,
        KEYRING_PASSWORD,
      );
      for (const [host, token] of [
        ["block.example.com", "block-token"],
        ["file.example.com", "file-token"],
        ["var.example.com", "var-token"],
      ] as const) {
        assert.equal(
          (await get(session, host)).stdout,
          `{"token":"${token}"}\n`,
          `${host}: ${fix}`,
        );
      }
      assert.match(
        ran.output,
        /no host is shadowed by TF_TOKEN_\* variables or plaintext credentials/,
      );
      // One command line: import first, which removes a token only once it is stored; the
      // variables last.
      assert.deepEqual(runCommands(fix), [
        `${helper} import --keep-stored && unset TF_TOKEN_var_example_com`,
      ]);
      assert.equal(
        readFileSync(rc, "utf8"),
        'credentials_helper "keychain" {\n  args = ["--backend", "keychain", "--service", "terraform-credentials"]\n}\n',
      );
      assert.equal(existsSync(plaintext), false);
    });

    test("a host in TF_TOKEN_* and in credentials.tfrc.json with another token than the store's: the fix names both, and run as printed makes the helper's token the one sent", async (t) => {
      const { session, env, home } = await installedSession(t);
      // Left in the file by an import, since the store holds a newer token from a login.
      const plaintext = path.join(home, ".terraform.d", "credentials.tfrc.json");
      writeFileSync(
        plaintext,
        JSON.stringify({ credentials: { "example.com": { token: "file-token" } } }),
        { mode: 0o600 },
      );
      assertSilentSuccess(await store(session, "example.com", "login-token"));
      const shadowed = { ...env, TF_TOKEN_example_com: "var-token" };

      const doctor = await runHelper(["doctor"], { env: shadowed });
      const shadow = doctor.stdout.slice(doctor.stdout.indexOf("do not use the helper"));
      // Every place that wins: the variable, and the file once the variable is gone.
      assert.match(
        shadow,
        /example\.com: the variable TF_TOKEN_example_com wins over the helper; without it, \S*credentials\.tfrc\.json\S* wins/,
      );
      const fix = /^ {6}fix: (.*)$/m.exec(shadow)?.[1] ?? "";
      const commands = runCommands(fix);
      assert.equal(commands.length, 1, `one command: ${fix}`);
      const [command = ""] = commands;
      const [helper] = command.split(" ");
      const ran = await runInShell(`${command} && ${helper} doctor`, shadowed, KEYRING_PASSWORD);
      assert.equal(ran.code, 0, ran.output);
      assert.match(
        ran.output,
        /no host is shadowed by TF_TOKEN_\* variables or plaintext credentials/,
      );
      // The helper's token, the one Terraform now asks for, is the login's.
      assert.equal((await get(session, "example.com")).stdout, '{"token":"login-token"}\n');
      assert.equal(existsSync(plaintext), false);
    });

    test("a block import cannot move: the text says what to do instead, and runs nothing", async (t) => {
      const { env, rc } = await installedSession(t);
      // credentials = {...}: Terraform reads it like a block, import does not take it apart.
      const block = 'credentials = {\n  "odd.example.com" = { token = "t" }\n}\n';
      appendFileSync(rc, block);
      const doctor = await runHelper(["doctor"], { env });
      const fix =
        /^ {6}fix: (.*)$/m.exec(
          doctor.stdout.slice(doctor.stdout.indexOf("do not use the helper")),
        )?.[1] ?? "";
      assert.match(fix, /^move it by hand: /);
      assert.deepEqual(runCommands(fix), [], "no command that would fail");
      const imported = await runHelper(["import"], { env });
      assert.equal(imported.code, 1);
      assert.match(imported.stdout, /failed: odd\.example\.com .*move it by hand/);
      assert.ok(readFileSync(rc, "utf8").endsWith(block), "the block is left alone");
    });
  },
);

describe("the printed fixes for pass and gpg", { skip: ONLY_ON_LINUX }, () => {
  const pass = (env: Record<string, string>, args: string[], stdin?: string) =>
    runHelper(["--backend", "pass", ...args], { env, ...(stdin === undefined ? {} : { stdin }) });

  /** doctor's first printed command for this store, run as printed; then pass works. */
  async function followDoctor(env: Record<string, string>): Promise<void> {
    const before = await pass(env, ["store", "app.terraform.io"], `{"token":"${TOKEN}"}`);
    assertOneLineFailure(before);
    const doctor = await pass(env, ["doctor"]);
    // The fix of pass's own line: the keychain's line may carry a fix of its own.
    const [command] = runCommands(
      doctor.stdout.slice(doctor.stdout.indexOf("store --backend pass")),
    );
    assert.ok(command !== undefined, doctor.stdout);
    const ran = await runInShell(command, env, "");
    assert.equal(ran.code, 0, `"${command}" failed: ${ran.output}`);
    assertSilentSuccess(await pass(env, ["store", "app.terraform.io"], `{"token":"${TOKEN}"}`));
    assert.equal((await pass(env, ["get", "app.terraform.io"])).stdout, `{"token":"${TOKEN}"}\n`);
  }

  test("no password store, a gpg key: the printed pass init creates it", async (t) => {
    const session = await startPassSession();
    t.after(() => session.close());
    rmSync(session.storeDir, { recursive: true, force: true });
    await followDoctor(session.env);
  });

  test("no password store and no gpg key: the printed command makes both", async (t) => {
    const session = await startPassSession();
    t.after(() => session.close());
    const gnupgHome = path.join(session.home, "empty-gnupg");
    mkdirSync(gnupgHome, { mode: 0o700 });
    const env = {
      ...session.env,
      USER: "tester",
      GNUPGHOME: gnupgHome,
      PASSWORD_STORE_DIR: path.join(session.home, "new-store"),
    };
    t.after(() => runInShell("gpgconf --kill all", env, "").then(() => undefined));
    await followDoctor(env);
  });

  test("a key that needs a passphrase: the printed command has gpg-agent ask for it once", async (t) => {
    const session = await startPassSession({ passphrase: "key-passphrase" });
    t.after(() => session.close());
    // The person at the terminal, as the pinentry gpg-agent starts: it types the passphrase.
    const pinentry = path.join(session.home, "pinentry-person");
    writeFileSync(
      pinentry,
      '#!/bin/sh\necho "OK ready"\nwhile read -r command rest; do\n  case "$command" in\n    GETPIN) echo "D key-passphrase"; echo OK ;;\n    BYE) echo OK; exit 0 ;;\n    *) echo OK ;;\n  esac\ndone\n',
      { mode: 0o755 },
    );
    const gnupgHome = session.env.GNUPGHOME ?? "";
    writeFileSync(path.join(gnupgHome, "gpg-agent.conf"), `pinentry-program ${pinentry}\n`);
    await runInShell("gpgconf --kill gpg-agent", session.env, "");
    await followDoctor(session.env);
  });

  test("a store whose key is not on this machine: the text says what to do, names no command to run, and never a copy of a secret key", async (t) => {
    const session = await startPassSession();
    t.after(() => session.close());
    writeFileSync(
      path.join(session.storeDir, ".gpg-id"),
      "0123456789ABCDEF0123456789ABCDEF01234567\n",
    );
    const doctor = await pass(session.env, ["doctor"]);
    const passCheck = doctor.stdout.slice(doctor.stdout.indexOf("store --backend pass"));
    const fix = /^ +fix: .*$/m.exec(passCheck)?.[0] ?? "";
    assert.match(
      fix,
      /fix: point PASSWORD_STORE_DIR at a store initialised for a key this machine has/,
    );
    assert.doesNotMatch(fix, /export-secret-keys/);
    assert.deepEqual(runCommands(fix), []);
  });
});

describe(
  "the printed fixes for a team's pass store",
  { skip: ONLY_ON_LINUX, timeout: 600_000 },
  () => {
    const HOST = "registry.example.com";
    const helper = (member: Member, args: readonly string[], stdin?: string) =>
      runHelper(["--backend", "pass", "--service", TEAM_SERVICE, ...args], {
        env: member.env,
        timeoutMs: 120_000,
        ...(stdin === undefined ? {} : { stdin }),
      });
    /** The command of the pass store's line in doctor's report. */
    const doctorFix = async (member: Member): Promise<string> => {
      const doctor = await helper(member, ["doctor", "--offline"]);
      const command = /^(?:FAIL|warn) {2}store --backend pass.*\n +fix: run "([^"]+)"/m.exec(
        doctor.stdout,
      )?.[1];
      assert.ok(command !== undefined, doctor.stdout);
      return command;
    };
    const shell = async (member: Member, command: string) => {
      const ran = await runInShell(command, member.env, "");
      assert.equal(ran.code, 0, `${member.name}: "${command}" failed: ${ran.output}`);
    };
    const git = (member: Member, args: string) =>
      runInShell(`git -C ${member.storeDir} ${args}`, member.env, "");

    test("a newcomer: the command doctor prints her, run by a recipient, lets her in; the other recipient's printed lsign lets him store again", async (t) => {
      const team = await startPassTeam();
      t.after(() => team.close());
      const { alice, bob, carol } = team;
      assertSilentSuccess(await helper(alice, ["store", HOST], `{"token":"${TOKEN}"}`));
      // Carol's doctor prints what Alice is to run; Alice has her public key already.
      const command = await doctorFix(carol);
      assert.match(command, /^gpg --quick-lsign-key [0-9A-F]{40} && pass init -p /);
      await shell(alice, command);
      assert.equal((await helper(carol, ["sync"])).code, 0);
      assert.equal((await helper(carol, ["get", HOST])).stdout, `{"token":"${TOKEN}"}\n`);
      // Bob has Carol's key but no trust in it: doctor says so before his store fails.
      assert.equal((await git(bob, "pull --quiet --ff-only")).code, 0);
      await shell(bob, await doctorFix(bob));
      assertSilentSuccess(await helper(bob, ["store", HOST], `{"token":"${TOKEN}-2"}`));
    });

    test("a conflict: the printed merge --abort, sync and reset --keep bring Bob to the team's token", async (t) => {
      const team = await startPassTeam();
      t.after(() => team.close());
      const { alice, bob } = team;
      assertSilentSuccess(await helper(alice, ["store", HOST], `{"token":"${TOKEN}-a"}`));
      assert.equal((await git(alice, "push --quiet")).code, 0);
      assertSilentSuccess(await helper(bob, ["store", HOST], `{"token":"${TOKEN}-b"}`));
      assert.notEqual((await git(bob, "pull --quiet --no-rebase")).code, 0);
      const abort = await doctorFix(bob);
      assert.match(abort, /^git -C \S+ merge --abort$/);
      await shell(bob, abort);
      const sync = await doctorFix(bob);
      assert.match(sync, / --backend pass --service team sync$/);
      const conflict = await runInShell(sync, bob.env, "");
      assert.notEqual(conflict.code, 0);
      await shell(bob, printedCommand(conflict.output, "reset"));
      assert.equal((await helper(bob, ["get", HOST])).stdout, `{"token":"${TOKEN}-a"}\n`);
      // A rebase stopped the same way: the printed rebase --abort.
      assertSilentSuccess(await helper(alice, ["store", HOST], `{"token":"${TOKEN}-c"}`));
      assert.equal((await git(alice, "push --quiet")).code, 0);
      assertSilentSuccess(await helper(bob, ["store", HOST], `{"token":"${TOKEN}-d"}`));
      assert.notEqual((await git(bob, "pull --quiet --rebase")).code, 0);
      const rebaseAbort = await doctorFix(bob);
      assert.match(rebaseAbort, /^git -C \S+ rebase --abort$/);
      await shell(bob, rebaseAbort);
      assert.equal((await helper(bob, ["get", HOST])).stdout, `{"token":"${TOKEN}-d"}\n`);
    });
  },
);
