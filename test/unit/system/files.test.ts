import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { CliError } from "../../../src/errors.ts";
import {
  FileChanged,
  readTextIfExists,
  stageFile,
  stageReplacement,
  writeFileAtomically,
} from "../../../src/system/files.ts";
import { smallDisk } from "../../support/small-disk.ts";

const posix = process.platform !== "win32";

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-files-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A special file made here (never the machine's own /dev/null), or a skip reason. */
function make(t: TestContext, command: string, args: string[]): boolean {
  const made = spawnSync(command, args, { encoding: "utf8" });
  if (made.status === 0) return true;
  t.skip(`${command} is not permitted here (${made.stderr.trim()})`);
  return false;
}

describe("writeFileAtomically", () => {
  test("replaces the file with every byte and the given mode", (t) => {
    const file = path.join(tempDir(t), "config");
    writeFileSync(file, "old");
    const content = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    writeFileAtomically(file, content, 0o600);
    assert.ok(readFileSync(file).equals(content));
    if (posix) assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(path.dirname(file)), ["config"]);
  });

  test("on a full disk: a one-line error naming the file, which keeps every byte", (t) => {
    const disk = smallDisk(t, 256);
    if (disk === undefined) return;
    const file = path.join(disk.dir, ".terraformrc");
    const before = `credentials "app.terraform.io" {\n  token = "KEEP"\n}\n${"# padding\n".repeat(2400)}`;
    writeFileSync(file, before);
    disk.fill(8 * 1024);
    const after = `${before}credentials_helper "keychain" {}\n`;
    assert.throws(
      () => writeFileAtomically(file, after, 0o600),
      (error: unknown) =>
        error instanceof CliError &&
        error.message ===
          `could not write ${file}: no space left on the device (ENOSPC); it was left as it was`,
    );
    assert.equal(readFileSync(file, "utf8"), before);
    assert.deepEqual(
      readdirSync(disk.dir).filter((name) => name.endsWith(".tmp")),
      [],
      "no temp file is left behind",
    );
  });

  test("refuses a character device and leaves it a device", { skip: !posix }, (t) => {
    const device = path.join(tempDir(t), "null");
    if (!make(t, "mknod", [device, "c", "1", "3"])) return;
    assert.throws(
      () => writeFileAtomically(device, "x", 0o600),
      new CliError(
        `${device} is a character device, not a regular file: it was not replaced and is left as it is`,
      ),
    );
    assert.ok(lstatSync(device).isCharacterDevice());
  });

  test("refuses a FIFO, a directory and a symlink", { skip: !posix }, (t) => {
    const dir = tempDir(t);
    const fifo = path.join(dir, "fifo");
    if (!make(t, "mkfifo", [fifo])) return;
    const sub = path.join(dir, "sub");
    mkdirSync(sub);
    const link = path.join(dir, "link");
    writeFileSync(path.join(dir, "real"), "real");
    spawnSync("ln", ["-s", "real", link]);
    for (const [target, kind] of [
      [fifo, "a FIFO"],
      [sub, "a directory"],
      [link, "a symlink"],
    ] as const) {
      assert.throws(
        () => stageFile(target, "x", 0o600),
        (error: unknown) => error instanceof CliError && error.message.includes(` is ${kind}, `),
        target,
      );
    }
    assert.equal(readFileSync(path.join(dir, "real"), "utf8"), "real");
  });

  test("a staged file changes nothing until it is committed, and nothing when discarded", (t) => {
    const file = path.join(tempDir(t), "file");
    writeFileSync(file, "old");
    const staged = stageFile(file, "new", 0o644);
    assert.equal(readFileSync(file, "utf8"), "old");
    staged.discard();
    assert.deepEqual(readdirSync(path.dirname(file)), ["file"]);
    stageFile(file, "new", 0o644).commit();
    assert.equal(readFileSync(file, "utf8"), "new");
  });
});

