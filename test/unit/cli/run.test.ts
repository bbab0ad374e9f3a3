import type { Deadline } from "../../../src/system/deadline.ts";
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { GlobalOptions } from "../../../src/commands/options.ts";
import { DEFAULT_SERVICE } from "../../../src/commands/options.ts";
import { run } from "../../../src/cli/run.ts";
import type { Dependencies } from "../../../src/cli/run.ts";
import { CliError, DEBUG_VARIABLE, ExitCode } from "../../../src/errors.ts";
import { MAX_CREDENTIALS_BYTES } from "../../../src/protocol/credentials-object.ts";
import { createFakeIo } from "../../support/fake-io.ts";
import type { FakeIo, FakeIoOptions } from "../../support/fake-io.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import type { MemoryStore } from "../../support/memory-store.ts";
import { PROMPT_MS } from "../../support/timing.ts";

const VERSION = "1.2.3-test";
const HOST = "app.example.com";
const SECRET = "SECRET-abc123";
const TOKEN_OBJECT = `{"token":"${SECRET}"}`;
const UNEXPECTED_SUFFIX = ` (this is a bug; rerun with ${DEBUG_VARIABLE}=1 for details and report it)`;

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly io: FakeIo;
}

/**
 * One memory store per service name, shared by every run of one test, as the keychain is
 * shared by every process. `openStore` records the options it was called with; `open`
 * replaces it for tests of failing stores.
 */
function createHarness() {
  const stores = new Map<string, MemoryStore>();
  const opened: GlobalOptions[] = [];
  const storeFor = (service: string): MemoryStore => {
    let store = stores.get(service);
    if (store === undefined) {
      store = createMemoryStore();
      stores.set(service, store);
    }
    return store;
  };
  /** Each protectSecrets call: whether stdin had been read from by then. */
  const protections: boolean[] = [];
  /** The beforeSecret each openStore was given. */
  const beforeSecrets: (() => Promise<void>)[] = [];
  /** The deadline each openStore was given, if any (else the store starts its own). */
  const deadlines: (Deadline | undefined)[] = [];
  const harness = {
    stores,
    opened,
    protections,
    beforeSecrets,
    deadlines,
    storeFor,
    open: (options: GlobalOptions): MemoryStore | Promise<MemoryStore> => storeFor(options.service),
    async invoke(argv: readonly string[], ioOptions: FakeIoOptions = {}): Promise<Outcome> {
      const io = createFakeIo(ioOptions);
      const deps: Dependencies = {
        version: VERSION,
        openStore(options, _io, beforeSecret, deadline) {
          opened.push(options);
          beforeSecrets.push(beforeSecret);
          deadlines.push(deadline);
          return harness.open(options);
        },
        async protectSecrets() {
          protections.push(io.stdinReadStarted);
        },
      };
      const code = await run(argv, io, deps);
      return { code, stdout: io.stdout.text, stderr: io.stderr.text, io };
    },
  };
  return harness;
}

/** `outcome` printed exactly `stderr` (one line) and nothing on stdout, and exited `code`. */
function assertFailure(outcome: Outcome, code: number, stderr: string | RegExp): void {
  assert.equal(outcome.stdout, "", "nothing on stdout");
  if (typeof stderr === "string") assert.equal(outcome.stderr, stderr);
  else assert.match(outcome.stderr, stderr);
  assertOneLine(outcome.stderr);
  assert.equal(outcome.code, code);
}

/** Exactly one non-empty line, ending in a single "\n". */
function assertOneLine(text: string): void {
  assert.ok(text.length > 1, "an error message is printed");
  assert.ok(text.endsWith("\n"), `ends with a newline: ${JSON.stringify(text)}`);
  assert.ok(!/[\r\n\u2028\u2029]/.test(text.slice(0, -1)), `one line: ${JSON.stringify(text)}`);
}

/** Settles with `promise`, or fails after `ms`: for runs that must not wait on stdin. */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`did not finish within ${ms} ms (waiting on stdin?)`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Splits text into chunks of `size` bytes, like a pipe delivering it in pieces. */
function inChunks(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const chunks: Uint8Array[] = [];
  for (let start = 0; start < bytes.length; start += size)
    chunks.push(bytes.subarray(start, start + size));
  return chunks;
}

