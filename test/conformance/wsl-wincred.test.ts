import { wslMissing } from "../support/wsl-stand-in.ts";
import { conformanceWhereItRuns } from "./harness.ts";
import { WSL_WINCRED } from "./stores.ts";

// CI installs Wine on Linux (.ci/run), the stand-in's Windows side, so there it must run.
conformanceWhereItRuns(
  WSL_WINCRED,
  "conformance over --backend wincred in WSL",
  wslMissing(),
  process.platform === "linux",
);
