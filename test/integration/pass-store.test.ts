import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { promisify } from "node:util";
import { CliError } from "../../src/errors.ts";
import type { Hostname } from "../../src/protocol/hostname.ts";
import { normalizeHostname } from "../../src/protocol/hostname.ts";
import type { CredentialStore } from "../../src/protocol/credential-store.ts";
import { createPassStore, type PassStoreOptions } from "../../src/stores/pass/pass-store.ts";
import { startPassSession, type PassSession } from "../support/pass-session.ts";
import { spawn, spawnSync } from "node:child_process";
import { lstatSync, symlinkSync } from "node:fs";

/** True when `file` exists, a dangling symlink included. */
const present = (file: string) => lstatSync(file, { throwIfNoEntry: false }) !== undefined;
import { helperCommand, runHelper as runHelperProcess } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { deadlineIn } from "../../src/system/deadline.ts";
import { fixWith, renderFix, type Situation } from "../../src/fixes.ts";
import { PATIENCE_MS, PROMPT_MS } from "../support/timing.ts";

const ONLY_ON_LINUX = linuxOnly("the pass store suite");

const execFileAsync = promisify(execFile);
const SERVICE = "terraform-credentials";
const host = (name: string): Hostname => normalizeHostname(name);

function openStore(session: PassSession, extra: Partial<PassStoreOptions> = {}): CredentialStore {
  return createPassStore({
    service: SERVICE,
    env: session.env,
    homedir: session.home,
    // The test's own, not the suite's: a deadline only the tests of it come near.
    deadline: deadlineIn(PATIENCE_MS / 1000),
    ...extra,
  });
}

/** Every regular file under `dir`, .git included. */
function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

function assertNowhereUnder(dir: string, secret: string): void {
  const needle = Buffer.from(secret, "utf8");
  const files = allFiles(dir);
  assert.ok(files.length > 0, `no files under ${dir}`);
  for (const file of files) {
    assert.ok(!readFileSync(file).includes(needle), `${file} contains the secret in plaintext`);
  }
}