describe("get", () => {
  test("with nothing stored prints {} and exits 0", async () => {
    const h = createHarness();
    const outcome = await h.invoke(["get", HOST]);
    assert.deepEqual([outcome.code, outcome.stdout, outcome.stderr], [0, "{}\n", ""]);
    assert.deepEqual(h.opened, [{ service: DEFAULT_SERVICE, backend: "keychain" }]);
  });

  test("prints the stored object exactly as it was sent, with a newline", async () => {
    const h = createHarness();
    const object = '{ "token" : "t", "n": 12345678901234567890, "e": 1.0e+2, "ü": {"z":1,"a":2} }';
    assert.equal((await h.invoke(["store", HOST], { stdin: `\n${object}\n` })).code, 0);
    const outcome = await h.invoke(["get", HOST]);
    assert.deepEqual([outcome.code, outcome.stdout, outcome.stderr], [0, `${object}\n`, ""]);
  });

  test("does not read stdin", async () => {
    const h = createHarness();
    const outcome = await within(PROMPT_MS, h.invoke(["get", HOST], { stdinStaysOpen: true }));
    assert.equal(outcome.code, 0);
    assert.equal(outcome.io.stdinReadStarted, false);
  });

  test("finds what was stored under another spelling of the same host", async () => {
    const h = createHarness();
    await h.invoke(["store", "APP.Example.com:443"], { stdin: TOKEN_OBJECT });
    assert.deepEqual([...h.storeFor(DEFAULT_SERVICE).entries.keys()], [HOST]);
    assert.equal((await h.invoke(["get", HOST])).stdout, `${TOKEN_OBJECT}\n`);
  });

  test("a corrupt stored entry fails with advice, without printing the entry", async () => {
    const h = createHarness();
    h.storeFor(DEFAULT_SERVICE).entries.set(HOST, `{"token":5,"other":"${SECRET}"}`);
    const outcome = await h.invoke(["get", HOST]);
    assertFailure(
      outcome,
      ExitCode.Failure,
      `the stored entry for ${HOST} is not a JSON credentials object; run "terraform logout ${HOST}" (removes the entry through the helper, as tofu logout ${HOST} does for OpenTofu; terraform login ${HOST} then stores a new one)\n`,
    );
    assert.ok(!outcome.stderr.includes(SECRET));
  });
});

