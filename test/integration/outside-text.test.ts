/**
 * Text from outside reaches the terminal only folded or quoted: a key id in the store's
 * .gpg-id (which a shared store's remote may write) and what gpg says about it; what the
 * program installed as the helper says its version is.
 */
import assert from "node:assert/strict";
import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession } from "../support/pass-session.ts";

test(
  "doctor names a key id with an escape sequence from .gpg-id quoted, and folds what gpg says of it",
  { skip: linuxOnly("the pass suite") },
  async (t) => {
    const session = await startPassSession();
    t.after(() => session.close());
    appendFileSync(path.join(session.storeDir, ".gpg-id"), "\u001b[31mevil\n");
    const result = await runHelper(["--backend", "pass", "doctor"], {
      env: session.env,
      timeoutMs: 60_000,
    });
    const output = result.stdout + result.stderr;
    assert.ok(!output.includes("\u001b"), `raw ESC in: ${JSON.stringify(output)}`);
    assert.match(output, /gpg cannot encrypt to its key [0-9A-F]+, "\\u001b\[31mevil" \(/);
  },
);

test(
  "doctor quotes the version a program installed in the helper's place prints",
  { skip: linuxOnly("the pass suite") },
  async (t) => {
    const session = await startPassSession();
    t.after(() => session.close());
    const plugins = path.join(session.home, ".terraform.d", "plugins");
    mkdirSync(plugins, { recursive: true });
    const installed = path.join(plugins, "terraform-credentials-keychain");
    writeFileSync(installed, "#!/bin/sh\nprintf '\\033[31m9.9.9\\nsecond line\\n'\n");
    chmodSync(installed, 0o755);
    const result = await runHelper(["--backend", "pass", "doctor"], {
      env: session.env,
      timeoutMs: 60_000,
    });
    const output = result.stdout + result.stderr;
    assert.ok(!output.includes("\u001b"), `raw ESC in: ${JSON.stringify(output)}`);
    assert.match(output, /is version "\\u001b\[31m9\.9\.9\\nsecond line", this one is/);
  },
);
