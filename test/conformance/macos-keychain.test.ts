import { conformanceWhereItRuns } from "./harness.ts";
import { MACOS_KEYCHAIN } from "./stores.ts";

// The workflow's macos jobs run it; a temporary keychain exists only where macOS does.
conformanceWhereItRuns(
  MACOS_KEYCHAIN,
  "conformance over the macOS Keychain",
  process.platform !== "darwin" &&
    "SKIP: the macOS Keychain exists on macOS only (the workflow's macos jobs run this)",
);
