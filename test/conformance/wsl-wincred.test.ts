import assert from "node:assert/strict";
import { test } from "node:test";
import { wineMissing } from "../support/wine-prefix.ts";
import { describeConformance } from "./harness.ts";
import { WSL_WINCRED_UNDER_WINE } from "./stores.ts";

const missing = process.platform === "linux" ? wineMissing() : "SKIP: Wine runs on Linux only";
if (missing === undefined) {
  describeConformance(WSL_WINCRED_UNDER_WINE);
} else if (process.env.CI === "true" && process.platform === "linux") {
  // CI installs Wine (.ci/run): a missing one is a broken set-up, never a quiet skip.
  test("conformance over --backend wincred on a WSL stand-in (Windows side under Wine)", () => {
    assert.fail(`${missing}; CI must run it`);
  });
} else {
  test(
    "conformance over --backend wincred on a WSL stand-in (Windows side under Wine)",
    { skip: missing },
    () => {},
  );
}
