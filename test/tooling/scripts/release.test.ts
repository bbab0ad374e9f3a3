/**
 * What `npm run release` checks before it builds anything: its --out directory and its tools.
 * Each case ends before the first build (a build takes minutes; the deadline below catches a
 * release that starts one).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test, type TestContext } from "node:test";
import { PATIENCE_MS } from "../../support/timing.ts";

const ROOT = path.resolve(import.meta.dirname, "../../..");

function release(args: readonly string[], env: Record<string, string | undefined> = process.env) {
  return spawnSync(process.execPath, ["--import", "tsx", "scripts/release.ts", ...args], {
    cwd: ROOT,
    env,
    encoding: "utf8",
    timeout: PATIENCE_MS,
  });
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-release-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("npm run release, before it builds", { skip: process.platform === "win32" }, () => {
  test("a non-empty --out that no release wrote is refused in one line and left as it was", (t) => {
    const out = tempDir(t);
    writeFileSync(path.join(out, "notes.txt"), "mine\n");
    const result = release(["--target", "linux-x64", "--out", out, "--quick"]);
    assert.equal(result.status, 1, result.stderr);
    assert.equal(
      result.stderr,
      `release: --out ${out} is not empty and no release wrote it: choose a new or empty directory (nothing was changed)\n`,
    );
    assert.deepEqual(readdirSync(out), ["notes.txt"]);
  });

  test("a directory a release wrote: only what it listed goes", (t) => {
    const out = tempDir(t);
    writeFileSync(path.join(out, ".release-files"), "old.tar.xz\nnpm\n");
    writeFileSync(path.join(out, "old.tar.xz"), "");
    mkdirSync(path.join(out, "npm"));
    writeFileSync(path.join(out, "notes.txt"), "mine\n");
    // An unknown target stops the release right after it made room, before any build.
    const result = release(["--target", "no-such-target", "--out", out]);
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /unknown target no-such-target/);
    assert.deepEqual(readdirSync(out), ["notes.txt"]);
  });

  test("missing zip and advzip are named with their apt packages in one line", (t) => {
    const bin = tempDir(t);
    const out = path.join(tempDir(t), "out");
    const result = release(["--target", "win-x64", "--out", out], { PATH: bin });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(
      result.stderr,
      "release: zip, advzip not found on PATH: sudo apt-get install zip advancecomp\n",
    );
    assert.equal(existsSync(out), false, "nothing was made");
  });
});
