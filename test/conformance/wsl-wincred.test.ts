import assert from "node:assert/strict";
import { test } from "node:test";
import { wslMissing } from "../support/wsl-stand-in.ts";
import { describeConformance } from "./harness.ts";
import { WSL_WINCRED } from "./stores.ts";

const missing = wslMissing();
if (missing === undefined) {
  describeConformance(WSL_WINCRED);
} else if (process.env.CI === "true" && process.platform === "linux") {
  // CI installs Wine (.ci/run): a missing one is a broken set-up, never a quiet skip.
  test("conformance over --backend wincred in WSL", () => {
    assert.fail(`${missing}; CI must run it`);
  });
} else {
  test("conformance over --backend wincred in WSL", { skip: missing }, () => {});
}
