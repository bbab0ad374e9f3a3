/**
 * Many encrypted sessions, one after another, against kwalletd5 5.103: every call must
 * succeed. Before KWallet 6.25 (KDE bug 514194) kwalletd derives another session key than
 * the client for some exchanges: when the shared secret begins with a zero byte (one in
 * 256), which it strips before HKDF, and when the client's public value has its first nine
 * bits set (one in 512), which QCA's signed BigInteger turns into another number. libsecret's
 * secret-tool fails about one lookup in 120 against it. Each call here opens a session of its
 * own: a client that avoided only the first case would fail about every other run.
 *
 * Also, in sessions of their own: what kwalletd keeps on disk in clear, and what the helper
 * does against a kwalletd that has no wallet at all.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import type { KeyringSession } from "../support/keyring-session.ts";
import { startKWalletSession } from "../support/kwallet-session.ts";
import { defaultCollection } from "../support/secret-service-daemon.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { PROMPT_MS } from "../support/timing.ts";

const ONLY_ON_LINUX = linuxOnly("KWallet suite");

const HOST = "sessions.example.com";
const GETS = 300;
const STORES = 100;
// Each call takes ~15 ms (a store ~20 ms); the limit only stops a hung run early.
const LIMIT_MS = 120_000;

interface Failure {
  readonly call: string;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Why `result` is not a silent success that printed `stdout`, or undefined when it is. */
function failure(call: string, result: HelperResult, stdout: string): Failure | undefined {
  if (result.code === 0 && result.stdout === stdout && result.stderr === "") return undefined;
  return { call, code: result.code, stdout: result.stdout, stderr: result.stderr };
}

function assertNoFailures(failures: readonly Failure[], calls: number): void {
  const first = failures
    .slice(0, 3)
    .map(
      ({ call, code, stdout, stderr }) =>
        `${call}: exit ${code}, stdout ${JSON.stringify(stdout)}, stderr:\n${stderr.trimEnd()}`,
    );
  assert.equal(
    failures.length,
    0,
    `${failures.length} of ${calls} calls failed; the first:\n${first.join("\n")}`,
  );
}

describe("KWallet: many sessions in a row", { skip: ONLY_ON_LINUX }, () => {
  let session: KeyringSession | undefined;
  let env: Record<string, string>;
  let object = `{"token":"SECRET-kwallet-sessions-initial"}`;
  before(async () => {
    session = await startKWalletSession();
    // A failure then says its cause (the session error, the D-Bus error) on stderr.
    env = { ...session.env, TF_CREDENTIALS_KEYCHAIN_DEBUG: "1" };
    const stored = await runHelper(["store", HOST], { env, stdin: object });
    assert.equal(failure("store", stored, ""), undefined);
  });
  after(async () => {
    await session?.close();
  });

  test(
    `${GETS} gets one after another all print the stored object`,
    { timeout: LIMIT_MS },
    async () => {
      const failures: Failure[] = [];
      for (let i = 1; i <= GETS; i++) {
        const result = await runHelper(["get", HOST], { env });
        const failed = failure(`get #${i}`, result, `${object}\n`);
        if (failed) failures.push(failed);
      }
      assertNoFailures(failures, GETS);
    },
  );

  test(
    `${STORES} stores of a new token, each read back at once`,
    { timeout: LIMIT_MS },
    async () => {
      const failures: Failure[] = [];
      for (let i = 1; i <= STORES; i++) {
        const next = `{"token":"SECRET-kwallet-sessions-${i}-${Math.random().toString(36).slice(2)}"}`;
        const stored = failure(
          `store #${i}`,
          await runHelper(["store", HOST], { env, stdin: next }),
          "",
        );
        if (stored) {
          failures.push(stored);
          continue;
        }
        object = next;
        const read = failure(
          `get after store #${i}`,
          await runHelper(["get", HOST], { env }),
          `${object}\n`,
        );
        if (read) failures.push(read);
      }
      assertNoFailures(failures, 2 * STORES);
    },
  );
});

