/**
 * The terminal side of `npm test` (scripts/test.sh runs it beside the TAP reporter, whose
 * full output goes to a log file): one line per test file, and one per top-level suite named
 * "conformance: STORE › GROUP" (the conformance suite's store and rule group), every failure in full (name,
 * file:line and the error with its diff), a todo as one line without a stack, and each skip
 * reason once. With TFCK_TEST_FAILURES set it also appends the name and place of every failed
 * test to that file, for the summary at the end.
 *   node --test --test-reporter=./scripts/test-reporter.mjs --test-reporter-destination=stdout
 */
import { appendFileSync } from "node:fs";
import path from "node:path";
import type { TestEvent } from "node:test/reporters";
import { inspect } from "node:util";

interface FileTally {
  passed: number;
  failed: number;
  skipped: number;
  todo: number;
  cancelled: number;
  /** What the file printed on stdout and stderr: shown only when the file itself failed. */
  output: string;
  /** The failures, todos and skip reasons, printed under the file's line once it is done. */
  details: string[];
}

type Outcome = Extract<TestEvent, { type: "test:pass" | "test:fail" }>;

const newTally = (): FileTally => ({
  passed: 0,
  failed: 0,
  skipped: 0,
  todo: 0,
  cancelled: 0,
  output: "",
  details: [],
});

/** Node's failure types for a test that did not run to its end because of another one. */
const CANCELLED = new Set(["cancelledByParent"]);

/**
 * The reporter: an async generator over node:test's events, as node --test-reporter takes.
 * (Node passes a second argument, so the failures file cannot be a parameter.)
 */
export default async function* reporter(
  source: AsyncIterable<TestEvent>,
): AsyncGenerator<string, void> {
  const failuresFile = process.env.TFCK_TEST_FAILURES;
  const tallies = new Map<string, FileTally>();
  const tallyOf = (file: string | undefined): FileTally => {
    const key = file ?? "";
    let tally = tallies.get(key);
    if (tally === undefined) {
      tally = newTally();
      tallies.set(key, tally);
    }
    return tally;
  };
  // The names of the tests that enclose the one being reported, by nesting level.
  const ancestors: string[] = [];
  // The test file being run. An event's own `file` is where its test was defined, which for
  // a suite shared by several files (test/support/protocol-suite.ts) is not the file run;
  // scripts/test.sh runs one file at a time, so the file last taken from the queue is it.
  let running: string | undefined;
  const skipReasonsShown = new Set<string>();
  // The counts of each conformance group (a top-level suite of that name), by its name.
  const groups = new Map<string, FileTally>();

  for await (const event of source) {
    switch (event.type) {
      case "test:start":
        ancestors.length = event.data.nesting;
        ancestors.push(event.data.name);
        break;
      case "test:stdout":
      case "test:stderr":
        tallyOf(running ?? event.data.file).output += event.data.message;
        break;
      case "test:pass":
      case "test:fail": {
        const tally = tallyOf(running ?? event.data.file);
        const line = outcome(
          event,
          tally,
          ancestors.slice(0, event.data.nesting),
          skipReasonsShown,
          running,
        );
        if (line !== undefined) tally.details.push(line);
        const group = conformanceGroup(ancestors[0]);
        if (group !== undefined && event.data.nesting > 0) {
          if (!groups.has(group)) groups.set(group, newTally());
          outcome(event, groups.get(group)!, [], new Set(), running);
        }
        if (event.data.nesting === 0 && groups.has(event.data.name)) {
          yield groupLine(event.data.name, groups.get(event.data.name)!);
          groups.delete(event.data.name);
        }
        if (event.type === "test:fail" && isFailure(event) && failuresFile !== undefined) {
          const where = place(event, running);
          appendFileSync(failuresFile, `${testName(event, ancestors)} (${where})\n`);
        }
        // A file that failed by itself (it did not load, or exited early) ends here.
        if (isFileItself(event) && event.type === "test:fail") {
          yield* flush(event.data.file, tallies);
        }
        break;
      }
      case "test:complete":
        // The file as a whole is done: every test in it has been reported. Unless the file
        // failed by itself: then its own failure is still to come.
        if (isFileItself(event) && (event.data.details.passed || onlyItsTestsFailed(event))) {
          yield* flush(event.data.file, tallies);
        }
        break;
      case "test:dequeue":
        if (isFileItself(event)) running = event.data.file;
        break;
      case "test:enqueue":
      case "test:plan":
      case "test:diagnostic":
      case "test:coverage":
      case "test:watch:drained":
        // Nothing to show: scripts/test.sh counts the run's totals from the TAP log.
        break;
    }
  }
  for (const file of tallies.keys()) yield* flush(file, tallies);
}

