import { linuxOnly } from "../support/keychain-backends.ts";
import { conformanceWhereItRuns } from "./harness.ts";
import { KEEPASSXC } from "./stores.ts";

conformanceWhereItRuns(
  KEEPASSXC,
  "conformance over KeePassXC",
  linuxOnly("the conformance suite over KeePassXC"),
);
