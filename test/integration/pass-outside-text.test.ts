/**
 * Text from outside reaches the terminal only folded or quoted: a key id in the store's
 * .gpg-id (which a shared store's remote may write) and what gpg says about it.
 */
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
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