describe("store", () => {
  test("from a pipe, the store takes what the read left of the one deadline", async () => {
    const h = createHarness();
    const outcome = await h.invoke(["--timeout", "7", "store", HOST], { stdin: TOKEN_OBJECT });
    assert.equal(outcome.code, 0, outcome.stderr);
    const [deadline] = h.deadlines;
    assert.equal(deadline?.seconds, 7, "the deadline the read started is the store's");
  });

  test("at a terminal, what a person types does not count against the store's time", async () => {
    const h = createHarness();
    await h.invoke(["store", HOST], { stdin: TOKEN_OBJECT, stdinIsTTY: true });
    assert.deepEqual(h.deadlines, [undefined]);
  });

  for (const [what, argv] of [
    ["a store", ["--timeout", "7", "store", HOST]],
    ["a store refused before reading (a bad hostname)", ["--timeout", "7", "store", "bad host"]],
  ] as const) {
    test(`${what} hands the deadline to blocking reads (Windows)`, async () => {
      const h = createHarness();
      const bounds: Array<[number, string]> = [];
      const outcome = await h.invoke(argv, {
        stdin: TOKEN_OBJECT,
        boundStdin: async (seconds, message) => {
          bounds.push([seconds, message]);
        },
      });
      assert.equal(outcome.io.stdinDrained, true);
      assert.deepEqual(bounds, [
        [
          7,
          "the credentials object on stdin did not end within 7 s (Terraform closes it after the object): nothing was stored",
        ],
      ]);
    });
  }

  test("with a valid object prints nothing, exits 0, and reads stdin to EOF", async () => {
    const h = createHarness();
    const outcome = await h.invoke(["store", HOST], { stdin: inChunks(`${TOKEN_OBJECT}\n`, 3) });
    assert.deepEqual([outcome.code, outcome.stdout, outcome.stderr], [0, "", ""]);
    assert.equal(outcome.io.stdinDrained, true);
    assert.deepEqual([...h.storeFor(DEFAULT_SERVICE).entries], [[HOST, TOKEN_OBJECT]]);
  });

  test("replaces what was stored before, extra properties included", async () => {
    const h = createHarness();
    await h.invoke(["store", HOST], { stdin: '{"token":"old","org":"acme"}' });
    await h.invoke(["store", HOST], { stdin: '{"token":"new"}' });
    assert.equal((await h.invoke(["get", HOST])).stdout, '{"token":"new"}\n');
  });

  test("accepts an object of exactly the size cap", async () => {
    const h = createHarness();
    const object = `{"token":"${"a".repeat(MAX_CREDENTIALS_BYTES - '{"token":""}'.length)}"}`;
    assert.equal(Buffer.byteLength(object), MAX_CREDENTIALS_BYTES);
    const outcome = await h.invoke(["store", HOST], { stdin: inChunks(object, 4096) });
    assert.deepEqual([outcome.code, outcome.stdout, outcome.stderr], [0, "", ""]);
    assert.equal(h.storeFor(DEFAULT_SERVICE).entries.get(HOST), object);
  });

  test("refuses an object one byte over the cap and keeps the earlier value", async () => {
    const h = createHarness();
    await h.invoke(["store", HOST], { stdin: '{"token":"earlier"}' });
    const object = `{"token":"${"a".repeat(MAX_CREDENTIALS_BYTES + 1 - '{"token":""}'.length)}"}`;
    const outcome = await h.invoke(["store", HOST], { stdin: inChunks(object, 4096) });
    assertFailure(
      outcome,
      ExitCode.Failure,
      `the credentials object on stdin is larger than ${MAX_CREDENTIALS_BYTES} bytes, where a credentials object takes a few hundred: nothing was stored\n`,
    );
    // Read to EOF all the same: the protocol asks it of every refusal.
    assert.equal(outcome.io.stdinDrained, true);
    assert.equal(h.storeFor(DEFAULT_SERVICE).entries.get(HOST), '{"token":"earlier"}');
  });

  test("refuses bad JSON with exactly one line and keeps the earlier value", async () => {
    const h = createHarness();
    await h.invoke(["store", HOST], { stdin: '{"token":"earlier"}' });
    const outcome = await h.invoke(["store", HOST], { stdin: `{"token":"${SECRET}"}garbage` });
    assertFailure(
      outcome,
      ExitCode.Failure,
      'the credentials object on stdin is not valid JSON: expected one JSON object such as {"token":"..."}\n',
    );
    assert.equal(h.storeFor(DEFAULT_SERVICE).entries.get(HOST), '{"token":"earlier"}');
  });

  test("a failing command with the word store among its arguments does not wait for stdin", async () => {
    const h = createHarness();
    const outcome = await within(
      PROMPT_MS,
      h.invoke(["exec", "--host", "a..b", "--", "grep", "store"], { stdinStaysOpen: true }),
    );
    assert.notEqual(outcome.code, ExitCode.Ok);
    assert.equal(outcome.io.stdinReadStarted, false);
  });

  test("a bad hostname with stdin that never ends: refused at the deadline, not waited on", async () => {
    const h = createHarness();
    const outcome = await within(
      PROMPT_MS,
      h.invoke(["--timeout", "0.2", "store", "a..b"], { stdinStaysOpen: true }),
    );
    assertFailure(outcome, ExitCode.Usage, /^invalid hostname "a\.\.b": /);
    assert.equal(outcome.io.stdinReadStarted, true);
  });

  test("with stdin on a terminal and a bad hostname fails at once, without waiting for stdin", async () => {
    const h = createHarness();
    const outcome = await within(
      PROMPT_MS,
      h.invoke(["store", "a..b"], { stdinIsTTY: true, stdinStaysOpen: true }),
    );
    assertFailure(outcome, ExitCode.Usage, /^invalid hostname "a\.\.b": /);
    assert.equal(outcome.io.stdinReadStarted, false);
  });

  test("with stdin on a terminal and an unknown option fails at once, without waiting for stdin", async () => {
    const h = createHarness();
    const outcome = await within(
      PROMPT_MS,
      h.invoke(["--bogus", "store", HOST], { stdinIsTTY: true, stdinStaysOpen: true }),
    );
    assertFailure(outcome, ExitCode.Usage, 'unknown option "--bogus" (see "--help")\n');
  });
});

describe("forget", () => {
  test("deletes the entry, prints nothing and exits 0; get then prints {}", async () => {
    const h = createHarness();
    await h.invoke(["store", HOST], { stdin: TOKEN_OBJECT });
    const outcome = await h.invoke(["forget", HOST]);
    assert.deepEqual([outcome.code, outcome.stdout, outcome.stderr], [0, "", ""]);
    assert.equal(h.storeFor(DEFAULT_SERVICE).entries.size, 0);
    assert.equal((await h.invoke(["get", HOST])).stdout, "{}\n");
  });

  test("with nothing stored prints nothing and exits 0", async () => {
    const h = createHarness();
    const outcome = await h.invoke(["forget", HOST]);
    assert.deepEqual([outcome.code, outcome.stdout, outcome.stderr], [0, "", ""]);
  });

  test("leaves other hosts alone and does not read stdin", async () => {
    const h = createHarness();
    await h.invoke(["store", "other.example.com"], { stdin: TOKEN_OBJECT });
    const outcome = await within(PROMPT_MS, h.invoke(["forget", HOST], { stdinStaysOpen: true }));
    assert.equal(outcome.code, 0);
    assert.equal(outcome.io.stdinReadStarted, false);
    assert.deepEqual([...h.storeFor(DEFAULT_SERVICE).entries.keys()], ["other.example.com"]);
  });
});

