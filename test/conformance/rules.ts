/**
 * The credentials helper protocol (../shared/spec/credentials-helpers.md, Terraform's
 * "Credentials Helpers" page) as one table: each row is a behaviour, the sentence of the
 * spec it enforces, and the check, run by harness.ts against every store CI can start.
 * A row that a store has no way to show (no locked state, no second item per host) names
 * the capability it needs; the store's file says why it lacks one, and the row is not made
 * for it, rather than skipped.
 */
import assert from "node:assert/strict";
import type { HelperResult } from "../support/helper-process.ts";
import { assertOneLineFailure, assertSilentSuccess } from "../support/protocol-suite.ts";
import { PROMPT_MS } from "../support/timing.ts";

/** What a row can ask of the store under test. */
export interface RowContext {
  /** Runs the built helper as Terraform does: the store's args, then `args` (verb, host). */
  call(args: readonly string[], stdin?: Stdin): Promise<HelperResult>;
  /** The same, in the store as it is when locked, with `LOCKED_HOST` stored before the lock. */
  callLocked(args: readonly string[], stdin?: Stdin): Promise<HelperResult>;
  /** The same, where the store cannot be reached at all. */
  callUnreachable(args: readonly string[], stdin?: Stdin): Promise<HelperResult>;
  /** Adds another program's entry for `host`: our two attributes and one of its own. */
  addForeignItem(host: string, secret: string): Promise<void>;
}

export interface Stdin {
  readonly bytes: string | Uint8Array;
  /** The writer never closes it (a pipe nobody closes). */
  readonly holdOpen?: boolean;
}

/**
 * What a store may lack: a row that needs it is not made for that store.
 * - locked-get: a locked state in which a stored entry cannot be read;
 * - locked-forget: a locked state in which an entry cannot be deleted;
 * - locked-search: a locked state that hides whether an entry is there at all;
 * - unreachable: a way for the store to be out of reach (no bus, no program);
 * - foreign-items: another program's entry can match a host beside ours;
 * - bounded-stdin: a read of stdin that --timeout can end.
 */
export type Capability =
  | "locked-get"
  | "locked-forget"
  | "locked-search"
  | "unreachable"
  | "foreign-items"
  | "bounded-stdin";

export const RULE_GROUPS = [
  "get",
  "store",
  "store refusals",
  "forget",
  "verbs and hostnames",
] as const;
export type RuleGroup = (typeof RULE_GROUPS)[number];

export interface Rule {
  readonly group: RuleGroup;
  /** The behaviour, as the test's name. */
  readonly behaviour: string;
  /** The sentence of the spec the row enforces. */
  readonly spec: string;
  readonly needs?: Capability;
  check(context: RowContext): Promise<void>;
}

/** The host each store's locked instance has stored before it was locked. */
export const LOCKED_HOST = "locked.conformance.example";
export const LOCKED_OBJECT = '{"token":"SECRET-locked"}';

const SPEC = {
  getFound:
    "If the credentials helper is able to provide credentials for the given host then it must print a JSON credentials object to its stdout stream and then exit with status code zero to indicate success.",
  getNone:
    "If the credentials helper definitively has no credentials for the given host, then it must print an empty JSON object to stdout and exit with status zero.",
  getFailed:
    "If the credentials helper is unable to provide the requested credentials for any other reason, it must print an end-user-oriented plain text error message to its stderr stream and then exit with a non-zero status code.",
  storeOk:
    "If the helper is able to store the given credentials then it must do so and then exit with status code zero and no output on stdout or stderr to indicate success.",
  storeRefused:
    "If it is unable to store the given credentials for any reason, it must still fully read its stdin until EOF and then print an end-user-oriented plain text error message to its stderr stream before exiting with a non-zero status code.",
  replace:
    "The new credentials must fully replace any existing credentials stored for the given hostname.",
  wholeObject:
    "If technically possible within the constraints of the target system, a credentials helper should prefer to store the whole JSON object as-is for later retrieval.",
  forgetOk:
    "If the helper program is able to delete its stored credentials for the given hostname or if there are no such credentials stored already then it must exist with status code zero and produce no output on stdout or stderr.",
  forgetFailed:
    "If it is unable to forget the stored credentials for any reason, particularly if the helper cannot be sure that the credentials are no longer available for retrieval, the helper program must print an end-user-oriented plain text error message to its stderr stream and then exit with a non-zero status code.",
  otherVerbs:
    "The credentials helper protocol may be extended with additional verbs in future, so for forward-compatibility a credentials helper must react to any unsupported verb by printing an end-user-oriented plain text error message to its stderr stream and then exiting with a non-zero status code.",
  hostnames:
    "Terraform runs the helper program with each of the arguments given in args, followed by an verb and then the hostname that the verb will apply to. (how-terraform-calls-helpers.md: the comparison form: lowercase, punycode, an optional :port)",
} as const;

