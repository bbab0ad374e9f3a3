import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import {
  chmodSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { MAX_CREDENTIALS_BYTES } from "../../src/protocol/credentials-object.ts";
import { helperCommand, runHelper } from "../support/helper-process.ts";
import { startKeyringSession, type KeyringSession } from "../support/keyring-session.ts";
import { assertOneLineFailure, assertSilentSuccess } from "../support/protocol-suite.ts";

const execFileAsync = promisify(execFile);
const TOKEN = "SECRET-layout-token-0123456789";

describe("keychain entries as other programs see them", () => {
  let session: KeyringSession;
  before(async () => {
    session = await startKeyringSession();
  });
  after(async () => {
    await session.close();
  });

  test("one entry per host: service attribute, hostname as account, no token in label or attributes", async () => {
    assertSilentSuccess(
      await runHelper(["--service", "layout", "store", "Layout.Example.COM:443"], {
        env: session.env,
        stdin: `{"token":"${TOKEN}"}`,
      }),
    );
    const { stdout: lookedUp } = await execFileAsync(
      "secret-tool",
      ["lookup", "service", "layout", "username", "layout.example.com"],
      { env: session.env },
    );
    assert.equal(lookedUp, `{"token":"${TOKEN}"}`);
    // secret-tool prints the item (label, secret, dates) on stdout and its attributes on stderr.
    const { stdout: item, stderr: attributes } = await execFileAsync(
      "secret-tool",
      ["search", "--all", "service", "layout"],
      { env: session.env },
    );
    assert.match(item, /^label = keyring:layout\.example\.com@layout$/m);
    assert.doesNotMatch(item.replace(/^secret = .*$/m, ""), new RegExp(TOKEN));
    const withoutSecret = attributes;
    assert.match(withoutSecret, /attribute\.username = layout\.example\.com/);
    assert.match(withoutSecret, /attribute\.service = layout/);
    assert.doesNotMatch(withoutSecret, new RegExp(TOKEN));
    assert.equal(withoutSecret.match(/^attribute\.service = /gm)?.length, 1, "exactly one item");
  });
});

describe("hostnames as the built executable's ICU maps them", () => {
  test("capital sharp s is stored under ss, as Terraform passes it, not under xn--zca", async () => {
    const session = await startKeyringSession();
    try {
      assertSilentSuccess(
        await runHelper(["store", "\u1e9e.de"], { env: session.env, stdin: '{"token":"t"}' }),
      );
      const listed = await runHelper(["list"], { env: session.env });
      assert.equal(listed.stdout, "ss.de\n");
    } finally {
      await session.close();
    }
  });
});

describe("duplicate keychain items for one host (from another program)", () => {
  let session: KeyringSession;
  before(async () => {
    session = await startKeyringSession();
  });
  after(async () => {
    await session.close();
  });
  const HOST = "dup.example.com";
  // secret-tool replaces an item with the same attributes, so the second one has one more.
  const addItem = async (secret: string, extra: string[]) => {
    const child = spawn(
      "secret-tool",
      ["store", "--label=other", "service", "terraform-credentials", "username", HOST, ...extra],
      { env: session.env, stdio: ["pipe", "ignore", "ignore"] },
    );
    child.stdin.end(secret);
    await new Promise((resolve) => child.once("close", resolve));
  };

  test("get picks one the same way each time and says so; forget removes them all; store refuses and keeps them", async () => {
    await addItem('{"token":"SECRET-b"}', []);
    await addItem('{"token":"SECRET-a"}', ["origin", "other-program"]);
    const first = await runHelper(["get", HOST], { env: session.env });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, '{"token":"SECRET-a"}\n');
    assert.match(first.stderr, /^warning: 2 keychain items match dup\.example\.com.*\n$/);
    const second = await runHelper(["get", HOST], { env: session.env });
    assert.equal(second.stdout, first.stdout);

    const forget = await runHelper(["forget", HOST], { env: session.env });
    assert.equal(forget.code, 0, forget.stderr);
    assert.match(forget.stderr, /removed 2 keychain items/);
    const { stdout } = await execFileAsync(
      "secret-tool",
      ["search", "--all", "service", "terraform-credentials", "username", HOST],
      { env: session.env },
    );
    assert.equal(stdout, "", "no item left");

    await addItem('{"token":"SECRET-b"}', []);
    await addItem('{"token":"SECRET-a"}', ["origin", "other-program"]);
    const refused = await runHelper(["store", HOST], {
      env: session.env,
      stdin: '{"token":"SECRET-new"}',
    });
    assertOneLineFailure(refused);
    assert.match(refused.stderr, /nothing was stored; "forget dup\.example\.com" removes them all/);
    assert.doesNotMatch(refused.stderr, /SECRET/);
    const kept = await runHelper(["get", HOST], { env: session.env });
    assert.equal(kept.stdout, '{"token":"SECRET-a"}\n', "the items are all still there");

    assert.equal((await runHelper(["forget", HOST], { env: session.env })).code, 0);
    const store = await runHelper(["store", HOST], {
      env: session.env,
      stdin: '{"token":"SECRET-new"}',
    });
    assert.equal(store.code, 0, store.stderr);
    const after = await runHelper(["get", HOST], { env: session.env });
    assert.equal(after.stdout, '{"token":"SECRET-new"}\n');
    assert.equal(after.stderr, "");
  });
});