describe("stageReplacement", () => {
  test("a hard-linked file is written in place: every link sees it, mode kept, no temp file left", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "config");
    const other = path.join(dir, "dotfile");
    writeFileSync(file, "old text, longer than the new one");
    if (posix) chmodSync(file, 0o640);
    linkSync(file, other);
    stageReplacement(file, "new").commit();
    assert.equal(readFileSync(other, "utf8"), "new");
    assert.equal(statSync(file).ino, statSync(other).ino);
    if (posix) assert.equal(statSync(file).mode & 0o777, 0o640);
    assert.deepEqual(readdirSync(dir).sort(), ["config", "dotfile"]);
  });

  test("a file with one link is renamed over, mode kept; a new one gets the mode given", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "config");
    writeFileSync(file, "old");
    if (posix) chmodSync(file, 0o640);
    const inode = statSync(file).ino;
    stageReplacement(file, "new").commit();
    assert.equal(readFileSync(file, "utf8"), "new");
    assert.notEqual(statSync(file).ino, inode);
    if (posix) assert.equal(statSync(file).mode & 0o777, 0o640);
    const fresh = path.join(dir, "fresh");
    stageReplacement(fresh, "x", 0o600).commit();
    if (posix) assert.equal(statSync(fresh).mode & 0o777, 0o600);
  });

  test("a hard-linked file replaced after staging is left alone: FileChanged, nothing written", (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, "config");
    writeFileSync(file, "old");
    linkSync(file, path.join(dir, "dotfile"));
    const staged = stageReplacement(file, "ours");
    writeFileSync(path.join(dir, "theirs"), "theirs");
    renameSync(path.join(dir, "theirs"), file);
    assert.throws(() => staged.commit(), FileChanged);
    assert.equal(readFileSync(file, "utf8"), "theirs");
    assert.deepEqual(readdirSync(dir).sort(), ["config", "dotfile"]);
  });

  test("on a full disk a hard-linked file keeps every byte in every link", (t) => {
    const disk = smallDisk(t, 256);
    if (disk === undefined) return;
    const file = path.join(disk.dir, "credentials.tfrc.json");
    const before = `{"credentials": {"h": {"token": "KEEP"}}}\n${" ".repeat(20_000)}`;
    writeFileSync(file, before);
    linkSync(file, path.join(disk.dir, "dotfile"));
    disk.fill(8 * 1024);
    assert.throws(
      () => stageReplacement(file, `${before} `).commit(),
      (error: unknown) => error instanceof CliError && /no space left/.test(error.message),
    );
    assert.equal(readFileSync(path.join(disk.dir, "dotfile"), "utf8"), before);
    assert.deepEqual(
      readdirSync(disk.dir).filter((name) => name.endsWith(".tmp")),
      [],
    );
  });
});

describe("readTextIfExists", () => {
  test("a missing file is undefined, a regular one its text", (t) => {
    const dir = tempDir(t);
    assert.equal(readTextIfExists(path.join(dir, "none")), undefined);
    writeFileSync(path.join(dir, "file"), "text");
    assert.equal(readTextIfExists(path.join(dir, "file")), "text");
  });

  test("a FIFO with no writer is refused at once instead of blocking", { skip: !posix }, (t) => {
    const fifo = path.join(tempDir(t), "terraformrc");
    if (!make(t, "mkfifo", [fifo])) return;
    assert.throws(
      () => readTextIfExists(fifo),
      new CliError(`${fifo} is a FIFO, not a regular file: it was not read; point it at a file`),
    );
  });

  test("a device and a directory are refused", { skip: !posix }, (t) => {
    const dir = tempDir(t);
    const device = path.join(dir, "zero");
    if (!make(t, "mknod", [device, "c", "1", "5"])) return;
    assert.throws(() => readTextIfExists(device), /is a character device, not a regular file/);
    assert.throws(() => readTextIfExists(dir), /is a directory, not a regular file/);
  });
});
