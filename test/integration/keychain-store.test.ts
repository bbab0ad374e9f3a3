/**
 * The Secret Service store of the built executable against real providers: the items it
 * writes and reads (including the landed version's), other programs' items beside ours,
 * and every way the Secret Service can fail, each named the same way by every command.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { symlinkSync, unlinkSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { MAX_CREDENTIALS_BYTES } from "../../src/protocol/credentials-object.ts";
import { helperCommand, runHelper, type HelperResult } from "../support/helper-process.ts";
import { startKeePassXcSession } from "../support/keepassxc-session.ts";
import { startKeyringSession, type KeyringSession } from "../support/keyring-session.ts";
import { assertOneLineFailure, assertSilentSuccess } from "../support/protocol-suite.ts";
import { SECRET_SERVICE_PROVIDERS } from "../support/secret-service-providers.ts";
import { addItem, countItems } from "../support/secret-service-items.ts";
import { createSecretServiceStore } from "../../src/stores/secret-service/store.ts";
import { deadlineIn } from "../../src/system/deadline.ts";
import { normalizeHostname } from "../../src/protocol/hostname.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { PATIENCE_MS, PROMPT_MS } from "../support/timing.ts";

const ONLY_ON_LINUX = linuxOnly("the Secret Service store suite");

const execFileAsync = promisify(execFile);
const TOKEN = "SECRET-layout-token-0123456789";
const SERVICE = "terraform-credentials";

describe("keychain entries as other programs see them", { skip: ONLY_ON_LINUX }, () => {
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
    assert.match(attributes, /attribute\.username = layout\.example\.com/);
    assert.match(attributes, /attribute\.service = layout/);
    assert.doesNotMatch(attributes, new RegExp(TOKEN));
    assert.equal(attributes.match(/^attribute\.service = /gm)?.length, 1, "exactly one item");
  });
});

describe("hostnames as the built executable's ICU maps them", { skip: ONLY_ON_LINUX }, () => {
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

/**
 * Writes an item the way the landed version (0.1, through @napi-rs/keyring) did: the same
 * binding, called the same way, from a Node process of its own.
 */
async function storeAsLandedVersion(env: Record<string, string>, host: string, object: string) {
  const script = `
    const { AsyncEntry } = require("@napi-rs/keyring");
    const entry = new AsyncEntry(${JSON.stringify(SERVICE)}, ${JSON.stringify(host)}, { linux: { store: "secret-service" } });
    entry.setSecret(Buffer.from(${JSON.stringify(object)}, "utf8")).then(() => process.exit(0), (e) => { console.error(String(e)); process.exit(1); });`;
  await execFileAsync("node", ["-e", script], {
    env,
    cwd: path.resolve(import.meta.dirname, "../.."),
  });
}

async function readAsLandedVersion(env: Record<string, string>, host: string): Promise<string> {
  const script = `
    const { AsyncEntry } = require("@napi-rs/keyring");
    const entry = new AsyncEntry(${JSON.stringify(SERVICE)}, ${JSON.stringify(host)}, { linux: { store: "secret-service" } });
    entry.getSecret().then((bytes) => { process.stdout.write(Buffer.from(bytes ?? []).toString("utf8")); process.exit(0); }, (e) => { console.error(String(e)); process.exit(1); });`;
  const { stdout } = await execFileAsync("node", ["-e", script], {
    env,
    cwd: path.resolve(import.meta.dirname, "../.."),
  });
  return stdout;
}