describe("when the keychain cannot be reached", () => {
  const noTraceback = (stderr: string) => assert.doesNotMatch(stderr, /^\s+at /m);
  // Just under the size cap, so that the store gets as far as the keychain.
  const bigInput = `{"token":"SECRET-unreachable","pad":"${"x".repeat(60 * 1024)}"}`;

  test("no session bus: a quick one-paragraph error that names the way out, and stdin drained", async () => {
    const session = await startKeyringSession();
    const env: Record<string, string> = { ...session.env };
    delete env.DBUS_SESSION_BUS_ADDRESS;
    try {
      const get = await runHelper(["get", "example.com"], { env });
      assertOneLineFailure(get);
      assert.match(get.stderr, /D-Bus session bus/);
      assert.match(get.stderr, /--backend pass/);
      noTraceback(get.stderr);
      assert.ok(get.milliseconds < 5000, `took ${get.milliseconds} ms`);
      const store = await runHelper(["store", "example.com"], { env, stdin: bigInput });
      assertOneLineFailure(store);
      assert.ok(store.stdinDrained, "stdin was not read to EOF");
      assert.doesNotMatch(store.stderr, /SECRET-unreachable/);
    } finally {
      await session.close();
    }
  });

  test("a dead bus socket fails within seconds, for get, store and forget", async () => {
    const session = await startKeyringSession();
    try {
      session.killBus();
      for (const [args, stdin] of [
        [["get", "example.com"], undefined],
        [["store", "example.com"], bigInput],
        [["forget", "example.com"], undefined],
      ] as const) {
        const result = await runHelper(args, { env: session.env, ...(stdin ? { stdin } : {}) });
        assertOneLineFailure(result);
        assert.match(result.stderr, /D-Bus/);
        noTraceback(result.stderr);
        assert.ok(result.milliseconds < 5000, `took ${result.milliseconds} ms`);
        assert.ok(result.stdinDrained);
      }
    } finally {
      await session.close();
    }
  });

  test("a bus with no Secret Service says so and does not fall back to another store", async () => {
    const session = await startKeyringSession({ secretService: false });
    try {
      const store = await runHelper(["store", "example.com"], {
        env: session.env,
        stdin: '{"token":"SECRET-nowhere"}',
      });
      assertOneLineFailure(store);
      assert.match(store.stderr, /Secret Service/);
      assert.doesNotMatch(store.stderr, /SECRET-nowhere/);
      const get = await runHelper(["get", "example.com"], { env: session.env });
      assertOneLineFailure(get);
      assert.ok(get.milliseconds < 5000, `took ${get.milliseconds} ms`);
    } finally {
      await session.close();
    }
  });

  test("a locked collection is reported as locked, and what was stored survives", async () => {
    const session = await startKeyringSession();
    try {
      assertSilentSuccess(
        await runHelper(["store", "locked.example.com"], {
          env: session.env,
          stdin: '{"token":"kept"}',
        }),
      );
      await session.lockCollection();
      const store = await runHelper(["store", "locked.example.com"], {
        env: session.env,
        stdin: '{"token":"SECRET-new"}',
      });
      assertOneLineFailure(store);
      assert.match(store.stderr, /locked/);
      const get = await runHelper(["get", "locked.example.com"], { env: session.env });
      assertOneLineFailure(get);
      assert.match(get.stderr, /locked/);
      assert.ok(get.milliseconds < 5000, `took ${get.milliseconds} ms`);
    } finally {
      await session.close();
    }
  });
});

