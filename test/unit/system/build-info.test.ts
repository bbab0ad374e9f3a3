import assert from "node:assert/strict";
import { test } from "node:test";
import { versionLine } from "../../../src/system/build-info.ts";

test("--version names the version, the target and the Node it runs on", () => {
  assert.equal(
    versionLine("0.1.0", "linux-x64", { node: "24.21.0", v8: "13.6" }),
    "0.1.0 (linux-x64, Node 24.21.0)",
  );
});

test("--version names Bun when the binary runs on Bun", () => {
  assert.equal(
    versionLine("0.1.0", "darwin-arm64", { node: "24.3.0", bun: "1.3.1" }),
    "0.1.0 (darwin-arm64, Bun 1.3.1)",
  );
});