/** 1 MiB: far past the helper's 64 KiB cap and a pipe's buffer, so an early exit breaks the pipe. */
const MIB = 1024 * 1024;

const expectGet = async (context: RowContext, host: string, expected: string) => {
  const result = await context.call(["get", host]);
  assert.deepEqual(
    { code: result.code, stdout: result.stdout, stderr: result.stderr },
    { code: 0, stdout: `${expected}\n`, stderr: "" },
  );
};

const storeOk = async (context: RowContext, host: string, object: string) => {
  assertSilentSuccess(await context.call(["store", host], { bytes: object }));
};

/** Stores `host`, forgets it (silently), and gets {} for it. */
const storeForgetGet = async (context: RowContext, host: string) => {
  await storeOk(context, host, '{"token":"SECRET-forget"}');
  assertSilentSuccess(await context.call(["forget", host]));
  await expectGet(context, host, "{}");
};

/** One line on stderr, nothing on stdout, a non-zero exit, all of stdin read, no secret shown. */
const assertRefusedAfterReadingAll = (result: HelperResult) => {
  assertOneLineFailure(result);
  assert.ok(result.stdinDrained, "stdin was not read to EOF: the writer got EPIPE");
  assert.doesNotMatch(result.stderr, /SECRET/);
};

/** `prefix`, padded with `pad` and closed with `suffix`, to exactly 1 MiB. */
const mebibyte = (prefix: string, pad: string, suffix: string) =>
  `${prefix}${pad.repeat(MIB - prefix.length - suffix.length)}${suffix}`;

/** A credentials object of exactly 1 MiB whose token is SECRET-`tag`. */
const bigObject = (tag: string) => mebibyte(`{"token":"SECRET-${tag}","pad":"`, "x", '"}');

/**
 * The refusals of `store`: [behaviour, args before the host's, host, input]. Each reads
 * 1 MiB to EOF before it exits, and keeps what the host had.
 */
const REFUSALS: ReadonlyArray<readonly [string, readonly string[], string, string | Uint8Array]> = [
  ["input too large", [], "refused.conformance.example", bigObject("big")],
  ["invalid JSON", [], "refused.conformance.example", mebibyte("token=SECRET-json ", "x", "")],
  [
    "invalid UTF-8",
    [],
    "refused.conformance.example",
    Buffer.concat([
      Buffer.from('{"token":"SECRET-utf8'),
      Buffer.alloc(MIB, 0xff),
      Buffer.from('"}'),
    ]),
  ],
  ["a bad hostname", [], "bad host.conformance.example", bigObject("host")],
  ["a bad option value", ["--timeout", "soon"], "refused.conformance.example", bigObject("opt")],
  ["an unknown option", ["--no-such-option"], "refused.conformance.example", bigObject("unk")],
  [
    "an unknown backend",
    ["--backend", "nowhere"],
    "refused.conformance.example",
    bigObject("backend"),
  ],
];

/** The forms of hostname Terraform passes (svchost's comparison form), each its own entry. */
const HOSTNAME_FORMS = [
  ["lowercase", "app.conformance.example"],
  ["punycode", "xn--mnchen-3ya.conformance.example"],
  ["with a port", "app.conformance.example:8443"],
  ["punycode with a port", "xn--fa-hia.conformance.example:8080"],
] as const;