describe("the addon cache of the single executable", () => {
  let session: KeyringSession;
  before(async () => {
    session = await startKeyringSession();
  });
  after(async () => {
    await session.close();
  });
  const cacheDir = () => path.join(session.env.XDG_CACHE_HOME!, "terraform-credentials-keychain");

  test("concurrent first runs all succeed and leave one private copy", async () => {
    rmSync(cacheDir(), { recursive: true, force: true });
    const runs = await Promise.all(
      Array.from({ length: 12 }, () =>
        runHelper(["get", "first-run.example.com"], { env: session.env }),
      ),
    );
    for (const result of runs) {
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, "{}\n");
    }
    const entries = readdirSync(cacheDir());
    assert.equal(entries.length, 1, entries.join(", "));
    assert.match(entries[0]!, /^keyring-[0-9a-f]{64}\.node$/);
    assert.equal(statSync(cacheDir()).mode & 0o777, 0o700);
  });

  test("a cached copy cut short (not the embedded size) is replaced before it is loaded", async () => {
    await runHelper(["get", "x.example.com"], { env: session.env });
    const [name] = readdirSync(cacheDir());
    const file = path.join(cacheDir(), name!);
    writeFileSync(file, "not the addon");
    const result = await runHelper(["get", "x.example.com"], { env: session.env });
    assert.equal(result.code, 0, result.stderr);
    assert.notEqual(readFileSync(file, "utf8").slice(0, 13), "not the addon");
  });

  test("a corrupt cached copy of the right size is replaced when it fails to load", async () => {
    await runHelper(["get", "x.example.com"], { env: session.env });
    const [name] = readdirSync(cacheDir());
    const file = path.join(cacheDir(), name!);
    const good = readFileSync(file);
    writeFileSync(file, Buffer.alloc(good.byteLength, 0x41));
    const result = await runHelper(["get", "x.example.com"], { env: session.env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, "{}\n");
    assert.ok(readFileSync(file).equals(good), "the copy holds the embedded addon again");
  });

  test("temp copies left by killed first runs are removed once they are a minute old", async () => {
    await runHelper(["get", "x.example.com"], { env: session.env });
    const [name] = readdirSync(cacheDir());
    const old = path.join(cacheDir(), `.${name!}.killed.tmp`);
    const fresh = path.join(cacheDir(), `.${name!}.running.tmp`);
    writeFileSync(old, "partial");
    writeFileSync(fresh, "partial");
    const longAgo = new Date(Date.now() - 5 * 60_000);
    utimesSync(old, longAgo, longAgo);
    const result = await runHelper(["get", "x.example.com"], { env: session.env });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(readdirSync(cacheDir()).sort(), [`.${name!}.running.tmp`, name!].sort());
    rmSync(fresh);
  });

  test("a cache directory others can write to is refused with a one-line error", async () => {
    await runHelper(["get", "x.example.com"], { env: session.env });
    chmodSync(cacheDir(), 0o777);
    try {
      const result = await runHelper(["get", "x.example.com"], { env: session.env });
      assertOneLineFailure(result);
      assert.match(result.stderr, /could not load the keychain addon .*0700/);
    } finally {
      chmodSync(cacheDir(), 0o700);
    }
  });
});

describe("the standard streams of the single executable", () => {
  // The helper reads and writes fd 0 and 1 directly, and turns to Node's streams when a
  // descriptor says "try again". Python sets the descriptors non-blocking before the helper
  // starts, which is what a parent that shares its own non-blocking pipes would hand over.
  const nonBlocking = (fd: number) =>
    `import os, sys; os.set_blocking(${fd}, False); os.execvp(sys.argv[1], sys.argv[1:])`;
  // The same for stdout, with the pipe cut to one page (F_SETPIPE_SZ) so that it fills.
  const nonBlockingSmallPipe = `import fcntl; fcntl.fcntl(1, 1031, 4096); ${nonBlocking(1)}`;
  let session: KeyringSession;
  before(async () => {
    session = await startKeyringSession();
  });
  after(async () => {
    await session.close();
  });

  function spawnHelper(python: string, args: string[]) {
    return spawn("python3", ["-c", python, ...helperCommand(), ...args], {
      env: session.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
  }
  const collect = (stream: NodeJS.ReadableStream) =>
    new Promise<string>((resolve) => {
      let text = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (text += chunk));
      stream.on("end", () => resolve(text));
    });
  const exited = (child: ReturnType<typeof spawn>) =>
    new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));

  test("store reads all of a non-blocking stdin that arrives in two parts", async () => {
    const object = JSON.stringify({ token: TOKEN, padding: "p".repeat(5000) });
    const child = spawnHelper(nonBlocking(0), ["store", "slow-stdin.example.com"]);
    const [stdout, stderr] = [collect(child.stdout), collect(child.stderr)];
    child.stdin.write(object.slice(0, 1000));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.stdin.end(object.slice(1000));
    assert.equal(await exited(child), 0, await stderr);
    assert.equal(await stdout, "");
    const result = await runHelper(["get", "slow-stdin.example.com"], { env: session.env });
    assert.equal(result.stdout, `${object}\n`);
  });

  test("get writes all of an object larger than a full non-blocking pipe holds", async () => {
    const token = "t".repeat(MAX_CREDENTIALS_BYTES - JSON.stringify({ token: "" }).length);
    const object = JSON.stringify({ token });
    assert.equal(Buffer.byteLength(object), MAX_CREDENTIALS_BYTES);
    const stored = await runHelper(["store", "big.example.com"], {
      env: session.env,
      stdin: object,
    });
    assertSilentSuccess(stored);
    // A shell pipe (Node's own stdio would be a socket) that is not read for a while, so
    // the helper's write fills it and would block.
    const { stdout } = await execFileAsync(
      "bash",
      [
        "-c",
        `python3 -c "$0" "$@" get big.example.com | { sleep 1; cat; }`,
        nonBlockingSmallPipe,
        ...helperCommand(),
      ],
      { env: session.env, maxBuffer: 1024 * 1024 },
    );
    assert.equal(stdout.length, object.length + 1);
    assert.equal(stdout, `${object}\n`);
  });
});
