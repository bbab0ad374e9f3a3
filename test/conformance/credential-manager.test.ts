import { test } from "node:test";
import { describeConformance } from "./harness.ts";
import { WINDOWS_CREDENTIAL_MANAGER } from "./stores.ts";

// The workflow's windows jobs run it; on Linux the same table runs under Wine.
if (process.platform === "win32") describeConformance(WINDOWS_CREDENTIAL_MANAGER);
else
  test(
    "conformance over Windows Credential Manager",
    {
      skip: "SKIP: the native Credential Manager exists on Windows only (the workflow's windows jobs run this; Linux runs the table under Wine)",
    },
    () => {},
  );
