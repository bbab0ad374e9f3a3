import { conformanceWhereItRuns } from "./harness.ts";
import { WINDOWS_CREDENTIAL_MANAGER } from "./stores.ts";

// The workflow's windows jobs run it; on Linux the same table runs under Wine.
conformanceWhereItRuns(
  WINDOWS_CREDENTIAL_MANAGER,
  "conformance over Windows Credential Manager",
  process.platform !== "win32" &&
    "SKIP: the native Credential Manager exists on Windows only (the workflow's windows jobs run this; Linux runs the table under Wine)",
);