describe("KWallet: what it keeps on disk", { skip: ONLY_ON_LINUX }, () => {
  const tokens = new Map(
    ["one.attributes.example.com", "two.attributes.example.com"].map((host) => [
      host,
      `SECRET-kwallet-attr-${host}-${Math.random().toString(36).slice(2)}`,
    ]),
  );
  let session: KeyringSession | undefined;
  before(async () => {
    session = await startKWalletSession();
  });
  after(async () => {
    await session?.close();
  });

  test("the attribute file names the hosts, and no file holds a token in clear", async () => {
    const env = session!.env;
    // kwalletd5's AppDataLocation less its "5" (kwalletfreedesktopattributes.cpp), named
    // after the wallet.
    const walletDir = path.join(env.XDG_DATA_HOME!, "kwalletd");
    const walletFile = path.join(walletDir, "kdewallet.kwl");
    const attributesFile = path.join(walletDir, "kdewallet_attributes.json");
    const emptyWallet = statSync(walletFile).size;
    for (const [host, token] of tokens) {
      const stored = await runHelper(["store", host], { env, stdin: JSON.stringify({ token }) });
      assert.equal(failure(`store ${host}`, stored, ""), undefined);
    }

    // kwalletd writes the attributes, as JSON in clear, within CreateItem: before it answers.
    const attributes = readFileSync(attributesFile, "utf8");
    assert.deepEqual(usernamesIn(attributes).sort(), [...tokens.keys()].sort());

    // The wallet itself is saved 5 s after its last change, or when it closes: Lock closes it,
    // and the Locked property changes only after the save.
    await session!.lockCollection();
    assert.ok(
      statSync(walletFile).size > emptyWallet,
      `kwalletd did not save ${walletFile} with the items`,
    );

    const files = filesUnder(env.XDG_DATA_HOME!);
    assert.ok(files.includes(walletFile) && files.includes(attributesFile), files.join("\n"));
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const token of tokens.values()) {
        for (const [encoding, needle] of encodings(token)) {
          assert.ok(!bytes.includes(needle), `${file} holds a token in clear (${encoding})`);
        }
      }
    }
  });
});

describe(
  "KWallet with no wallet (as before KWallet was ever opened)",
  { skip: ONLY_ON_LINUX },
  () => {
    const object = `{"token":"SECRET-kwallet-none"}`;
    let session: KeyringSession | undefined;
    let env: Record<string, string>;
    before(async () => {
      session = await startKWalletSession({ wallet: false });
      env = session.env;
    });
    after(async () => {
      await session?.close();
    });

    test("store fails at once with one line: there is no default collection", async () => {
      // No --timeout: nothing waits on kwalletd's dialog.
      const result = await runHelper(["store", HOST], { env, stdin: object });
      assert.equal(result.code, 1, `exit ${result.code}, stderr:\n${result.stderr}`);
      assert.equal(result.stdout, "");
      assert.match(
        result.stderr,
        /^could not write to the keychain: [^\n]*no default collection[^\n]*\n$/,
      );
      assert.ok(
        result.milliseconds < PROMPT_MS,
        `store took ${Math.round(result.milliseconds)} ms`,
      );
      // Nor did it ask for a collection: kwalletd's CreateCollection prompt writes the new
      // default wallet's name into kwalletrc, and then waits on its dialog.
      assert.equal(await defaultCollection(env), "/");
      assert.equal(existsSync(path.join(env.XDG_CONFIG_HOME!, "kwalletrc")), false);
      assert.deepEqual(filesUnder(env.XDG_DATA_HOME!), []);
    });

    test("get prints {} and warns that nothing can be stored", async () => {
      const result = await runHelper(["get", HOST], { env });
      assert.equal(result.code, 0, `exit ${result.code}, stderr:\n${result.stderr}`);
      assert.equal(result.stdout, "{}\n");
      assert.match(result.stderr, /^warning: [^\n]*no default collection[^\n]*\n$/);
    });
  },
);

/** The `username` attribute of every item in a kwalletd attribute file. */
function usernamesIn(text: string): string[] {
  const entries = Object.values(JSON.parse(text) as Record<string, unknown>);
  return entries.flatMap((entry) => {
    const username = (entry as { attributes?: { username?: unknown } }).attributes?.username;
    return typeof username === "string" ? [username] : [];
  });
}

/** Every regular file under `dir`, at any depth. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile());
}

/** `text` as the bytes a program could keep it in: UTF-8 (JSON) and UTF-16 (a Qt QString). */
function encodings(text: string): [string, Buffer][] {
  const utf16le = Buffer.from(text, "utf16le");
  return [
    ["UTF-8", Buffer.from(text, "utf8")],
    ["UTF-16LE", utf16le],
    ["UTF-16BE", Buffer.from(utf16le).swap16()],
  ];
}

describe("KWallet whose default wallet is gone", { skip: ONLY_ON_LINUX }, () => {
  test("doctor says a collection exists but none is the default, and store says no default collection", async () => {
    const session = await startKWalletSession();
    try {
      // What a libsecret client's first store on a KWallet without wallets leaves behind:
      // the default names a wallet that does not exist. kwalletd reads this file on each
      // ReadAlias, so no restart is needed.
      const rc = path.join(session.env.XDG_CONFIG_HOME!, "kwalletrc");
      writeFileSync(
        rc,
        readFileSync(rc, "utf8").replace(/^Default Wallet=.*$/m, "Default Wallet=Default keyring"),
      );
      const doctor = await runHelper(["doctor"], { env: session.env });
      assert.notEqual(doctor.code, 0);
      assert.match(
        doctor.stdout,
        /1 collection but none is the default \(the Secret Service is KWallet\)/,
      );
      assert.match(doctor.stdout, /KWallet Manager/);
      const store = await runHelper(["store", "gone.example.com"], {
        env: session.env,
        stdin: '{"token":"SECRET-gone"}',
      });
      assert.equal(store.code, 1, store.stderr);
      assert.match(store.stderr, /^[^\n]*no default collection[^\n]*\n$/);
    } finally {
      await session.close();
    }
  });
});