for (const provider of SECRET_SERVICE_PROVIDERS) {
  const helper = (session: KeyringSession, args: string[], stdin?: string) =>
    runHelper(args, {
      env: session.env,
      timeoutMs: PATIENCE_MS,
      ...(stdin === undefined ? {} : { stdin }),
    });

  describe(
    `items of the landed version and of other programs (${provider.name})`,
    { skip: ONLY_ON_LINUX },
    () => {
      let session: KeyringSession;
      before(async () => {
        session = await provider.start();
      });
      after(async () => {
        await session.close();
      });

      test("items the landed version wrote are read, listed, replaced and forgotten; the landed version reads ours", async () => {
        const host = "landed.example.com";
        await storeAsLandedVersion(session.env, host, '{"token":"SECRET-landed"}');
        const got = await helper(session, ["get", host]);
        assert.equal(got.code, 0, got.stderr);
        assert.equal(got.stdout, '{"token":"SECRET-landed"}\n');
        assert.equal(got.stderr, "");
        assert.match((await helper(session, ["list"])).stdout, /^landed\.example\.com$/m);
        assertSilentSuccess(await helper(session, ["store", host], '{"token":"SECRET-newer"}'));
        assert.equal(await readAsLandedVersion(session.env, host), '{"token":"SECRET-newer"}');
        assertSilentSuccess(await helper(session, ["forget", host]));
        assert.equal((await helper(session, ["get", host])).stdout, "{}\n");
      });

      test("an item of ours wins over another program's with extra attributes, for get and exec", async () => {
        const host = "mixed.example.com";
        await addItem(
          session.env,
          { service: SERVICE, username: host, origin: "other" },
          "not json",
        );
        assertSilentSuccess(await helper(session, ["store", host], '{"token":"SECRET-ours"}'));
        const got = await helper(session, ["get", host]);
        assert.equal(got.code, 0, got.stderr);
        assert.equal(got.stdout, '{"token":"SECRET-ours"}\n');
        assert.equal(got.stderr, "");
        const exec = await helper(session, [
          "exec",
          "--",
          "sh",
          "-c",
          'test -n "$TF_TOKEN_mixed_example_com"',
        ]);
        assert.equal(exec.code, 0, `exec dropped the host: ${exec.stderr}`);
        // Silent, as the protocol wants of every forget that worked.
        assertSilentSuccess(await helper(session, ["forget", host]));
      });

      test("several items of ours: get takes the first in sorted order and says so; forget removes them all", async () => {
        const host = "dup.example.com";
        for (const token of ["SECRET-b", "SECRET-a", "SECRET-c"]) {
          await addItem(session.env, { service: SERVICE, username: host }, `{"token":"${token}"}`);
        }
        const first = await helper(session, ["get", host]);
        assert.equal(first.code, 0, first.stderr);
        assert.equal(first.stdout, '{"token":"SECRET-a"}\n');
        assert.match(first.stderr, /^warning: 3 keychain items match dup\.example\.com.*\n$/);
        assert.doesNotMatch(first.stderr, /SECRET/);
        const refused = await helper(session, ["store", host], '{"token":"SECRET-new"}');
        assertOneLineFailure(refused);
        assert.match(
          refused.stderr,
          /nothing was stored; run "[^"]* forget dup\.example\.com" \(removes every item/,
        );
        assert.equal(
          (await helper(session, ["get", host])).stdout,
          first.stdout,
          "all still there",
        );
        assertSilentSuccess(await helper(session, ["forget", host]));
        const after = await helper(session, ["get", host]);
        assert.equal(after.stdout, "{}\n");
      });

      test("store writes its own item beside another program's, which it never overwrites", async () => {
        const host = "foreign.example.com";
        await addItem(session.env, { service: SERVICE, username: host, origin: "other" }, "theirs");
        // Read as the only candidate, it is not JSON: a clear error that does not show it.
        const before = await helper(session, ["get", host]);
        assertOneLineFailure(before);
        assert.match(before.stderr, /foreign\.example\.com/);
        assert.doesNotMatch(before.stderr, /theirs/);
        assertSilentSuccess(await helper(session, ["store", host], '{"token":"SECRET-mine"}'));
        assertSilentSuccess(await helper(session, ["store", host], '{"token":"SECRET-mine-2"}'));
        assert.equal((await helper(session, ["get", host])).stdout, '{"token":"SECRET-mine-2"}\n');
        assert.equal(await countItems(session.env, { service: SERVICE, username: host }), 2);
        assertSilentSuccess(await helper(session, ["forget", host]));
        assert.equal(await countItems(session.env, { service: SERVICE, username: host }), 0);
      });
    },
  );
}