describe("--service", () => {
  test("selects a separate namespace, handed to openStore", async () => {
    const h = createHarness();
    await h.invoke(["store", HOST], { stdin: '{"token":"personal"}' });
    const work = await h.invoke(["--service", "work", "get", HOST]);
    assert.deepEqual([work.code, work.stdout, work.stderr], [0, "{}\n", ""]);
    await h.invoke(["--service=work", "store", HOST], { stdin: '{"token":"work"}' });
    assert.equal((await h.invoke(["--service", "work", "get", HOST])).stdout, '{"token":"work"}\n');
    assert.equal((await h.invoke(["get", HOST])).stdout, '{"token":"personal"}\n');
    assert.deepEqual(
      h.opened.map(({ service }) => service),
      [DEFAULT_SERVICE, "work", "work", "work", DEFAULT_SERVICE],
    );
  });

  test("accepts a name of 64 characters", async () => {
    const h = createHarness();
    const name = `a${"b".repeat(62)}-`;
    assert.equal((await h.invoke(["--service", name, "get", HOST])).code, 0);
    assert.deepEqual(h.opened, [{ service: name, backend: "keychain" }]);
  });

  for (const [what, name] of [
    ["empty", ""],
    ["with a slash", "a/b"],
    ["starting with a dash", "-x"],
    ["of 65 characters", "a".repeat(65)],
    ["with a space", "my work"],
  ] as const) {
    test(`refuses a name ${what} with exit 2 and one line`, async () => {
      const h = createHarness();
      const outcome = await h.invoke(["--service", name, "get", HOST]);
      assertFailure(
        outcome,
        ExitCode.Usage,
        `invalid --service ${JSON.stringify(name)}: use 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit\n`,
      );
      assert.deepEqual(h.opened, []);
    });
  }

  test("without a value is a usage error", async () => {
    const outcome = await createHarness().invoke(["--service"]);
    assertFailure(outcome, ExitCode.Usage, '--service needs a value (see "--help")\n');
  });
});

const unknownCommand = (word: string) =>
  `unknown command ${JSON.stringify(word)}: Terraform runs get, store or forget HOSTNAME; people run install, uninstall, import, list, doctor, sync or exec (see --help)\n`;

const MISSING_COMMAND =
  "missing command: Terraform runs get, store or forget HOSTNAME; people run install, uninstall, import, list, doctor, sync or exec (see --help)\n";

describe("usage errors", () => {
  for (const verb of ["erase", "delete", "add", "bogus"]) {
    test(`unknown verb ${verb} exits 2 with one line naming every command, and opens no store`, async () => {
      const h = createHarness();
      const outcome = await h.invoke([verb, HOST]);
      assertFailure(outcome, ExitCode.Usage, unknownCommand(verb));
      assert.deepEqual(h.opened, []);
    });
  }

  for (const [word, meant] of [
    ["Get", "get"],
    ["GET", "get"],
    ["STORE", "store"],
    ["Forget", "forget"],
  ] as const) {
    test(`${word} exits 2 and points at ${meant}: verbs are case-sensitive`, async () => {
      const h = createHarness();
      const outcome = await h.invoke([word, HOST]);
      assertFailure(
        outcome,
        ExitCode.Usage,
        `unknown command "${word}": did you mean "${meant}"? (commands are case-sensitive)\n`,
      );
      assert.deepEqual(h.opened, []);
    });
  }

  for (const [word, meant] of [
    ["instal", "install"],
    ["lsit", "list"],
    ["uninstal", "uninstall"],
    ["doctr", "doctor"],
    ["forgt", "forget"],
    ["version", "--version"],
  ] as const) {
    test(`the typo ${word} exits 2 with "did you mean ${meant}"`, async () => {
      const outcome = await createHarness().invoke([word]);
      assertFailure(
        outcome,
        ExitCode.Usage,
        `unknown command "${word}": did you mean "${meant}"?\n`,
      );
    });
  }

  test("an unknown verb holding a line separator is still quoted on one line", {}, async () => {
    const outcome = await createHarness().invoke(["erase\u2028x", HOST]);
    assert.equal(outcome.code, ExitCode.Usage);
    assertOneLine(outcome.stderr);
  });

  test("an unknown verb after the options exits 2 too", async () => {
    const outcome = await createHarness().invoke(["--service", "work", "erase", HOST]);
    assertFailure(outcome, ExitCode.Usage, unknownCommand("erase"));
  });

  test("no verb at all exits 2 with one line", async () => {
    const outcome = await createHarness().invoke([]);
    assertFailure(outcome, ExitCode.Usage, MISSING_COMMAND);
  });

  test("an option that took a command as its value says so: --service list", async () => {
    const h = createHarness();
    const outcome = await h.invoke(["--service", "list"]);
    assertFailure(
      outcome,
      ExitCode.Usage,
      'missing command: "list" was read as the value of --service; give its value, then the command: --service SERVICE list\n',
    );
    assert.deepEqual(h.opened, []);
  });

  test("only options and no verb exits 2 with one line", async () => {
    const outcome = await createHarness().invoke(["--service", "work"]);
    assertFailure(outcome, ExitCode.Usage, MISSING_COMMAND);
  });

  for (const verb of ["get", "store", "forget"]) {
    test(`${verb} without a hostname exits 2 with one line`, async () => {
      const h = createHarness();
      const outcome = await h.invoke([verb]);
      assertFailure(outcome, ExitCode.Usage, `missing hostname: ${verb} HOSTNAME\n`);
      assert.deepEqual(h.opened, []);
    });

    test(`${verb} with an extra argument exits 2 with one line`, async () => {
      const h = createHarness();
      const outcome = await h.invoke([verb, HOST, "extra"]);
      assertFailure(
        outcome,
        ExitCode.Usage,
        `too many arguments: ${verb} takes one hostname (${verb} HOSTNAME)\n`,
      );
      assert.deepEqual(h.opened, []);
    });

    test(`${verb} with an invalid hostname exits 2 with one line`, async () => {
      const h = createHarness();
      const outcome = await h.invoke([verb, "a..b"], { stdin: TOKEN_OBJECT });
      assertFailure(outcome, ExitCode.Usage, /^invalid hostname "a\.\.b": /);
      assert.deepEqual(h.opened, []);
    });
  }

  test("an unknown option exits 2 with one line", async () => {
    const outcome = await createHarness().invoke(["--bogus", "get", HOST]);
    assertFailure(outcome, ExitCode.Usage, 'unknown option "--bogus" (see "--help")\n');
  });

  test("an unknown option of a command names the command and its help", async () => {
    const outcome = await createHarness().invoke(["list", "--bogus"]);
    assertFailure(
      outcome,
      ExitCode.Usage,
      'unknown option "--bogus" for list (see "list --help")\n',
    );
  });

  test("an option without its value says which, in our words", async () => {
    const outcome = await createHarness().invoke(["list", "--timeout"]);
    assertFailure(outcome, ExitCode.Usage, '--timeout needs a value (see "--help")\n');
  });

  test("a command's option before the command works as after it: --json list", async () => {
    const h = createHarness();
    h.storeFor(DEFAULT_SERVICE);
    const outcome = await h.invoke(["--service", "work", "--json", "list"]);
    assert.deepEqual([outcome.code, outcome.stdout, outcome.stderr], [0, "[]\n", ""]);
    assert.deepEqual(h.opened, [{ service: "work", backend: "keychain" }]);
  });

  test("a command's option before a protocol verb is still refused", async () => {
    const outcome = await createHarness().invoke(["--force", "get", HOST]);
    assertFailure(outcome, ExitCode.Usage, 'unknown option "--force" (see "--help")\n');
  });
});