export const RULES: readonly Rule[] = [
  // get
  {
    group: "get",
    behaviour: "stored: prints exactly the stored object and exits 0, nothing on stderr",
    spec: SPEC.getFound,
    async check(context) {
      const object = '{"token":"tok-ÄÖÜ-😀","org":{"name":"acme","teams":[1,2.50]}}';
      await storeOk(context, "stored.conformance.example", object);
      await expectGet(context, "stored.conformance.example", object);
    },
  },
  {
    group: "get",
    behaviour: "never stored: prints {} and exits 0",
    spec: SPEC.getNone,
    async check(context) {
      await expectGet(context, "never-stored.conformance.example", "{}");
    },
  },
  {
    group: "get",
    behaviour: "forgotten: prints {} and exits 0",
    spec: SPEC.getNone,
    check: (context) => storeForgetGet(context, "forgotten.conformance.example"),
  },
  {
    group: "get",
    behaviour:
      "locked, the host stored: a non-zero exit, one line on stderr, nothing on stdout (not {})",
    spec: SPEC.getFailed,
    needs: "locked-get",
    async check(context) {
      const result = await context.callLocked(["get", LOCKED_HOST]);
      assertOneLineFailure(result);
      assert.match(result.stderr, /locked|passphrase/i);
      assert.doesNotMatch(result.stderr, /SECRET/);
    },
  },
  {
    group: "get",
    behaviour: "locked, another host: still an error, as the lock may hide its entry (not {})",
    spec: SPEC.getNone,
    needs: "locked-search",
    async check(context) {
      const result = await context.callLocked(["get", "never-stored.conformance.example"]);
      assertOneLineFailure(result);
      assert.match(result.stderr, /locked/);
    },
  },
  {
    group: "get",
    behaviour: "unreachable: a non-zero exit, one line on stderr, nothing on stdout",
    spec: SPEC.getFailed,
    needs: "unreachable",
    async check(context) {
      assertOneLineFailure(await context.callUnreachable(["get", "stored.conformance.example"]));
    },
  },

  // store
  {
    group: "store",
    behaviour: "success prints nothing on stdout or stderr and exits 0",
    spec: SPEC.storeOk,
    async check(context) {
      await storeOk(context, "silent.conformance.example", '{"token":"SECRET-silent"}');
    },
  },
  {
    group: "store",
    behaviour: "a replace replaces the whole object, property for property",
    spec: SPEC.replace,
    async check(context) {
      const host = "replaced.conformance.example";
      await storeOk(context, host, '{"token":"first","extra":true}');
      await storeOk(context, host, '{"token":"second"}');
      await expectGet(context, host, '{"token":"second"}');
    },
  },
  {
    group: "store",
    behaviour: "unknown properties are kept whole, byte for byte",
    spec: SPEC.wholeObject,
    async check(context) {
      const host = "whole.conformance.example";
      const object = '{"token":"t","future":{"nested":[1,2.50,12345678901234567890]},"empty":""}';
      await storeOk(context, host, object);
      await expectGet(context, host, object);
    },
  },
  {
    group: "store",
    behaviour:
      "an input held open past --timeout is refused at the deadline, and the earlier value kept",
    spec: SPEC.storeRefused,
    needs: "bounded-stdin",
    async check(context) {
      const host = "held-open.conformance.example";
      await storeOk(context, host, '{"token":"kept"}');
      const result = await context.call(["--timeout", "2", "store", host], {
        bytes: '{"token":"SECRET-held"}',
        holdOpen: true,
      });
      assertOneLineFailure(result);
      assert.match(result.stderr, /did not end within 2 s/);
      assert.ok(result.milliseconds < PROMPT_MS, `took ${result.milliseconds} ms`);
      await expectGet(context, host, '{"token":"kept"}');
    },
  },

  // store refusals
  ...REFUSALS.map(([what, options, host, input]): Rule => ({
    group: "store refusals",
    behaviour: `${what}: reads all of 1 MiB to EOF, then one line and a non-zero exit; the earlier value is kept`,
    spec: SPEC.storeRefused,
    async check(context) {
      const kept = "refused.conformance.example";
      await storeOk(context, kept, '{"token":"kept"}');
      assertRefusedAfterReadingAll(
        await context.call([...options, "store", host], { bytes: input }),
      );
      await expectGet(context, kept, '{"token":"kept"}');
    },
  })),
  {
    group: "store refusals",
    behaviour:
      "a misplaced option (after the verb): reads all of 1 MiB to EOF, then one line and a non-zero exit",
    spec: SPEC.storeRefused,
    async check(context) {
      const input = bigObject("misplaced");
      assertRefusedAfterReadingAll(
        await context.call(["store", "misplaced.conformance.example", "--service"], {
          bytes: input,
        }),
      );
    },
  },
  {
    group: "store refusals",
    behaviour:
      "the store unreachable: reads all of its input to EOF, then one line and a non-zero exit",
    spec: SPEC.storeRefused,
    needs: "unreachable",
    async check(context) {
      // Valid, so that it reaches the store: white space pads it to just under the cap.
      const input = `{"token":"SECRET-unreachable"}${" ".repeat(60 * 1024)}`;
      assertRefusedAfterReadingAll(
        await context.callUnreachable(["store", "unreachable.conformance.example"], {
          bytes: input,
        }),
      );
    },
  },

  // forget
  {
    group: "forget",
    behaviour: "success prints nothing on stdout or stderr and exits 0",
    spec: SPEC.forgetOk,
    check: (context) => storeForgetGet(context, "forget.conformance.example"),
  },
  {
    group: "forget",
    behaviour: "an absent host: exits 0, nothing on stdout or stderr",
    spec: SPEC.forgetOk,
    async check(context) {
      assertSilentSuccess(await context.call(["forget", "absent.conformance.example"]));
    },
  },
  {
    group: "forget",
    behaviour: "duplicates (ours and another program's): exits 0 silently, and both are gone",
    spec: SPEC.forgetOk,
    needs: "foreign-items",
    async check(context) {
      const host = "duplicates.conformance.example";
      await storeOk(context, host, '{"token":"SECRET-ours"}');
      await context.addForeignItem(host, "SECRET-theirs");
      assertSilentSuccess(await context.call(["forget", host]));
      await expectGet(context, host, "{}");
    },
  },
  {
    group: "forget",
    behaviour: "locked: a non-zero exit and one line, never a success that leaves the entry",
    spec: SPEC.forgetFailed,
    needs: "locked-forget",
    async check(context) {
      const result = await context.callLocked(["forget", LOCKED_HOST]);
      assertOneLineFailure(result);
      assert.match(result.stderr, /locked/);
    },
  },

  // verbs and hostnames
  ...[
    ["erase", "example.com"],
    ["list-hosts", "example.com"],
    ["GET", "example.com"],
    ["store-v2", "example.com"],
  ].map((args): Rule => ({
    group: "verbs and hostnames",
    behaviour: `the unknown verb "${args[0]}": one line, a non-zero exit, stdin left unread`,
    spec: SPEC.otherVerbs,
    async check(context) {
      const result = await context.call(args, { bytes: mebibyte("SECRET-verb ", "x", "") });
      assertOneLineFailure(result);
      assert.equal(result.stdinDrained, false, "an unknown verb read stdin");
    },
  })),
  ...HOSTNAME_FORMS.map(([form, host]): Rule => ({
    group: "verbs and hostnames",
    behaviour: `a hostname as Terraform sends it, ${form} (${host}), round-trips on its own entry`,
    spec: SPEC.hostnames,
    async check(context) {
      const object = JSON.stringify({ token: `token-${host}` });
      await storeOk(context, host, object);
      await expectGet(context, host, object);
      for (const [, other] of HOSTNAME_FORMS.filter(([, name]) => name !== host)) {
        const result = await context.call(["get", other]);
        assert.notEqual(result.stdout, `${object}\n`, `${other} reads the entry of ${host}`);
      }
    },
  })),
];
