import { linuxOnly } from "../support/keychain-backends.ts";
import { conformanceWhereItRuns } from "./harness.ts";
import { KWALLET } from "./stores.ts";

conformanceWhereItRuns(
  KWALLET,
  "conformance over KWallet",
  linuxOnly("the conformance suite over KWallet"),
);