/** The root's name and its options, as every command's usage starts. */
const ROOT_USAGE =
  "terraform-credentials-keychain \\[--service <name>\\] \\[--backend <store>\\] \\[--timeout <seconds>\\]";

describe("help and version", () => {
  for (const flag of ["--help", "-h"]) {
    test(`${flag} prints usage on stdout and exits 0`, async () => {
      const h = createHarness();
      const outcome = await h.invoke([flag]);
      assert.equal(outcome.code, 0);
      assert.equal(outcome.stderr, "");
      assert.ok(
        outcome.stdout.startsWith("Usage: terraform-credentials-keychain "),
        outcome.stdout,
      );
      for (const word of ["get", "store", "forget", "--service"]) {
        assert.ok(outcome.stdout.includes(word), `help mentions ${word}`);
      }
      assert.deepEqual(h.opened, []);
    });
  }

  test("--help keeps the protocol verbs apart from the commands for people", async () => {
    const { stdout } = await createHarness().invoke(["--help"]);
    const usage = stdout.split("\n")[0] ?? "";
    assert.ok(!usage.includes("<verb> <hostname>"), usage);
    assert.match(usage, /get\|store\|forget <hostname>/);
    assert.match(usage, /<command>/);
    const protocolAt = stdout.indexOf("Protocol verbs (run by Terraform):");
    const humanAt = stdout.indexOf("Commands for people:");
    assert.ok(protocolAt >= 0 && humanAt > protocolAt, stdout);
    const protocolSection = stdout.slice(protocolAt, humanAt);
    const humanSection = stdout.slice(humanAt);
    for (const verb of ["get", "store", "forget"]) {
      assert.match(protocolSection, new RegExp(`^  ${verb} `, "m"));
    }
    for (const command of ["install", "uninstall", "import", "list", "doctor"]) {
      assert.doesNotMatch(protocolSection, new RegExp(`^  ${command}\\b`, "m"));
      assert.match(humanSection, new RegExp(`^  ${command}\\b`, "m"));
    }
  });

  test("help prints the same help on stdout and exits 0", async () => {
    const h = createHarness();
    const [help, flag] = [await h.invoke(["help"]), await h.invoke(["--help"])];
    assert.deepEqual([help.code, help.stderr], [0, ""]);
    assert.equal(help.stdout, flag.stdout);
  });

  test("help COMMAND prints that command's help", async () => {
    const outcome = await createHarness().invoke(["help", "install"]);
    assert.equal(outcome.code, 0);
    assert.match(outcome.stdout, new RegExp(`^Usage: ${ROOT_USAGE} install `));
  });

  for (const command of ["list", "exec", "doctor", "import", "uninstall", "get"]) {
    test(`help ${command} shows the options every command takes: --backend, --service, --timeout`, async () => {
      const outcome = await createHarness().invoke(["help", command]);
      assert.equal(outcome.code, 0);
      for (const option of ["--backend <store>", "--service <name>", "--timeout <seconds>"])
        assert.ok(outcome.stdout.includes(option), outcome.stdout);
    });
  }

  test("help with a name that is no command exits 2 with one line, and prints no help", async () => {
    const outcome = await createHarness().invoke(["help", "bogus"]);
    assertFailure(outcome, ExitCode.Usage, unknownCommand("bogus"));
  });

  test("help with a typo suggests the command", async () => {
    const outcome = await createHarness().invoke(["help", "lsit"]);
    assertFailure(outcome, ExitCode.Usage, 'unknown command "lsit": did you mean "list"?\n');
  });

  test("no arguments points at --help and the commands for people, in one short line", async () => {
    const outcome = await createHarness().invoke([]);
    assert.equal(outcome.code, ExitCode.Usage);
    assert.ok(outcome.stderr.includes("--help"));
    assert.ok(outcome.stderr.includes("install"));
    assert.ok(outcome.stderr.length < 200, outcome.stderr);
  });

  test("a verb's --help prints its usage as Terraform calls it, the options before the verb", async () => {
    const outcome = await createHarness().invoke(["get", "--help"]);
    assert.equal(outcome.code, 0);
    assert.equal(outcome.stderr, "");
    assert.match(outcome.stdout, new RegExp(`^Usage: ${ROOT_USAGE} get <hostname>\n`));
  });

  for (const command of ["get", "list", "uninstall", "import", "doctor", "exec"]) {
    test(`${command} --help says below it which store the call reaches`, async () => {
      const { stdout } = await createHarness().invoke([command, "--help"]);
      assert.match(stdout, /\n\nThe store a call reaches: the one its line names with --backend/);
    });
  }

  for (const flag of ["--version", "-v"]) {
    test(`${flag} prints the version on stdout and exits 0`, async () => {
      const outcome = await createHarness().invoke([flag]);
      assert.deepEqual([outcome.code, outcome.stdout, outcome.stderr], [0, `${VERSION}\n`, ""]);
    });
  }
});

