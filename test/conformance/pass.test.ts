import { linuxOnly } from "../support/keychain-backends.ts";
import { conformanceWhereItRuns } from "./harness.ts";
import { PASS } from "./stores.ts";

conformanceWhereItRuns(PASS, "conformance over pass", linuxOnly("the conformance suite over pass"));
