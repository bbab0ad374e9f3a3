/**
 * Runs the table of rules.ts against one store: one suite per rule group, named
 * "conformance: STORE › GROUP", which npm test's reporter prints as a line of its own.
 * Every call runs the built helper as Terraform does: the store's args before the verb,
 * stdin the null device for get and forget, or written by a writer that reports EPIPE.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import type { ProtocolBackend } from "../support/protocol-suite.ts";
import {
  LOCKED_HOST,
  LOCKED_OBJECT,
  RULE_GROUPS,
  RULES,
  type Capability,
  type RowContext,
  type Stdin,
} from "./rules.ts";
import { PATIENCE_MS } from "../support/timing.ts";

/** A store the conformance table runs against, started for one test file. */
export interface ConformanceStore {
  /** As it appears in the suite's lines: "gnome-keyring", "pass", ... */
  readonly name: string;
  /** What the store can show; each missing one comes with the reason, in the store's file. */
  readonly capabilities: ReadonlySet<Capability>;
  start(): Promise<StoreUnderTest>;
}

export interface StoreUnderTest extends ProtocolBackend {
  /**
   * Starts a second instance of the store, stores `host` with `object` in it through the
   * helper (`store` runs it), then locks it; for "locked-get" and "locked-forget".
   */
  startLocked?(
    host: string,
    object: string,
    store: (backend: ProtocolBackend) => Promise<HelperResult>,
  ): Promise<ProtocolBackend>;
  /** The environment in which the store cannot be reached; for "unreachable". */
  readonly unreachableEnv?: Record<string, string>;
  /** Adds another program's entry for `host`; for "foreign-items". */
  addForeignItem?(host: string, secret: string): Promise<void>;
}

/**
 * The table over `store` where it can run (`missing` undefined or false); elsewhere one
 * test named `title` says why it did not. Where `ciMustRun` (CI installs what it needs,
 * .ci/run), a missing store on CI fails instead: a broken set-up is never a quiet skip.
 */
export function conformanceWhereItRuns(
  store: ConformanceStore,
  title: string,
  missing: string | false | undefined,
  ciMustRun = false,
): void {
  if (missing === undefined || missing === false) describeConformance(store);
  else if (ciMustRun && process.env.CI === "true")
    test(title, () => assert.fail(`${missing}; CI must run it`));
  else test(title, { skip: missing }, () => {});
}

/** Runs every row of the table that `store` can show, one suite per rule group. */
export function describeConformance(store: ConformanceStore): void {
  let running: Promise<StoreUnderTest> | undefined;
  let locked: Promise<ProtocolBackend> | undefined;
  const started = () => (running ??= store.start());
  after(async () => {
    await Promise.allSettled([
      locked?.then((backend) => backend.close()),
      running?.then((backend) => backend.close()),
    ]);
  });

  const run = (backend: ProtocolBackend, args: readonly string[], stdin?: Stdin) =>
    runHelper([...backend.args, ...args], {
      env: backend.env,
      timeoutMs: PATIENCE_MS,
      ...(backend.command === undefined ? {} : { command: backend.command }),
      ...(stdin === undefined
        ? {}
        : { stdin: stdin.bytes, ...(stdin.holdOpen === true ? { holdStdinOpen: true } : {}) }),
    });
  const context: RowContext = {
    call: async (args, stdin) => run(await started(), args, stdin),
    async callLocked(args, stdin) {
      const backend = await started();
      if (backend.startLocked === undefined) throw new Error(`${store.name} has no locked state`);
      const startLocked = backend.startLocked.bind(backend);
      locked ??= startLocked(LOCKED_HOST, LOCKED_OBJECT, (instance) =>
        run(instance, ["store", LOCKED_HOST], { bytes: LOCKED_OBJECT }),
      );
      return run(await locked, args, stdin);
    },
    async callUnreachable(args, stdin) {
      const backend = await started();
      if (backend.unreachableEnv === undefined)
        throw new Error(`${store.name} is always reachable`);
      return run({ ...backend, env: backend.unreachableEnv }, args, stdin);
    },
    async addForeignItem(host, secret) {
      const backend = await started();
      if (backend.addForeignItem === undefined)
        throw new Error(`${store.name} has one entry per host`);
      await backend.addForeignItem(host, secret);
    },
  };

  for (const group of RULE_GROUPS) {
    const rows = RULES.filter(
      (rule) =>
        rule.group === group && (rule.needs === undefined || store.capabilities.has(rule.needs)),
    );
    describe(`conformance: ${store.name} › ${group}`, () => {
      for (const rule of rows) test(rule.behaviour, () => rule.check(context));
    });
  }
}
