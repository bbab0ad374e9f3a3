import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { writableByOthers } from "../../../src/commands/writable-by-others.ts";

describe("writableByOthers", { skip: process.platform === "win32" }, () => {
  const top = mkdtempSync(path.join(os.tmpdir(), "tfck-writable-"));
  after(() => rmSync(top, { recursive: true, force: true }));
  const uid = statSync(top).uid;
  const dir = (name: string, mode: number) => {
    const made = path.join(top, name);
    mkdirSync(made);
    chmodSync(made, mode);
    return made;
  };

  test("a directory only its owner writes exposes nothing, nor does a missing one below it", () => {
    const safe = dir("safe", 0o755);
    assert.equal(writableByOthers(path.join(safe, "not", "yet"), uid), undefined);
  });

  test("one every user may write is named, with chmod go-w as the fix", () => {
    const open = dir("open", 0o777);
    assert.deepEqual(writableByOthers(path.join(open, "missing"), uid), {
      dir: open,
      why: "writable by every user (mode 0777)",
      fix: `run "chmod go-w ${open}"`,
    });
  });

  test("the sticky bit keeps others from replacing what they do not own", () => {
    assert.equal(writableByOthers(dir("sticky", 0o1777), uid), undefined);
  });

  test("a parent every user may write is named too", () => {
    const parent = dir("parent", 0o777);
    const child = path.join(parent, "child");
    mkdirSync(child, { mode: 0o755 });
    assert.equal(writableByOthers(child, uid)?.dir, parent);
  });

  test(
    "group-writable: named for a shared group, not for the owner's own",
    { skip: uid !== 0 && "needs root to chown" },
    () => {
      const shared = dir("shared", 0o775);
      chownSync(shared, uid, 4242);
      assert.equal(
        writableByOthers(shared, uid)?.why,
        "writable by its group, id 4242 (mode 0775)",
      );
      const own = dir("own", 0o775);
      chownSync(own, 4243, 4243);
      assert.equal(writableByOthers(own, 4243), undefined);
    },
  );

  test(
    "a directory of another user is named, whatever its mode",
    { skip: uid !== 0 && "needs root to chown" },
    () => {
      const theirs = dir("theirs", 0o755);
      chownSync(theirs, 4244, 4244);
      assert.equal(writableByOthers(theirs, 4245)?.why, "owned by user id 4244");
    },
  );

  test("no uid (Windows): nothing to say", () => {
    assert.equal(writableByOthers(dir("any", 0o777), undefined), undefined);
  });
});