describe("when the keychain cannot be reached", { skip: ONLY_ON_LINUX }, () => {
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
      assert.ok(get.milliseconds < PROMPT_MS, `took ${get.milliseconds} ms`);
      // Asked for details, the trace names source files and lines (the embedded source map).
      const debug = await runHelper(["get", "example.com"], {
        env: { ...env, TF_CREDENTIALS_KEYCHAIN_DEBUG: "1" },
      });
      assert.match(debug.stderr, /src\/stores\/secret-service\/connection\.ts:\d+:\d+/);
      const store = await runHelper(["store", "example.com"], { env, stdin: bigInput });
      assertOneLineFailure(store);
      assert.ok(store.stdinDrained, "stdin was not read to EOF");
      assert.doesNotMatch(store.stderr, /SECRET-unreachable/);
    } finally {
      await session.close();
    }
  });

  test("without DBUS_SESSION_BUS_ADDRESS, the bus at $XDG_RUNTIME_DIR/bus is used, as libdbus does", async () => {
    const session = await startKeyringSession();
    const env: Record<string, string> = { ...session.env };
    delete env.DBUS_SESSION_BUS_ADDRESS;
    const socket = /unix:path=([^,;]+)/.exec(session.env.DBUS_SESSION_BUS_ADDRESS!)![1]!;
    const runtimeBus = path.join(env.XDG_RUNTIME_DIR!, "bus");
    symlinkSync(socket, runtimeBus);
    try {
      assertSilentSuccess(
        await runHelper(["store", "xdg.example.com"], { env, stdin: '{"token":"x"}' }),
      );
      assert.equal(
        (await runHelper(["get", "xdg.example.com"], { env })).stdout,
        '{"token":"x"}\n',
      );
    } finally {
      unlinkSync(runtimeBus);
      await session.close();
    }
  });

  test("a bus on an abstract socket (unix:abstract=) is reached", async () => {
    const session = await startKeyringSession({ abstractBus: true });
    try {
      assert.match(session.env.DBUS_SESSION_BUS_ADDRESS!, /^unix:abstract=/);
      assertSilentSuccess(
        await runHelper(["store", "abstract.example.com"], {
          env: session.env,
          stdin: '{"token":"a"}',
        }),
      );
      const got = await runHelper(["get", "abstract.example.com"], { env: session.env });
      assert.equal(got.stdout, '{"token":"a"}\n', got.stderr);
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
        assert.ok(result.milliseconds < PROMPT_MS, `took ${result.milliseconds} ms`);
        assert.ok(result.stdinDrained);
      }
    } finally {
      await session.close();
    }
  });

  test("a bus with no Secret Service says so, the same way for get, store, list and doctor", async () => {
    const session = await startKeyringSession({ secretService: false });
    try {
      const store = await runHelper(["store", "example.com"], {
        env: session.env,
        stdin: '{"token":"SECRET-nowhere"}',
      });
      assertOneLineFailure(store);
      assert.match(store.stderr, /no Secret Service on the D-Bus session bus/);
      assert.doesNotMatch(store.stderr, /SECRET-nowhere/);
      const get = await runHelper(["get", "example.com"], { env: session.env });
      assertOneLineFailure(get);
      assert.match(get.stderr, /no Secret Service on the D-Bus session bus/);
      assert.ok(get.milliseconds < PROMPT_MS, `took ${get.milliseconds} ms`);
      const list = await runHelper(["list"], { env: session.env });
      assertOneLineFailure(list);
      assert.match(list.stderr, /no Secret Service on the D-Bus session bus/);
      const doctor = await runHelper(["doctor"], { env: session.env });
      assert.notEqual(doctor.code, 0);
      assert.match(doctor.stdout, /no Secret Service on the session bus/);
    } finally {
      await session.close();
    }
  });

  /** store names the missing default collection, get prints {} and warns, doctor agrees. */
  async function assertNoDefaultCollection(env: Record<string, string>) {
    const store = await runHelper(["store", "nodefault.example.com"], {
      env,
      stdin: '{"token":"SECRET-x"}',
    });
    assertOneLineFailure(store);
    assert.match(store.stderr, /has no default collection/);
    assert.doesNotMatch(store.stderr, /SECRET-x/);
    assert.ok(store.milliseconds < PROMPT_MS, `store took ${store.milliseconds} ms`);
    const get = await runHelper(["get", "nodefault.example.com"], { env });
    assert.equal(get.code, 0, get.stderr);
    assert.equal(get.stdout, "{}\n");
    assert.match(get.stderr, /^warning: the keyring has no default collection/);
    const doctor = await runHelper(["doctor"], { env });
    assert.notEqual(doctor.code, 0);
    assert.match(doctor.stdout, /has no default collection/);
  }

  test("no default collection (dbus-run-session with a bare gnome-keyring): store names it, get warns, doctor agrees", async () => {
    const session = await startKeyringSession({ loginKeyring: false });
    try {
      await assertNoDefaultCollection(session.env);
    } finally {
      await session.close();
    }
  });

  test("no default collection (KeePassXC whose database exposes no group): store names it, get warns, doctor agrees", async () => {
    const session = await startKeePassXcSession({ exposed: false });
    try {
      await assertNoDefaultCollection(session.env);
    } finally {
      await session.close();
    }
  });

  test("a Secret Service that hangs: every call ends with one line at --timeout, not by a signal", async () => {
    const session = await startKeyringSession();
    try {
      assertSilentSuccess(
        await runHelper(["store", "hung.example.com"], {
          env: session.env,
          stdin: '{"token":"x"}',
        }),
      );
      session.signalService("SIGSTOP");
      const results = await Promise.all([
        ...Array.from({ length: 4 }, () =>
          runHelper(["--timeout", "2", "get", "hung.example.com"], {
            env: session.env,
            timeoutMs: PATIENCE_MS,
          }),
        ),
        runHelper(["--timeout", "2", "store", "hung.example.com"], {
          env: session.env,
          stdin: '{"token":"SECRET-hung"}',
          timeoutMs: PATIENCE_MS,
        }),
        runHelper(["--timeout", "2", "forget", "hung.example.com"], {
          env: session.env,
          timeoutMs: PATIENCE_MS,
        }),
        runHelper(["list"], {
          env: { ...session.env, TF_CREDENTIALS_KEYCHAIN_TIMEOUT: "2" },
          timeoutMs: PATIENCE_MS,
        }),
      ]);
      // The store and the forget (results 4 and 5) take turns on the host: the one that waits
      // may end waiting for the other, which waits on the service.
      const TURN = /another helper has been storing or forgetting this host for 2 s/;
      const [store, forget] = [results[4]?.stderr ?? "", results[5]?.stderr ?? ""];
      assert.ok(!(TURN.test(store) && TURN.test(forget)), `${store}${forget}`);
      for (const [index, result] of results.entries()) {
        assert.equal(result.code, 1, `ended by a signal or hung: ${result.stderr}`);
        assertOneLineFailure(result);
        const tookTurns = (index === 4 || index === 5) && TURN.test(result.stderr);
        if (!tookTurns) assert.match(result.stderr, /did not answer .* within 2 s/);
        assert.doesNotMatch(result.stderr, /SECRET/);
        assert.ok(result.milliseconds < PROMPT_MS, `took ${result.milliseconds} ms`);
      }
      const doctor = await runHelper(["doctor"], { env: session.env });
      assert.match(doctor.stdout, /did not answer/);
    } finally {
      session.signalService("SIGCONT");
      await session.close();
    }
  });

  test("a Secret Service killed mid-way: one line or a fresh start, never a hang", async () => {
    const session = await startKeyringSession();
    try {
      assertSilentSuccess(
        await runHelper(["store", "killed.example.com"], {
          env: session.env,
          stdin: '{"token":"x"}',
        }),
      );
      session.signalService("SIGKILL");
      const get = await runHelper(["--timeout", "5", "get", "killed.example.com"], {
        env: session.env,
        timeoutMs: PATIENCE_MS,
      });
      // The bus may start a new gnome-keyring (locked, with no one to unlock it) or find none.
      assert.ok(get.code === 0 || get.code === 1, `code ${get.code}`);
      if (get.code === 1) assertOneLineFailure(get);
      assert.ok(get.milliseconds < PROMPT_MS, `took ${get.milliseconds} ms`);
    } finally {
      await session.close();
    }
  });
});

