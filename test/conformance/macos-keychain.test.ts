import { test } from "node:test";
import { describeConformance } from "./harness.ts";
import { MACOS_KEYCHAIN } from "./stores.ts";

// The workflow's macos jobs run it; a temporary keychain exists only where macOS does.
if (process.platform === "darwin") describeConformance(MACOS_KEYCHAIN);
else
  test(
    "conformance over the macOS Keychain",
    {
      skip: "SKIP: the macOS Keychain exists on macOS only (the workflow's macos jobs run this)",
    },
    () => {},
  );
