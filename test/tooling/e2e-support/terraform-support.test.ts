import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { skipWithoutTerraform } from "../../e2e/support/terraform.ts";

/** A test context that records what the test was skipped with. */
function recordingContext(): { skipped: Array<string | undefined>; skip(message?: string): void } {
  const skipped: Array<string | undefined> = [];
  return { skipped, skip: (message) => skipped.push(message) };
}

describe("end-to-end tests without terraform", () => {
  test("are skipped with one SKIP line that says what is missing", () => {
    const t = recordingContext();
    skipWithoutTerraform(t, { PATH: "/nowhere" });
    assert.deepEqual(t.skipped, [
      "SKIP: terraform is not on PATH, so the end-to-end tests cannot run it (install it, e.g. into /usr/local/bin)",
    ]);
  });

  test("fail under CI=true instead of skipping, naming the tool CI asked for", () => {
    const t = recordingContext();
    assert.throws(
      () => skipWithoutTerraform(t, { CI: "true", TFCK_TEST_TERRAFORM: "tofu" }),
      /^Error: tofu is not on PATH, .*; under CI=true they must run$/,
    );
    assert.deepEqual(t.skipped, []);
  });
});
