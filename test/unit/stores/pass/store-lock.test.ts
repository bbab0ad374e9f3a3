import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { heldFor } from "../../../../src/stores/pass/store-lock.ts";

describe("how long a busy store's lock has been held, as the message says it", () => {
  for (const [ageMs, said] of [
    [0, "0 s"],
    [400, "0.4 s"],
    [9_940, "9.9 s"],
    [9_960, "10 s"],
    [10_400, "10 s"],
    [3_601_100, "3601 s"],
  ] as const) {
    test(`${ageMs} ms is "${said}"`, () => {
      assert.equal(heldFor(ageMs), said);
    });
  }
});