describe("core-dump protection, only where a token is held", () => {
  test("store protects the process once, before it reads stdin", async () => {
    const harness = createHarness();
    const outcome = await harness.invoke(["store", HOST], { stdin: TOKEN_OBJECT });
    assert.equal(outcome.code, ExitCode.Ok);
    assert.deepEqual(harness.protections, [false]);
  });

  test("a store refused before reading protects the process before it drains stdin", async () => {
    const harness = createHarness();
    const outcome = await harness.invoke(["store", "not a host"], { stdin: TOKEN_OBJECT });
    assert.notEqual(outcome.code, ExitCode.Ok);
    assert.ok(outcome.io.stdinDrained);
    assert.deepEqual(harness.protections, [false]);
  });

  test("forget never protects: it holds no token", async () => {
    const harness = createHarness();
    await harness.invoke(["store", HOST], { stdin: TOKEN_OBJECT });
    harness.protections.length = 0;
    assert.equal((await harness.invoke(["forget", HOST])).code, ExitCode.Ok);
    assert.deepEqual(harness.protections, []);
  });

  test("get leaves it to the store, whose beforeSecret protects once however often it is called", async () => {
    const harness = createHarness();
    assert.equal((await harness.invoke(["get", HOST])).stdout, "{}\n");
    assert.deepEqual(harness.protections, [], "a store that reads no secret: no protection");
    const [beforeSecret] = harness.beforeSecrets;
    await beforeSecret?.();
    await beforeSecret?.();
    assert.deepEqual(harness.protections, [false]);
  });

  test("the commands for people protect the process before they run", async () => {
    const harness = createHarness();
    assert.equal((await harness.invoke(["list"])).code, ExitCode.Ok);
    assert.deepEqual(harness.protections, [false]);
  });
});

