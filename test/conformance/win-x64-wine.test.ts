import { wineMissing } from "../support/wine-prefix.ts";
import { conformanceWhereItRuns } from "./harness.ts";
import { WINDOWS_UNDER_WINE } from "./stores.ts";

// CI installs Wine on Linux (.ci/run), so there it must run.
conformanceWhereItRuns(
  WINDOWS_UNDER_WINE,
  "conformance over the win-x64 build under Wine",
  process.platform === "linux" ? wineMissing() : "SKIP: Wine runs on Linux only",
  process.platform === "linux",
);
