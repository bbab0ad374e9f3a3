/**
 * A helper that holds a token leaves no core file and cannot be read by other processes of
 * its user (prctl(PR_SET_DUMPABLE, 0)): checked on the built executable while it waits on
 * stdin in the middle of a store, with half a token already read, and while a get that found
 * an item waits on the Secret Service. A call that holds no token (forget, a get that finds
 * nothing) is left as it was: it pays nothing for protection.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { helperCommand } from "../support/helper-process.ts";
import { startStalledSecretService } from "../support/stalled-secret-service.ts";

const linuxRoot = process.platform === "linux" && process.getuid?.() === 0;
const notHere =
  process.platform !== "linux"
    ? "Linux only (prctl)"
    : linuxRoot
      ? false
      : "needs root, to run the helper as another user and to raise the core limit";

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-core-"));
  chmodSync(dir, 0o777);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Polls `check` until it holds or `ms` pass: readiness, not a fixed sleep. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

describe("a store in progress", { skip: notHere }, () => {
  test("is not dumpable: its /proc files belong to root, not to the user it runs as", async (t) => {
    const dir = tempDir(t);
    const [command, ...rest] = helperCommand();
    const child = spawn(command, [...rest, "store", "core.example.com"], {
      uid: 65534,
      gid: 65534,
      cwd: dir,
      env: { PATH: "/usr/bin:/bin", HOME: dir },
      stdio: ["pipe", "ignore", "ignore"],
    });
    t.after(() => child.kill("SIGKILL"));
    child.stdin.write('{"token":"SECRET-half-');
    const environ = `/proc/${child.pid ?? 0}/environ`;
    const owner = () => {
      try {
        return statSync(environ).uid;
      } catch {
        return -1;
      }
    };
    assert.ok(await until(() => owner() === 0, 10_000), `owner of ${environ}: ${owner()}`);
  });

  test("leaves no core file when it crashes", async (t) => {
    const dir = tempDir(t);
    const [command, ...rest] = helperCommand();
    // The core limit is raised for the helper only, which then runs as another user, so that
    // the moment it becomes non-dumpable shows (its /proc files turn root's). With the
    // default core_pattern ("core"), a core file would land in the working directory.
    const script =
      'ulimit -c unlimited && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"';
    const child = spawn("bash", ["-c", script, "bash", command, ...rest, "store", "c.example"], {
      cwd: dir,
      env: { PATH: "/usr/bin:/bin", HOME: dir },
      stdio: ["pipe", "ignore", "ignore"],
    });
    t.after(() => child.kill("SIGKILL"));
    child.stdin.write('{"token":"SECRET-core-');
    const proc = `/proc/${child.pid ?? 0}`;
    // Root's /proc files mean nothing while bash or setpriv (root, then not yet exec'd) run:
    // only once the helper itself runs (its argv[0]) do they count.
    const protectedNow = () => {
      try {
        const argv0 = readFileSync(`${proc}/cmdline`, "utf8").split("\0")[0];
        return argv0 === command && statSync(`${proc}/environ`).uid === 0;
      } catch {
        return false;
      }
    };
    assert.ok(await until(protectedNow, 10_000), "the helper became non-dumpable");
    const ended = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_code, signal) => resolve(signal)),
    );
    child.kill("SIGSEGV");
    assert.equal(await ended, "SIGSEGV");
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.startsWith("core")),
      [],
      "no core file in the working directory",
    );
  });
});

describe("a protocol call that waits on the Secret Service", { skip: notHere }, () => {
  /**
   * Runs `verb` as another user against a Secret Service whose search finds `items`, until
   * the helper has sent `marker` (a call made only after it has decided on protection), and
   * returns who owns its /proc files then.
   */
  async function ownerWhileWaiting(
    t: TestContext,
    verb: string,
    items: readonly string[],
    marker: string,
  ): Promise<number> {
    const bus = await startStalledSecretService(items);
    t.after(() => bus.close());
    const dir = tempDir(t);
    const [command, ...rest] = helperCommand();
    const child = spawn(command, [...rest, verb, "wait.example.com"], {
      uid: 65534,
      gid: 65534,
      cwd: dir,
      env: { PATH: "/usr/bin:/bin", HOME: dir, DBUS_SESSION_BUS_ADDRESS: bus.address },
      stdio: ["ignore", "ignore", "ignore"],
    });
    t.after(() => child.kill("SIGKILL"));
    await bus.called(marker);
    return statSync(`/proc/${child.pid ?? 0}/environ`).uid;
  }

  const ITEM = "/org/freedesktop/secrets/collection/login/7";

  test("a get that found an item is protected before it asks for the secret", async (t) => {
    assert.equal(await ownerWhileWaiting(t, "get", [ITEM], "GetSecrets"), 0);
  });

  test("a get that finds nothing is left as it was", async (t) => {
    // Whether the collection is locked: asked only once the search has found nothing.
    assert.equal(await ownerWhileWaiting(t, "get", [], "Get:Locked"), 65534);
  });

  test("a forget is left as it was", async (t) => {
    // The found item's attributes: asked once the search has answered.
    assert.equal(await ownerWhileWaiting(t, "forget", [ITEM], "Get:Attributes"), 65534);
  });
});