/** Runs `operation`, expecting a one-line CliError that matches every pattern, promptly. */
async function assertQuickCliError(
  operation: () => Promise<unknown>,
  ...patterns: RegExp[]
): Promise<CliError> {
  const started = performance.now();
  const error = await operation().then(
    () => assert.fail("expected a CliError"),
    (thrown: unknown) => thrown,
  );
  const milliseconds = performance.now() - started;
  assert.ok(error instanceof CliError, `not a CliError: ${String(error)}`);
  assert.doesNotMatch(error.message, /\n/, "one line");
  assert.match(error.message, /^[a-z"]/, "starts in lower case");
  assert.doesNotMatch(error.message, /\.$/, "no trailing period");
  for (const pattern of patterns) assert.match(error.message, pattern);
  assert.ok(milliseconds < PROMPT_MS, `took ${Math.round(milliseconds)} ms`);
  return error;
}

/**
 * That `error` carries the one fix of `situation` (as data: cli/error-line.ts prints it after
 * the cause), and that the fix, rendered as a call with no options would print it, matches
 * `printed`.
 */
function assertFixedBy(error: CliError, situation: Situation, printed: RegExp): void {
  assert.ok(error.fix !== undefined, `no fix: ${error.message}`);
  assert.equal(error.fix.situation, situation, error.message);
  const fix = renderFix(fixWith(error.fix, "terraform-credentials-keychain", () => ""));
  assert.match(fix, printed);
  assert.doesNotMatch(fix, /SECRET/);
}

describe("pass store against a real pass and gpg", { skip: ONLY_ON_LINUX }, () => {
  let session: PassSession;
  let store: CredentialStore;
  before(async () => {
    session = await startPassSession();
  });
  // One per test, each with its own deadline: a store shared by the file ran out of its
  // deadline on a loaded machine, failing whatever test came last.
  beforeEach(() => {
    store = openStore(session);
  });
  after(async () => {
    await session.close();
  });

  test("round-trips a JSON object byte for byte", async () => {
    const object =
      '{"token":"tok-ÄÖÜ-😀 \\"quoted\\"","org":{"teams":[1,2.50,12345678901234567890]},"empty":""}';
    await store.store(host("roundtrip.example.com"), object);
    assert.equal(await store.get(host("roundtrip.example.com")), object);
  });

  test("store replaces what was stored", async () => {
    await store.store(host("replace.example.com"), '{"token":"first","extra":true}');
    await store.store(host("replace.example.com"), '{"token":"second"}');
    assert.equal(await store.get(host("replace.example.com")), '{"token":"second"}');
  });

  test("get of a host with nothing stored is undefined", async () => {
    assert.equal(await store.get(host("absent.example.com")), undefined);
  });

  test("forget deletes and is idempotent", async () => {
    await store.store(host("forget.example.com"), '{"token":"gone-soon"}');
    await store.forget(host("forget.example.com"));
    assert.equal(await store.get(host("forget.example.com")), undefined);
    await store.forget(host("forget.example.com"));
    await store.forget(host("never-stored.example.com"));
  });

  test("a host with a port, and one with a trailing dot, are entries of their own", async () => {
    await store.store(host("ports.example.com"), '{"token":"no-port"}');
    await store.store(host("ports.example.com:8443"), '{"token":"port"}');
    await store.store(host("ports.example.com."), '{"token":"rooted"}');
    assert.equal(await store.get(host("ports.example.com:8443")), '{"token":"port"}');
    assert.equal(await store.get(host("ports.example.com")), '{"token":"no-port"}');
    assert.equal(await store.get(host("ports.example.com.")), '{"token":"rooted"}');
    const folder = path.join(session.storeDir, "terraform-credentials", SERVICE);
    const names = readdirSync(folder);
    assert.ok(names.includes("ports.example.com%3A8443.gpg"), names.join(", "));
    assert.ok(names.includes("ports.example.com%2E.gpg"), names.join(", "));
  });

  test("the entry is what pass itself shows, with one final newline", async () => {
    await store.store(host("shown.example.com"), '{"token":"shown"}');
    const { stdout } = await execFileAsync(
      "pass",
      ["show", "terraform-credentials/terraform-credentials/shown.example.com"],
      {
        env: session.env,
      },
    );
    assert.equal(stdout, '{"token":"shown"}\n');
  });

  test("list returns the decoded hosts, sorted, of this service only, and ignores foreign files", async () => {
    const listed = await startPassSession();
    try {
      const mine = openStore(listed, { service: "listing" });
      const other = openStore(listed, { service: "other" });
      assert.deepEqual(await mine.list(), []);
      for (const name of [
        "b.example.com",
        "a.example.com:8443",
        "xn--mnchen-3ya.de",
        "a.example.com",
        "c.example.com.",
      ]) {
        await mine.store(host(name), '{"token":"listed"}');
      }
      await other.store(host("other.example.com"), '{"token":"elsewhere"}');
      const folder = path.join(listed.storeDir, "terraform-credentials", "listing");
      writeFileSync(path.join(folder, "Upper.example.com.gpg"), "not ours");
      writeFileSync(path.join(folder, "notes.txt"), "not ours");
      mkdirSync(path.join(folder, "sub.example.com"));
      assert.deepEqual(await mine.list(), [
        "a.example.com",
        "a.example.com:8443",
        "b.example.com",
        "c.example.com.",
        "xn--mnchen-3ya.de",
      ]);
      assert.deepEqual(await other.list(), ["other.example.com"]);
    } finally {
      await listed.close();
    }
  });

  test("entries are encrypted: the token is in no file under the store directory", async () => {
    const token = "SECRET-plaintext-check-0123456789";
    await store.store(host("encrypted.example.com"), `{"token":"${token}"}`);
    assertNowhereUnder(session.storeDir, token);
  });

  test("20 parallel stores and gets of one host leave one whole entry", async () => {
    const shared = host("parallel.example.com");
    const objects = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ token: `token-${i}`, pad: "x".repeat(2000) }),
    );
    const gets: Promise<string | undefined>[] = [];
    const stores = objects.map((object) => {
      gets.push(store.get(shared));
      return store.store(shared, object);
    });
    await Promise.all(stores);
    for (const read of await Promise.all(gets)) {
      assert.ok(read === undefined || objects.includes(read), read);
    }
    const final = await store.get(shared);
    assert.ok(final !== undefined && objects.includes(final));
  });

  test("the user's PASSWORD_STORE_GPG_OPTS are used (here --armor)", async () => {
    const armored = openStore(session, {
      env: { ...session.env, PASSWORD_STORE_GPG_OPTS: "--armor" },
    });
    await armored.store(host("armor.example.com"), '{"token":"armored"}');
    const file = path.join(
      session.storeDir,
      "terraform-credentials",
      SERVICE,
      "armor.example.com.gpg",
    );
    assert.match(readFileSync(file, "utf8"), /^-----BEGIN PGP MESSAGE-----/);
    assert.equal(await store.get(host("armor.example.com")), '{"token":"armored"}');
  });

  test("the secret goes through stdin only: not in pass's argv or environment", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-pass-wrapper-"));
    try {
      const { stdout: realPass } = await execFileAsync("sh", ["-c", "command -v pass"], {
        env: session.env,
      });
      const log = path.join(dir, "calls.log");
      const wrapper = path.join(dir, "pass-wrapper");
      writeFileSync(
        wrapper,
        `#!/bin/sh\n{ printf 'argv:'; printf ' [%s]' "$0" "$@"; echo; env; echo; } >> '${log}'\nexec '${realPass.trim()}' "$@"\n`,
      );
      chmodSync(wrapper, 0o755);
      const token = "SECRET-argv-check-9876543210";
      const wrapped = openStore(session, { passCommand: wrapper });
      await wrapped.store(host("argv.example.com"), `{"token":"${token}"}`);
      assert.equal(await wrapped.get(host("argv.example.com")), `{"token":"${token}"}`);
      await wrapped.forget(host("argv.example.com"));
      const calls = readFileSync(log, "utf8");
      assert.match(
        calls,
        /argv: .* \[insert\] \[--multiline\] \[--force\] \[terraform-credentials\/terraform-credentials\/argv\.example\.com\]/,
      );
      assert.match(calls, /\[show\]/);
      assert.match(calls, /\[rm\]/);
      assert.match(
        calls,
        new RegExp(`^PASSWORD_STORE_DIR=${session.storeDir}$`, "m"),
        "the environment is passed through",
      );
      assert.match(calls, /^PASSWORD_STORE_GPG_OPTS=--batch$/m);
      assert.ok(!calls.includes(token), "the token reached argv or the environment");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("pass store in a git repository", { skip: ONLY_ON_LINUX }, () => {
  let session: PassSession;
  before(async () => {
    session = await startPassSession({ git: true });
  });
  after(async () => {
    await session.close();
  });

  test("each store, replace and forget is one commit, and no commit holds the token", async () => {
    const commits = async () =>
      Number(
        (
          await execFileAsync("git", ["-C", session.storeDir, "rev-list", "--count", "HEAD"], {
            env: session.env,
          })
        ).stdout.trim(),
      );
    const store = openStore(session);
    const token = "SECRET-git-check-5555";
    const start = await commits();
    await store.store(host("git.example.com"), `{"token":"${token}"}`);
    assert.equal(await commits(), start + 1);
    await store.store(host("git.example.com"), `{"token":"${token}-2"}`);
    assert.equal(await commits(), start + 2);
    await store.forget(host("git.example.com"));
    assert.equal(await commits(), start + 3);
    await store.forget(host("git.example.com"));
    assert.equal(await commits(), start + 3, "forgetting nothing commits nothing");
    const { stdout: status } = await execFileAsync(
      "git",
      ["-C", session.storeDir, "status", "--porcelain"],
      { env: session.env },
    );
    assert.equal(status, "", "the work tree is clean");
    // pass git init sets a textconv that decrypts .gpg files for diffs: ask for the raw bytes.
    const { stdout: history } = await execFileAsync(
      "git",
      ["-C", session.storeDir, "log", "-p", "--all", "--no-textconv", "--binary"],
      {
        env: session.env,
      },
    );
    assert.match(history, /git\.example\.com/);
    assert.ok(!history.includes(token), "the token is in git's history");
    assertNowhereUnder(session.storeDir, token);
  });
});

describe("pass store errors", { skip: ONLY_ON_LINUX }, () => {
  let session: PassSession;
  let scratch: string;
  before(async () => {
    session = await startPassSession();
    scratch = mkdtempSync(path.join(os.tmpdir(), "tfck-pass-errors-"));
  });
  after(async () => {
    await session.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("pass not installed: says how to install it", async () => {
    const missing = openStore(session, { passCommand: path.join(scratch, "no-such-dir", "pass") });
    for (const operation of [
      () => missing.get(host("example.com")),
      () => missing.store(host("example.com"), '{"token":"SECRET-not-installed"}'),
      () => missing.forget(host("example.com")),
    ]) {
      const error = await assertQuickCliError(operation, /not installed/);
      assert.doesNotMatch(error.message, /SECRET/);
      assertFixedBy(error, "pass-missing", /apt-get install pass/);
    }
    const noPath = openStore(session, { env: { ...session.env, PATH: scratch } });
    await assertQuickCliError(
      () => noPath.get(host("example.com")),
      /could not run "pass": it is not installed or not on the PATH/,
    );
  });

  test("store not initialised: store and list say so, with doctor (which names the key for pass init) as the fix; get and forget find nothing", async () => {
    const empty = path.join(scratch, "empty-store");
    mkdirSync(empty);
    const uninitialised = openStore(session, {
      env: { ...session.env, PASSWORD_STORE_DIR: empty },
    });
    const error = await assertQuickCliError(
      () => uninitialised.store(host("example.com"), '{"token":"SECRET-uninitialised"}'),
      /is not initialised/,
    );
    assert.ok(error.message.includes(empty), error.message);
    assert.doesNotMatch(error.message, /SECRET|Usage/);
    // Which `pass init` runs as printed depends on the keys gpg has: doctor looks and says.
    assertFixedBy(error, "store-needs-doctor", /^run "terraform-credentials-keychain doctor"/);
    assert.equal(await uninitialised.get(host("example.com")), undefined);
    await uninitialised.forget(host("example.com"));
    // list is for people (list, exec): "nothing stored" would hide the missing store.
    assertFixedBy(
      await assertQuickCliError(() => uninitialised.list(), /is not initialised/),
      "store-needs-doctor",
      /doctor/,
    );
  });

  test("no usable key: .gpg-id names a key that is not in the keyring", async () => {
    const keyless = path.join(scratch, "keyless-store");
    mkdirSync(keyless);
    writeFileSync(path.join(keyless, ".gpg-id"), "0123456789ABCDEF0123456789ABCDEF01234567\n");
    const store = openStore(session, { env: { ...session.env, PASSWORD_STORE_DIR: keyless } });
    const error = await assertQuickCliError(
      () => store.store(host("example.com"), '{"token":"SECRET-keyless"}'),
      /gpg cannot encrypt to the key/,
      /No public key/,
    );
    assert.ok(error.message.includes(keyless), error.message);
    assert.doesNotMatch(error.message, /SECRET/);
    assertFixedBy(error, "store-needs-doctor", /doctor/);
  });

  test("a failed replace keeps what was stored", async () => {
    const keptStore = path.join(scratch, "kept-store");
    const env = { ...session.env, PASSWORD_STORE_DIR: keptStore };
    await execFileAsync("pass", ["init", session.fingerprint], { env });
    const store = openStore(session, { env });
    await store.store(host("kept.example.com"), '{"token":"kept"}');
    writeFileSync(path.join(keptStore, ".gpg-id"), "0123456789ABCDEF0123456789ABCDEF01234567\n");
    await assertQuickCliError(
      () => store.store(host("kept.example.com"), '{"token":"SECRET-new"}'),
      /gpg cannot encrypt/,
    );
    assert.equal(await store.get(host("kept.example.com")), '{"token":"kept"}');
  });

  test("an entry encrypted to another key: says the secret key is missing or locked", async () => {
    const other = await startPassSession();
    try {
      await openStore(other).store(host("foreign.example.com"), '{"token":"SECRET-foreign"}');
      // The other session's store, read with this session's keyring.
      const store = openStore(session, {
        env: { ...session.env, PASSWORD_STORE_DIR: other.storeDir },
      });
      const error = await assertQuickCliError(
        () => store.get(host("foreign.example.com")),
        /gpg could not decrypt terraform-credentials\/terraform-credentials\/foreign\.example\.com/,
        /No secret key/,
        /its secret key is not here, or needs a passphrase/,
      );
      assert.doesNotMatch(error.message, /SECRET/);
      // Absent and locked look alike to gpg here: doctor tells them apart.
      assertFixedBy(error, "store-needs-doctor", /doctor/);
    } finally {
      await other.close();
    }
  });

  test("a key locked with a passphrase and no way to ask for it: fails at once; store's fix unlocks it, get's is doctor", async () => {
    const locked = await startPassSession({ passphrase: "correct horse" });
    try {
      const store = openStore(locked);
      // Encrypting needs only the public key: pass alone would store, and every later get
      // would fail. store says so first, as doctor does, and stores nothing.
      const refused = await assertQuickCliError(
        () => store.store(host("locked.example.com"), '{"token":"SECRET-locked"}'),
        /needs a passphrase that gpg-agent has not cached/,
        /^nothing was stored in pass/,
      );
      assert.doesNotMatch(refused.message, /SECRET/);
      assertFixedBy(refused, "gpg-key-locked", /gpg --trust-model always -e -r /);
      assert.equal(await store.list().then((hosts) => hosts.length), 0);
      // An entry already there (written while the key was unlocked) is refused on read.
      const inserted = spawnSync(
        "pass",
        [
          "insert",
          "--multiline",
          "--force",
          "terraform-credentials/terraform-credentials/locked.example.com",
        ],
        { env: locked.env, input: '{"token":"SECRET-locked"}\n', encoding: "utf8" },
      );
      assert.equal(inserted.status, 0, inserted.stderr);
      const error = await assertQuickCliError(
        () => store.get(host("locked.example.com")),
        /gpg could not decrypt terraform-credentials\/terraform-credentials\/locked\.example\.com/,
        /needs a passphrase nobody can enter here/,
      );
      assert.doesNotMatch(error.message, /SECRET/);
      assertFixedBy(error, "store-needs-doctor", /doctor/);
    } finally {
      await locked.close();
    }
  });

  test("a pass that never finishes is killed after the timeout", async () => {
    const hanging = path.join(scratch, "hanging-pass");
    writeFileSync(hanging, "#!/bin/sh\nexec sleep 60\n");
    chmodSync(hanging, 0o755);
    const store = openStore(session, { passCommand: hanging, deadline: deadlineIn(0.5) });
    assertFixedBy(
      await assertQuickCliError(
        () => store.get(host("example.com")),
        /did not finish within 0\.5 s/,
        /a passphrase nobody can enter here, or .* a gpg-agent that does not answer/,
      ),
      "store-needs-doctor",
      /doctor/,
    );
    // The lock was released: the real pass works at once.
    assert.equal(await openStore(session).get(host("example.com")), undefined);
  });

  test("a lock left behind by a killed process is taken over", async () => {
    const lock = path.join(session.storeDir, ".terraform-credentials.lock");
    mkdirSync(lock);
    // An hour old: stale for the deadline below (which it outlives by 10 s) as for any.
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(lock, old, old);
    const store = openStore(session, { deadline: deadlineIn(60) });
    await store.store(host("stale-lock.example.com"), '{"token":"after-stale-lock"}');
    assert.equal(await store.get(host("stale-lock.example.com")), '{"token":"after-stale-lock"}');
  });

  test("a fresh lock whose holder has died (SIGKILL) is taken over at once", async () => {
    const dead = spawnSync("true").pid;
    const lock = path.join(session.storeDir, ".terraform-credentials.lock");
    symlinkSync(`${os.hostname()}:${dead}`, lock);
    const store = openStore(session, {
      // Far beyond PROMPT_MS, so that a wait for it shows.
      deadline: deadlineIn(60),
      processes: { pid: process.pid, isAlive: () => false },
    });
    const started = performance.now();
    await store.store(host("dead-holder.example.com"), '{"token":"after-dead-holder"}');
    assert.ok(performance.now() - started < PROMPT_MS, `took ${performance.now() - started} ms`);
    assert.equal(present(lock), false, "the lock is released");
  });

  test("an old lock whose holder still runs is waited on until the deadline, never taken", async () => {
    const lock = path.join(session.storeDir, ".terraform-credentials.lock");
    symlinkSync(`${os.hostname()}:4242`, lock);
    const old = new Date(Date.now() - 3_600_000);
    spawnSync("touch", ["-h", "-d", old.toISOString(), lock]);
    try {
      const store = openStore(session, {
        deadline: deadlineIn(1),
        processes: { pid: process.pid, isAlive: (pid) => pid === 4242 },
      });
      const started = performance.now();
      await assert.rejects(
        store.store(host("live-holder.example.com"), '{"token":"must-wait"}'),
        /is busy: .* has been held for 36\d\d s by another process/,
      );
      const took = performance.now() - started;
      assert.ok(took < PROMPT_MS, `gave up after ${Math.round(took)} ms, not at --timeout's 1 s`);
      assert.equal(present(lock), true, "the live holder's lock is still there");
    } finally {
      rmSync(lock, { force: true });
    }
  });

  test("a relative PASSWORD_STORE_DIR is refused at once with what to do", () => {
    assert.throws(
      () => openStore(session, { env: { ...session.env, PASSWORD_STORE_DIR: "store" } }),
      new CliError(
        'PASSWORD_STORE_DIR is the relative path "store": Terraform runs the helper from each configuration\'s directory, where it names another store; set it to an absolute path',
      ),
    );
  });

  test("a helper stopped by SIGTERM or SIGINT while it holds the lock releases it", async () => {
    // A pass that never finishes, so that the helper is stopped while holding the lock.
    const bin = mkdtempSync(path.join(os.tmpdir(), "tfck-slow-pass-"));
    writeFileSync(path.join(bin, "pass"), "#!/bin/sh\nexec sleep 30\n", { mode: 0o755 });
    const lock = path.join(session.storeDir, ".terraform-credentials.lock");
    try {
      for (const signal of ["SIGTERM", "SIGINT"] as const) {
        const [command, ...args] = helperCommand();
        const child = spawn(command, [...args, "--backend", "pass", "get", "example.com"], {
          env: { ...session.env, PATH: `${bin}:${session.env.PATH ?? ""}` },
          stdio: "ignore",
        });
        const waitForLock = Date.now() + PATIENCE_MS;
        while (!present(lock) && Date.now() < waitForLock) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.ok(present(lock), "the helper took the lock");
        const exited = new Promise((resolve) => child.once("close", resolve));
        child.kill(signal);
        await exited;
        assert.equal(present(lock), false, `the lock is gone after ${signal}`);
      }
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe(
  "doctor with --backend pass finds what terraform init would meet",
  { skip: ONLY_ON_LINUX },
  () => {
    for (const [what, passphrase, ok] of [
      ["a key without a passphrase: the store check is ok", undefined, true],
      [
        "a key whose passphrase no one can type here: doctor fails and says so",
        "correct horse",
        false,
      ],
    ] as const) {
      test(what, async () => {
        const session = await startPassSession(passphrase === undefined ? {} : { passphrase });
        try {
          const doctor = await runHelperProcess(["--backend", "pass", "doctor"], {
            env: session.env,
          });
          const line = doctor.stdout
            .split("\n")
            .find((text) => text.includes("store --backend pass"));
          assert.ok(line !== undefined, doctor.stdout);
          if (ok) {
            assert.match(line, /^ok /, doctor.stdout);
          } else {
            assert.match(line, /^FAIL /, doctor.stdout);
            assert.match(line, /needs a passphrase that gpg-agent has not cached/);
            assert.notEqual(doctor.code, 0);
          }
        } finally {
          await session.close();
        }
      });
    }

    test("no D-Bus, pass set up: doctor's fix for the keychain is the command that switches to pass", async () => {
      const session = await startPassSession();
      try {
        const env = { ...session.env, DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/bus" };
        const doctor = await runHelperProcess(["doctor"], { env });
        assert.notEqual(doctor.code, 0);
        assert.match(doctor.stdout, /--backend pass install --force/);
      } finally {
        await session.close();
      }
    });

    test("a store not yet initialised, with a secret key here: the fix names that key", async () => {
      const session = await startPassSession();
      try {
        rmSync(path.join(session.storeDir, ".gpg-id"));
        const doctor = await runHelperProcess(["--backend", "pass", "doctor"], {
          env: session.env,
        });
        assert.notEqual(doctor.code, 0);
        assert.ok(doctor.stdout.includes(`pass init ${session.fingerprint}`), doctor.stdout);
      } finally {
        await session.close();
      }
    });
  },
);
