/**
 * A helper that holds a token leaves no core file and cannot be read by other processes of
 * its user (prctl(PR_SET_DUMPABLE, 0)): checked on the built executable while it waits on
 * stdin in the middle of a store, with half a token already read, and while a get that found
 * an item waits on the Secret Service. A call that holds no token (forget, a get that finds
 * nothing) is left as it was: it pays nothing for protection.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { TestContext } from "node:test";
import { helperCommand } from "../support/helper-process.ts";
import { COLLECTION, startFakeSecretService } from "../support/fake-secret-service.ts";
import { PATIENCE_MS } from "../support/timing.ts";

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

/**
 * The helper's command line for another user (nobody): a checkout under a private directory
 * (what `mktemp -d` makes, or /root) is out of that user's reach, so the built executable is
 * copied once into a directory every user may enter.
 */
let forAnyone: ReturnType<typeof helperCommand> | undefined;
const copies: string[] = [];
after(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});
function helperAnyoneRuns(): ReturnType<typeof helperCommand> {
  if (forAnyone !== undefined) return forAnyone;
  // The executable is the last word (a runner, as qemu, may come first).
  const words = helperCommand();
  const executable = words[words.length - 1] ?? "";
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-core-helper-"));
  chmodSync(dir, 0o755);
  copies.push(dir);
  const copy = path.join(dir, path.basename(executable));
  copyFileSync(executable, copy);
  chmodSync(copy, 0o755);
  const [first, ...rest] = words;
  forAnyone = rest.length === 0 ? [copy] : [first, ...rest.slice(0, -1), copy];
  return forAnyone;
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
    const [command, ...rest] = helperAnyoneRuns();
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
    assert.ok(await until(() => owner() === 0, PATIENCE_MS), `owner of ${environ}: ${owner()}`);
  });

  test("leaves no core file when it crashes", async (t) => {
    const dir = tempDir(t);
    const [command, ...rest] = helperAnyoneRuns();
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
    assert.ok(await until(protectedNow, PATIENCE_MS), "the helper became non-dumpable");
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
  const HOST = "wait.example.com";

  /**
   * Runs `verb` as another user against a Secret Service that holds `items` and never
   * answers the first call named `marker` (a method, or `Get:<property>`), made only after
   * the helper has decided on protection, and returns who owns its /proc files then.
   */
  async function ownerWhileWaiting(
    t: TestContext,
    verb: string,
    items: number,
    marker: string,
  ): Promise<number> {
    let reached: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (reached = resolve));
    const bus = await startFakeSecretService({
      beforeAnswer(call) {
        const property = call.body[1];
        const name =
          call.member === "Get" && typeof property === "string" ? `Get:${property}` : call.member;
        if (name !== marker) return;
        reached();
        return new Promise<void>(() => undefined);
      },
    });
    t.after(() => bus.close());
    for (let i = 1; i <= items; i++) {
      const item = `${COLLECTION}/${i}`;
      const attributes = new Map([
        ["service", "terraform-credentials"],
        ["username", HOST],
      ]);
      bus.items.set(item, { path: item, attributes, secret: new TextEncoder().encode("{}") });
    }
    // The helper runs as another user: it must reach the socket.
    const socket = bus.address.replace(/^unix:path=/, "");
    chmodSync(path.dirname(socket), 0o777);
    chmodSync(socket, 0o777);
    const dir = tempDir(t);
    const [command, ...rest] = helperAnyoneRuns();
    const child = spawn(command, [...rest, verb, HOST], {
      uid: 65534,
      gid: 65534,
      cwd: dir,
      env: { PATH: "/usr/bin:/bin", HOME: dir, DBUS_SESSION_BUS_ADDRESS: bus.address },
      stdio: ["ignore", "ignore", "ignore"],
    });
    t.after(() => child.kill("SIGKILL"));
    const exited = new Promise<string>((resolve) =>
      child.once("exit", (code) => resolve(`the helper exited (${code}) before ${marker}`)),
    );
    const early = await Promise.race([held.then(() => undefined), exited]);
    assert.equal(early, undefined);
    return statSync(`/proc/${child.pid ?? 0}/environ`).uid;
  }

  test("a get that found an item is protected before it asks for the secret", async (t) => {
    assert.equal(await ownerWhileWaiting(t, "get", 1, "GetSecrets"), 0);
  });

  test("a get that finds nothing is left as it was", async (t) => {
    // Whether the collection is locked: asked only once the search has found nothing.
    assert.equal(await ownerWhileWaiting(t, "get", 0, "Get:Locked"), 65534);
  });

  test("a forget is left as it was", async (t) => {
    // The found item's Delete: asked once the search has answered (a forget reads no
    // attributes).
    assert.equal(await ownerWhileWaiting(t, "forget", 1, "Delete"), 65534);
  });
});