for (const provider of SECRET_SERVICE_PROVIDERS) {
  test(`a locked collection (${provider.name}): store and get refused at once with no desktop, and what was stored survives`, async () => {
    const session = await provider.start();
    try {
      assertSilentSuccess(
        await runHelper(["store", "locked.example.com"], {
          env: session.env,
          stdin: '{"token":"kept"}',
        }),
      );
      await session.lockCollection();
      const store = await runHelper(["store", "new-in-locked.example.com"], {
        env: session.env,
        stdin: '{"token":"SECRET-new"}',
      });
      const get = await runHelper(["get", "locked.example.com"], { env: session.env });
      for (const result of [store, get] satisfies HelperResult[]) {
        assert.ok(result.milliseconds < PROMPT_MS, `took ${result.milliseconds} ms`);
        assert.doesNotMatch(result.stderr, /SECRET|kept/);
      }
      // get too: KeePassXC hides a locked database's items, which is no "nothing stored".
      for (const result of [store, get]) {
        assertOneLineFailure(result);
        assert.match(result.stderr, /locked/);
      }
      const doctor = await runHelper(["doctor"], { env: session.env });
      assert.notEqual(doctor.code, 0);
      assert.match(doctor.stdout, /locked/);
    } finally {
      await session.close();
    }
  });
}

