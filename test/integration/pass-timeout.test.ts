import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { runHelper } from "../support/helper-process.ts";
import { assertOneLineFailure } from "../support/protocol-suite.ts";
import { PATIENCE_MS, PROMPT_MS } from "../support/timing.ts";

describe("pass that never answers", { skip: linuxOnly("the pass timeout suite") }, () => {
  // A `pass` that never answers, as one does while gpg waits for a passphrase nobody can enter.
  let home: string;
  let bin: string;
  before(() => {
    home = mkdtempSync(path.join(os.tmpdir(), "tfck-pass-timeout-"));
    bin = path.join(home, "bin");
    mkdirSync(bin);
    writeFileSync(path.join(bin, "pass"), "#!/bin/sh\nsleep 20\n");
    chmodSync(path.join(bin, "pass"), 0o755);
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  const cases: readonly (readonly [string, readonly string[], Record<string, string>])[] = [
    ["--timeout", ["--timeout", "1"], {}],
    ["TF_CREDENTIALS_KEYCHAIN_TIMEOUT", [], { TF_CREDENTIALS_KEYCHAIN_TIMEOUT: "1" }],
  ];
  for (const [how, options, extraEnv] of cases) {
    test(`the pass store gives up at the deadline ${how} sets, not at its default`, async () => {
      const result = await runHelper(["--backend", "pass", ...options, "get", "example.com"], {
        env: { HOME: home, PATH: `${bin}:${process.env.PATH ?? ""}`, ...extraEnv },
        timeoutMs: PATIENCE_MS,
      });
      assertOneLineFailure(result);
      assert.match(result.stderr, /did not finish within 1 s/);
      assert.ok(result.milliseconds < PROMPT_MS, `took ${Math.round(result.milliseconds)} ms`);
    });
  }
});
