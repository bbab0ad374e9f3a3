/**
 * A reader that goes away (`helper get HOST | head -c0`, `doctor | head -1`) must not make
 * the helper print a stack trace: it stops quietly with a non-zero code, as other Unix
 * tools do. Nor must a stdout that takes no byte (a full disk): one line on stderr, exit 1.
 */
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { helperCommand, runHelper } from "../support/helper-process.ts";
import { startKeyringSession, type KeyringSession } from "../support/keyring-session.ts";
import { assertSilentSuccess } from "../support/protocol-suite.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { PATIENCE_MS } from "../support/timing.ts";

// A reader gone from a pipe, and /dev/full: Unix, tested against gnome-keyring.
const ONLY_ON_LINUX = linuxOnly("the broken-pipe suite");

const execFileAsync = promisify(execFile);

describe("stdout into a pipe whose reader has gone", { skip: ONLY_ON_LINUX }, () => {
  let session: KeyringSession;
  before(async () => {
    session = await startKeyringSession();
    assertSilentSuccess(
      await runHelper(["store", "pipe.example.com"], {
        env: session.env,
        stdin: `{"token":"SECRET-pipe","pad":"${"x".repeat(200_000 / 4)}"}`,
      }),
    );
  });
  after(async () => {
    await session.close();
  });

  for (const args of [["get", "pipe.example.com"], ["list"], ["doctor"]]) {
    test(`${args[0]}: no stack trace, exit 1 or 141`, async () => {
      // The reader exits at once; the helper starts writing only after it is gone.
      const script = '{ sleep 0.3; "$@"; echo "exit=$?" >&2; } | head -c0';
      const { stderr } = await execFileAsync(
        "bash",
        ["-c", script, "bash", ...helperCommand(), ...args],
        { env: session.env },
      );
      const match = /exit=(\d+)\n$/.exec(stderr);
      assert.ok(match, stderr);
      assert.ok(["1", "141"].includes(match[1] ?? ""), stderr);
      assert.doesNotMatch(stderr, /EPIPE|Unhandled|^\s+at /m);
    });
  }
});

/**
 * A device that takes no byte, made here with mknod (never the machine's own /dev/full):
 * every write to it fails with ENOSPC.
 */
function fullDevice(): { path: string; remove(): void } | string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-full-"));
  const device = path.join(dir, "full");
  const made = spawnSync("mknod", [device, "c", "1", "7"], { encoding: "utf8" });
  if (made.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `mknod is not permitted here (${made.stderr.trim()})`;
  }
  return { path: device, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe("stdout on a device that is full", { skip: ONLY_ON_LINUX }, () => {
  let session: KeyringSession;
  before(async () => {
    session = await startKeyringSession();
    assertSilentSuccess(
      await runHelper(["store", "full.example.com"], {
        env: session.env,
        stdin: '{"token":"SECRET-full"}',
      }),
    );
  });
  after(async () => {
    await session.close();
  });

  for (const args of [
    ["get", "full.example.com"],
    ["list"],
    ["doctor"],
    ["--help"],
    ["--version"],
  ]) {
    test(`${args.join(" ")}: one line on stderr and exit 1, no stack trace`, (t) => {
      const device = fullDevice();
      if (typeof device === "string") {
        t.skip(device);
        return;
      }
      try {
        const [command, ...prefix] = helperCommand();
        const fd = openSync(device.path, "w");
        const result = spawnSync(command, [...prefix, ...args], {
          env: session.env,
          stdio: ["ignore", fd, "pipe"],
          encoding: "utf8",
          timeout: PATIENCE_MS,
        });
        closeSync(fd);
        assert.equal(result.status, 1, result.stderr);
        assert.equal(
          result.stderr,
          "could not write to standard output: no space left on the device (ENOSPC)\n",
        );
      } finally {
        device.remove();
      }
    });
  }
});