/** Counts one result in `tally`, and returns what to print about it beyond the count. */
function outcome(
  event: Outcome,
  tally: FileTally,
  ancestors: readonly string[],
  skipReasonsShown: Set<string>,
  running: string | undefined,
): string | undefined {
  const { data } = event;
  const name = testName(event, ancestors);
  if (data.todo !== undefined && data.todo !== false) {
    // A todo is known to be unfinished: one line, never a stack, whether or not it threw.
    tally.todo += 1;
    return `      todo  ${name}${typeof data.todo === "string" ? `: ${data.todo}` : ""}`;
  }
  if (data.skip !== undefined && data.skip !== false) {
    tally.skipped += 1;
    const reason = typeof data.skip === "string" ? data.skip : name;
    if (skipReasonsShown.has(reason)) return undefined;
    skipReasonsShown.add(reason);
    return `      skip  ${reason}`;
  }
  if (event.type === "test:pass") {
    // A suite's or a file's own pass only sums up its tests'.
    if (data.details.type !== "suite" && !isFileItself(event)) tally.passed += 1;
    return undefined;
  }
  // A failure that only sums up failed tests: those are reported themselves.
  if (!isFailure(event)) return undefined;
  const error = event.data.details.error as Error & { failureType?: string };
  if (CANCELLED.has(error.failureType ?? "")) {
    tally.cancelled += 1;
    return `      cancelled  ${name}: ${error.message}`;
  }
  tally.failed += 1;
  const shown = error.failureType === "testCodeFailure" && error.cause ? error.cause : error;
  const body = describeError(shown).replace(/^/gm, "      ");
  const output =
    isFileItself(event) && tally.output !== ""
      ? `\n      its output:\n${tally.output.trimEnd().replace(/^/gm, "      | ")}`
      : "";
  return `\n  ✖ ${name}\n    ${place(event, running)}\n${body}${output}\n`;
}

/** The name of the conformance group a top-level suite is, or undefined. */
function conformanceGroup(name: string | undefined): string | undefined {
  return name?.startsWith("conformance: ") === true ? name : undefined;
}

/** The line of a finished conformance group: its verdict, name and counts. */
function groupLine(name: string, tally: FileTally): string {
  return `${verdictOf(tally)}  ${name}  ${countsOf(tally).join(", ")}\n`;
}

function countsOf(tally: FileTally): string[] {
  const counts = [`${tally.passed} passed`];
  if (tally.failed > 0) counts.push(`${tally.failed} failed`);
  if (tally.skipped > 0) counts.push(`${tally.skipped} skipped`);
  if (tally.todo > 0) counts.push(`${tally.todo} todo`);
  if (tally.cancelled > 0) counts.push(`${tally.cancelled} cancelled`);
  return counts;
}

function verdictOf(tally: FileTally): string {
  return tally.failed + tally.cancelled > 0 ? "FAIL" : "  ok";
}

/** Prints the line of a finished file and what is to be said about its tests. */
function* flush(file: string | undefined, tallies: Map<string, FileTally>): Generator<string> {
  const key = file ?? "";
  const tally = tallies.get(key);
  if (tally === undefined) return;
  tallies.delete(key);
  const counts = countsOf(tally);
  const verdict = verdictOf(tally);
  const shown = file === undefined ? "(outside any file)" : path.relative(process.cwd(), file);
  // Nothing to say about an event outside any file that counted nothing (the run's plan).
  if (file === undefined && counts.length === 1 && tally.passed === 0) return;
  yield `${verdict}  ${shown}  ${counts.join(", ")}\n`;
  for (const detail of tally.details) yield `${detail}\n`;
}

/** The event of the file's own test, which node --test makes around each file. */
function isFileItself(event: { data: { name: string; nesting: number; file?: string } }): boolean {
  return (
    event.data.nesting === 0 && event.data.file !== undefined && event.data.name === event.data.file
  );
}

/** A file or suite whose own code ran well and only some of its tests failed. */
function onlyItsTestsFailed(event: { data: { details: { error?: Error } } }): boolean {
  return (
    (event.data.details.error as { failureType?: string } | undefined)?.failureType ===
    "subtestsFailed"
  );
}

/** A failure of its own: not a todo, and not a suite or file that only sums up its tests. */
function isFailure(event: Extract<TestEvent, { type: "test:fail" }>): boolean {
  const { todo } = event.data;
  return (todo === undefined || todo === false) && !onlyItsTestsFailed(event);
}

/** The test's name after its suites' names; a file's own test is named by its path here. */
function testName(event: Outcome, ancestors: readonly string[]): string {
  const own = isFileItself(event) ? relative(event.data.name) : event.data.name;
  return [...ancestors.slice(0, event.data.nesting), own].join(" › ");
}

/** Where the test is defined, and the file that ran it when that is another one. */
function place(event: Outcome, running: string | undefined): string {
  const { file, line, column } = event.data;
  if (file === undefined) return running === undefined ? "(no file)" : relative(running);
  const defined = line === undefined ? relative(file) : `${relative(file)}:${line}:${column ?? 0}`;
  return running === undefined || running === file
    ? defined
    : `${defined}, run by ${relative(running)}`;
}

function relative(file: string): string {
  return path.relative(process.cwd(), file);
}

/** The error as Node shows it, without the test runner's own stack frames. */
function describeError(error: unknown): string {
  if (typeof error === "string") return error;
  // Trimmed in the stack itself, not in inspect's text: there the last frame's line also
  // opens the list of the error's properties (`... {`).
  if (error instanceof Error && error.stack !== undefined) {
    error.stack = error.stack
      .split("\n")
      .filter((line) => !/^\s+at .*node:internal\//.test(line))
      .join("\n");
  }
  return inspect(error, { depth: 6 });
}