describe("store failures", () => {
  // Each case: argv, stdin, and how the harness's store should fail (if at all).
  const cases: readonly {
    readonly name: string;
    readonly argv: readonly string[];
    readonly stdin: string | Uint8Array;
    readonly setup?: (h: ReturnType<typeof createHarness>) => void;
    readonly code: number;
    readonly stderr: string | RegExp;
  }[] = [
    {
      name: "bad JSON",
      argv: ["store", HOST],
      stdin: `{"token":"${SECRET}"`,
      code: ExitCode.Failure,
      stderr: /^the credentials object on stdin is not valid JSON: /,
    },
    {
      name: "a token that is not a string",
      argv: ["store", HOST],
      stdin: `{"token":["${SECRET}"]}`,
      code: ExitCode.Failure,
      stderr: 'the credentials object on stdin has a "token" that is not a string\n',
    },
    {
      name: "empty stdin",
      argv: ["store", HOST],
      stdin: "",
      code: ExitCode.Failure,
      stderr: /^the credentials object on stdin is empty: /,
    },
    {
      name: "invalid UTF-8",
      argv: ["store", HOST],
      stdin: Uint8Array.from([
        ...new TextEncoder().encode(`{"token":"${SECRET}`),
        0xff,
        0x22,
        0x7d,
      ]),
      code: ExitCode.Failure,
      stderr: "the credentials object on stdin is not valid UTF-8 text: expected a JSON object\n",
    },
    {
      name: "an invalid hostname",
      argv: ["store", "a..b"],
      stdin: TOKEN_OBJECT,
      code: ExitCode.Usage,
      stderr: /^invalid hostname "a\.\.b": /,
    },
    {
      name: "an extra argument",
      argv: ["store", HOST, "extra"],
      stdin: TOKEN_OBJECT,
      code: ExitCode.Usage,
      stderr: "too many arguments: store takes one hostname (store HOSTNAME)\n",
    },
    {
      name: "a missing hostname",
      argv: ["store"],
      stdin: TOKEN_OBJECT,
      code: ExitCode.Usage,
      stderr: "missing hostname: store HOSTNAME\n",
    },
    {
      name: "an invalid --service",
      argv: ["--service", "a/b", "store", HOST],
      stdin: TOKEN_OBJECT,
      code: ExitCode.Usage,
      stderr: /^invalid --service "a\/b": /,
    },
    {
      name: "an unknown option",
      argv: ["--bogus", "store", HOST],
      stdin: TOKEN_OBJECT,
      code: ExitCode.Usage,
      stderr: 'unknown option "--bogus" (see "--help")\n',
    },
    {
      name: "a store that cannot be opened",
      argv: ["store", HOST],
      stdin: TOKEN_OBJECT,
      setup: (h) => {
        h.open = () => {
          throw new CliError("could not open the keychain: it is not there");
        };
      },
      code: ExitCode.Failure,
      stderr: "could not open the keychain: it is not there\n",
    },
    {
      name: "a store whose write fails",
      argv: ["store", HOST],
      stdin: TOKEN_OBJECT,
      setup: (h) =>
        h
          .storeFor(DEFAULT_SERVICE)
          .failNext(new CliError("could not write the keychain: locked"), "store"),
      code: ExitCode.Failure,
      stderr: "could not write the keychain: locked\n",
    },
    {
      name: "an unexpected error in the store",
      argv: ["store", HOST],
      stdin: TOKEN_OBJECT,
      setup: (h) =>
        h.storeFor(DEFAULT_SERVICE).failNext(new TypeError("x is not a function"), "store"),
      code: ExitCode.Failure,
      stderr: `unexpected error: x is not a function${UNEXPECTED_SUFFIX}\n`,
    },
  ];

  for (const { name, argv, stdin, setup, code, stderr } of cases) {
    test(`with ${name} drains stdin, prints one line without the token, and exits ${code}`, async () => {
      const h = createHarness();
      setup?.(h);
      const chunks = typeof stdin === "string" ? inChunks(stdin, 5) : [stdin];
      const outcome = await h.invoke(argv, { stdin: chunks });
      assertFailure(outcome, code, stderr);
      assert.equal(outcome.io.stdinDrained, true, "stdin was read to EOF");
      assert.ok(!outcome.stderr.includes(SECRET), outcome.stderr);
      assert.ok(!h.storeFor(DEFAULT_SERVICE).entries.has(HOST), "nothing was stored");
    });

    test(`with ${name} and ${DEBUG_VARIABLE}=1 still keeps the token off stderr`, async () => {
      const h = createHarness();
      setup?.(h);
      const outcome = await h.invoke(argv, { stdin, env: { [DEBUG_VARIABLE]: "1" } });
      assert.equal(outcome.code, code);
      assert.ok(!outcome.stderr.includes(SECRET), outcome.stderr);
    });
  }
});

