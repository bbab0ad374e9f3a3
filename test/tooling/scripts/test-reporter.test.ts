import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const REPORTER = path.join(ROOT, "scripts/test-reporter.mjs");

/** Files by name, and what they contain: the *.test.mjs among them are run. */
type Files = Readonly<Record<string, string>>;

interface Run {
  /** What the reporter printed, with the temp directory written as <dir>. */
  readonly stdout: string;
  /** The failed tests the reporter named for the summary. */
  readonly failures: string;
  readonly tap: string;
}

/**
 * Runs the files through node --test with the reporter, as scripts/test.sh does: the
 * reporter's events are node's own, not a copy of their shape that could drift.
 */
function runFiles(files: Files): Run {
  const dir = mkdtempSync(path.join(tmpdir(), "tfck-reporter-"));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    const failuresFile = path.join(dir, "failures");
    writeFileSync(failuresFile, "");
    const tapFile = path.join(dir, "log.tap");
    const result = spawnSync(
      process.execPath,
      [
        "--test",
        "--test-concurrency=1",
        `--test-reporter=${REPORTER}`,
        "--test-reporter-destination=stdout",
        "--test-reporter=tap",
        `--test-reporter-destination=${tapFile}`,
        ...Object.keys(files)
          .filter((name) => name.endsWith(".test.mjs"))
          .map((name) => path.join(dir, name)),
      ],
      // The reporter names files relative to the working directory, as test.sh runs it.
      { cwd: dir, encoding: "utf8", env: childEnv(failuresFile) },
    );
    assert.equal(result.stderr, "");
    return {
      stdout: result.stdout.replaceAll(dir, "<dir>"),
      failures: readFileSync(failuresFile, "utf8").replaceAll(dir, "<dir>"),
      tap: readFileSync(tapFile, "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * This process's environment without NODE_TEST_CONTEXT, which would make the child a part of
 * this run rather than a run of its own.
 */
function childEnv(failuresFile: string): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  return { ...env, TFCK_TEST_FAILURES: failuresFile };
}

const HEADER =
  'import assert from "node:assert/strict";\nimport { describe, test } from "node:test";\n';

describe("the test reporter of npm test", () => {
  test("a file whose tests pass is one line with its counts", () => {
    const run = runFiles({
      "good.test.mjs": `${HEADER}test("one", () => {});\ntest("two", () => {});\n`,
    });
    assert.equal(run.stdout, "  ok  good.test.mjs  2 passed\n");
    assert.equal(run.failures, "");
  });

  test("each conformance group (a top-level suite of that name) is a line of its own before its file's", () => {
    const run = runFiles({
      "conformance.test.mjs": `${HEADER}describe("conformance: pass › get", () => {\n  test("a", () => {});\n  test("b", () => {});\n});\ndescribe("conformance: pass › forget", () => {\n  test("c", () => assert.equal(1, 2));\n});\ndescribe("other", () => {\n  test("d", () => {});\n});\n`,
    });
    const lines = run.stdout.split("\n").filter((line) => /^( {2}ok|FAIL) /.test(line));
    assert.deepEqual(lines, [
      "  ok  conformance: pass › get  2 passed",
      "FAIL  conformance: pass › forget  0 passed, 1 failed",
      "FAIL  conformance.test.mjs  3 passed, 1 failed",
    ]);
  });

  test("a failed test is printed in full: its suite and name, its place and the diff", () => {
    const run = runFiles({
      "bad.test.mjs": `${HEADER}describe("a suite", () => {\n  test("compares", async () => {\n    await null;\n    assert.deepEqual({ token: "one" }, { token: "two" });\n  });\n  test("passes", () => {});\n});\n`,
    });
    const lines = run.stdout.split("\n");
    assert.equal(lines[0], "FAIL  bad.test.mjs  1 passed, 1 failed");
    assert.match(run.stdout, /^ {2}✖ a suite › compares\n {4}bad\.test\.mjs:4:3\n/m);
    assert.match(
      run.stdout,
      /AssertionError \[ERR_ASSERTION\]: Expected values to be strictly deep-equal/,
    );
    assert.match(run.stdout, /^ {6}[+-] {3}token: 'one'/m);
    assert.doesNotMatch(run.stdout, /node:internal/);
    // The error's properties, in the braces inspect opens after its stack.
    assert.match(run.stdout, /\) \{\n {8}generatedMessage: true,$/m);
    assert.equal(run.failures, "a suite › compares (bad.test.mjs:4:3)\n");
    // The log keeps everything, passing tests included.
    assert.match(run.tap, /^ {4}ok 2 - passes$/m);
  });

  test("a todo that throws is one line, with no stack and no AssertionError, and no failure", () => {
    const run = runFiles({
      "todo.test.mjs": `${HEADER}test("later", { todo: "not built yet" }, () => {\n  assert.equal(1, 2);\n});\ntest("now", () => {});\n`,
    });
    assert.equal(
      run.stdout,
      "  ok  todo.test.mjs  1 passed, 1 todo\n      todo  later: not built yet\n",
    );
    assert.equal(run.failures, "");
  });

  test("a file that fails to load is a failure that shows what the file printed", () => {
    const run = runFiles({
      "broken.test.mjs": 'throw new Error("cannot load the fixture");\n',
    });
    assert.match(run.stdout, /^FAIL {2}broken\.test\.mjs {2}0 passed, 1 failed\n/);
    assert.match(run.stdout, /^ {6}\| Error: cannot load the fixture$/m);
    assert.match(run.stdout, /^ {2}✖ broken\.test\.mjs\n {4}broken\.test\.mjs:1:1\n/m);
    assert.equal(run.failures, "broken.test.mjs (broken.test.mjs:1:1)\n");
  });

  test("a suite shared by two files is counted for the file that ran it, and its failures say both", () => {
    const shared = `${HEADER}export function sharedSuite(fails) {\n  describe("shared", () => {\n    test("agrees", () => assert.equal(fails, false));\n  });\n}\n`;
    const run = runFiles({
      "shared.mjs": shared,
      "first.test.mjs": 'import { sharedSuite } from "./shared.mjs";\nsharedSuite(false);\n',
      "second.test.mjs": 'import { sharedSuite } from "./shared.mjs";\nsharedSuite(true);\n',
    });
    const lines = run.stdout.split("\n");
    assert.equal(lines[0], "  ok  first.test.mjs  1 passed");
    assert.equal(lines[1], "FAIL  second.test.mjs  0 passed, 1 failed");
    assert.match(run.stdout, /^ {4}shared\.mjs:5:5, run by second\.test\.mjs$/m);
    assert.equal(run.failures, "shared › agrees (shared.mjs:5:5, run by second.test.mjs)\n");
  });

  test("a skip reason is printed once, however many files and tests give it", () => {
    const skipped = `${HEADER}test("needs it", { skip: "SKIP: no wine here" }, () => {});\n`;
    const run = runFiles({ "a.test.mjs": skipped, "b.test.mjs": skipped });
    assert.equal(
      run.stdout,
      [
        "  ok  a.test.mjs  0 passed, 1 skipped",
        "      skip  SKIP: no wine here",
        "  ok  b.test.mjs  0 passed, 1 skipped",
        "",
      ].join("\n"),
    );
  });
});
