/**
 * `npm run soak`: how often calls fail against kwalletd5 (KDE Frameworks 5.103) in one
 * private session, for the built helper and, as the anchor, libsecret's `secret-tool`.
 * Stores one object, then runs `get` that many times with a `secret-tool lookup` of the same
 * item after each, then that many pairs of a `store` of a new token (read back with `get`)
 * and a `forget` (checked with a `get` that prints {}) on another host. A measurement, not a
 * test: it prints the failures of each program and exits 0 whatever they were; the last line
 * says how many calls of the helper failed.
 *   npm run soak [-- --gets 2000 --pairs 200]
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  helperCommand,
  requireBuiltHelper,
  runHelper,
  type HelperResult,
} from "../test/support/helper-process.ts";
import type { KeyringSession } from "../test/support/keyring-session.ts";
import { startKWalletSession } from "../test/support/kwallet-session.ts";

const { values } = parseArgs({
  options: { gets: { type: "string", default: "2000" }, pairs: { type: "string", default: "200" } },
});
const gets = count(values.gets, "--gets");
const pairs = count(values.pairs, "--pairs");
const HOST = "soak.example.com";
const PAIR_HOST = "pairs.soak.example.com";
// secret-tool looks up the helper's own item: the attributes it writes (store.ts).
const LOOKUP = ["lookup", "service", "terraform-credentials", "username", HOST];

/** Calls of one program: how many, how long in all, and each distinct failure with its count. */
class Tally {
  calls = 0;
  failures = 0;
  milliseconds = 0;
  readonly lines = new Map<string, number>();

  /** Counts `result` as a success when it exited 0, printed `stdout` and nothing on stderr. */
  add(call: string, result: HelperResult, stdout: string): boolean {
    this.calls++;
    this.milliseconds += result.milliseconds;
    if (result.code === 0 && result.stdout === stdout && result.stderr === "") return true;
    this.failures++;
    const lines = result.stderr.split("\n").filter((line) => line.trim() !== "");
    if (result.code === null) lines.push("(no exit code: killed at the 20 s limit)");
    else if (result.code !== 0 && lines.length === 0)
      lines.push(`(exit ${result.code}, no stderr)`);
    // A wrong answer is worth seeing only in kind: the tokens differ on every call.
    if (result.code === 0 && result.stdout !== stdout) {
      lines.push(result.stdout === "" ? "(exit 0, nothing on stdout)" : "(exit 0, wrong stdout)");
    }
    for (const line of new Set(lines)) {
      const key = `${call}: ${line}`;
      this.lines.set(key, (this.lines.get(key) ?? 0) + 1);
    }
    return false;
  }

  print(name: string): void {
    const each = this.calls === 0 ? 0 : this.milliseconds / this.calls;
    console.log(
      `${name}: ${this.calls} calls, ${this.failures} failed (${each.toFixed(1)} ms per call)`,
    );
    const byCount = [...this.lines].sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
    for (const [line, times] of byCount) console.log(`  ${times}x ${line}`);
  }
}

// A copy of the build, so that an "npm run build" during the run cannot swap the binary
// under measurement (or make a spawn fail with ETXTBSY while it writes).
const built = requireBuiltHelper();
const copyDir = mkdtempSync(path.join(os.tmpdir(), "tfck-soak-"));
const copy = path.join(copyDir, path.basename(built));
copyFileSync(built, copy);
const command = helperCommand().map((word) => (word === built ? copy : word)) as [
  string,
  ...string[],
];

const helper = new Tally();
const secretTool = new Tally();
let session: KeyringSession | undefined;
try {
  session = await startKWalletSession();
  // The helper and secret-tool run in the session's HOME, away from this repository's files.
  const options = { env: session.env, cwd: session.home, command };
  const version = await runHelper(["--version"], options);
  if (version.code !== 0) throw new Error(`${copy} --version failed: ${version.stderr.trim()}`);
  const object = `{"token":"SECRET-soak-${random()}"}`;
  // Counted like any other call, and tried again: without the object there is nothing to soak.
  for (let attempt = 1; ; attempt++) {
    const stored = await runHelper(["store", HOST], { ...options, stdin: object });
    if (helper.add("store", stored, "")) break;
    if (attempt === 3) {
      throw new Error(`the first store failed 3 times; the last: ${stored.stderr.trim()}`);
    }
  }
  console.log(
    `${built} ${version.stdout.trim()} against kwalletd5 in a private session; ${gets} gets each followed by a secret-tool lookup, then ${pairs} store/get/forget/get rounds`,
  );

  for (let i = 0; i < gets; i++) {
    helper.add("get", await runHelper(["get", HOST], options), `${object}\n`);
    // runHelper runs whatever `command` names: here libsecret's CLI, which prints the
    // secret without a newline.
    secretTool.add(
      "lookup",
      await runHelper(LOOKUP, { ...options, command: ["secret-tool"] }),
      object,
    );
  }

  for (let i = 0; i < pairs; i++) {
    const next = `{"token":"SECRET-soak-pair-${i}-${random()}"}`;
    if (
      helper.add("store", await runHelper(["store", PAIR_HOST], { ...options, stdin: next }), "")
    ) {
      helper.add("get after store", await runHelper(["get", PAIR_HOST], options), `${next}\n`);
    }
    helper.add("forget", await runHelper(["forget", PAIR_HOST], options), "");
    helper.add("get after forget", await runHelper(["get", PAIR_HOST], options), "{}\n");
  }
} finally {
  await session?.close();
  rmSync(copyDir, { recursive: true, force: true });
}

helper.print("helper");
secretTool.print("secret-tool");
console.log(`helper failures: ${helper.failures}`);

function count(value: string, option: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${option} takes a whole number, not ${value}`);
  return n;
}

function random(): string {
  return Math.random().toString(36).slice(2);
}