describe("errors from the store", () => {
  test("a CliError from openStore is printed exactly, with its exit code", async () => {
    const h = createHarness();
    h.open = () => {
      throw new CliError("no keychain here: use --service elsewhere", ExitCode.Usage);
    };
    assertFailure(
      await h.invoke(["get", HOST]),
      ExitCode.Usage,
      "no keychain here: use --service elsewhere\n",
    );
  });

  test("a CliError from an asynchronous openStore is printed exactly", async () => {
    const h = createHarness();
    h.open = () => Promise.reject(new CliError("could not open the keychain: nope"));
    assertFailure(
      await h.invoke(["forget", HOST]),
      ExitCode.Failure,
      "could not open the keychain: nope\n",
    );
  });

  test("a CliError from the store's get is printed exactly, and nothing reaches stdout", async () => {
    const h = createHarness();
    h.storeFor(DEFAULT_SERVICE).failNext(
      new CliError("could not read the keychain: locked"),
      "get",
    );
    assertFailure(
      await h.invoke(["get", HOST]),
      ExitCode.Failure,
      "could not read the keychain: locked\n",
    );
  });

  test("a CliError's cause is not shown without the debug variable", async () => {
    const h = createHarness();
    const cause = new Error("Platform failure: inner detail");
    h.open = () => {
      throw new CliError("could not open the keychain", ExitCode.Failure, { cause });
    };
    assertFailure(await h.invoke(["get", HOST]), ExitCode.Failure, "could not open the keychain\n");
  });

  test(`a CliError's cause is shown with ${DEBUG_VARIABLE}=1`, async () => {
    const h = createHarness();
    const cause = new Error("Platform failure: inner detail");
    h.open = () => {
      throw new CliError("could not open the keychain", ExitCode.Failure, { cause });
    };
    const outcome = await h.invoke(["get", HOST], { env: { [DEBUG_VARIABLE]: "1" } });
    assert.equal(outcome.code, ExitCode.Failure);
    assert.ok(
      outcome.stderr.startsWith(
        "could not open the keychain\ncause: Error: Platform failure: inner detail\n",
      ),
    );
  });

  test("an unexpected error prints one line starting 'unexpected error:' and no stack", async () => {
    const h = createHarness();
    h.open = () => {
      throw new TypeError("Cannot read properties of undefined (reading 'Entry')\nsecond line");
    };
    const outcome = await h.invoke(["get", HOST]);
    assertFailure(
      outcome,
      ExitCode.Failure,
      `unexpected error: Cannot read properties of undefined (reading 'Entry')${UNEXPECTED_SUFFIX}\n`,
    );
    assert.ok(!outcome.stderr.includes("    at "), "no stack");
  });

  test("an unexpected non-Error value prints one line starting 'unexpected error:'", async () => {
    const h = createHarness();
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the case under test
    h.open = () => Promise.reject("a bare string");
    assertFailure(
      await h.invoke(["get", HOST]),
      ExitCode.Failure,
      `unexpected error: a bare string${UNEXPECTED_SUFFIX}\n`,
    );
  });

  test(`an unexpected error prints its stack with ${DEBUG_VARIABLE}=1`, async () => {
    const h = createHarness();
    const error = new TypeError("boom");
    h.open = () => {
      throw error;
    };
    const outcome = await h.invoke(["get", HOST], { env: { [DEBUG_VARIABLE]: "1" } });
    assert.equal(outcome.code, ExitCode.Failure);
    assert.equal(outcome.stdout, "");
    assert.equal(outcome.stderr, `unexpected error: boom${UNEXPECTED_SUFFIX}\n${error.stack}\n`);
    assert.match(outcome.stderr, /\n {4}at /);
  });

  test(`an empty ${DEBUG_VARIABLE} does not print the stack`, async () => {
    const h = createHarness();
    h.open = () => {
      throw new TypeError("boom");
    };
    const outcome = await h.invoke(["get", HOST], { env: { [DEBUG_VARIABLE]: "" } });
    assertFailure(outcome, ExitCode.Failure, `unexpected error: boom${UNEXPECTED_SUFFIX}\n`);
  });

  for (const [code, syscall, file, meaning] of [
    ["EPERM", "open", "/home/u/.terraformrc", "operation not permitted"],
    ["EISDIR", "open", "/home/u/.terraformrc", "it is a directory"],
    ["EEXIST", "mkdir", "/home/u/.terraform.d", "something is already there"],
    ["EBADF", "read", undefined, "it is not open for that (a write-only standard input?)"],
  ] as const) {
    test(`a system error ${code} from ${syscall} is one line saying what failed, not "a bug"`, async () => {
      const h = createHarness();
      h.open = () => {
        throw Object.assign(new Error(`${code}: ${meaning}, ${syscall}`), {
          code,
          syscall,
          errno: -1,
          ...(file === undefined ? {} : { path: file }),
        });
      };
      assertFailure(
        await h.invoke(["get", HOST]),
        ExitCode.Failure,
        `could not ${syscall} ${file ?? "standard input"}: ${meaning} (${code})\n`,
      );
    });
  }
});