describe("the standard streams of the single executable", { skip: ONLY_ON_LINUX }, () => {
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

  test("leaves the pipes it writes to blocking, as it found them: other writers share them", async () => {
    // The flag belongs to the pipe's open description, which the parent and every later
    // command writing to the same pipe share (a CI job's log, `2>&1 | tee`): left
    // non-blocking, their writes fail with EAGAIN when the reader is slow.
    const python = [
      "import fcntl, os, subprocess, sys",
      "out, err = os.pipe()[1], os.pipe()[1]",
      'for args in (["get", "blocking.example.com"], ["get", "bad host"], ["--version"]):',
      "    subprocess.run(sys.argv[1:] + args, stdin=subprocess.DEVNULL, stdout=out, stderr=err)",
      'for name, fd in (("stdout", out), ("stderr", err)):',
      '    print(name, "non-blocking" if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK else "blocking")',
    ].join("\n");
    const { stdout } = await execFileAsync("python3", ["-c", python, ...helperCommand()], {
      env: session.env,
    });
    assert.equal(stdout, "stdout blocking\nstderr blocking\n");
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

describe("one process, several calls (import, exec)", { skip: ONLY_ON_LINUX }, () => {
  test("two stores of one host in a row take their turns without waiting for the deadline", async () => {
    const session = await startKeyringSession();
    const store = createSecretServiceStore({
      service: SERVICE,
      env: session.env,
      // Far beyond PROMPT_MS, so that a wait for it shows.
      deadline: deadlineIn(60),
      warn: () => {},
    });
    try {
      const host = normalizeHostname("twice.example.com");
      const started = performance.now();
      await store.store(host, '{"token":"first"}');
      await store.store(host, '{"token":"second"}');
      assert.ok(performance.now() - started < PROMPT_MS, `took ${performance.now() - started} ms`);
      assert.equal(await store.get(host), '{"token":"second"}');
      // Another process's store of the same host is not held up by ours either.
      const other = await runHelper(["store", "twice.example.com"], {
        env: session.env,
        stdin: '{"token":"third"}',
      });
      assertSilentSuccess(other);
      assert.ok(other.milliseconds < PROMPT_MS, `took ${other.milliseconds} ms`);
    } finally {
      store.close();
      await session.close();
    }
  });
});

describe("exec and a token no environment variable can carry", { skip: ONLY_ON_LINUX }, () => {
  test("a token with a NUL character is left out with one warning naming its host, never the token", async () => {
    const session = await startKeyringSession();
    try {
      assertSilentSuccess(
        await runHelper(["store", "nul.example.com"], {
          env: session.env,
          stdin: '{"token":"SECRET-A\\u0000B"}',
        }),
      );
      assertSilentSuccess(
        await runHelper(["store", "fine.example.com"], {
          env: session.env,
          stdin: '{"token":"ok"}',
        }),
      );
      const exec = await runHelper(
        ["exec", "--", "sh", "-c", 'test "$TF_TOKEN_fine_example_com" = ok'],
        { env: session.env },
      );
      assert.equal(exec.code, 0, exec.stderr);
      assert.match(
        exec.stderr,
        /^warning: left out: the token stored for nul\.example\.com holds a NUL character[^\n]*\n$/,
      );
      assert.doesNotMatch(exec.stderr, /SECRET/);
      const named = await runHelper(["exec", "--host", "nul.example.com", "--", "true"], {
        env: session.env,
      });
      assertOneLineFailure(named);
      assert.match(named.stderr, /nul\.example\.com holds a NUL character/);
      assert.doesNotMatch(named.stderr, /SECRET/);
    } finally {
      await session.close();
    }
  });
});
