import { linuxOnly } from "../support/keychain-backends.ts";
import { conformanceWhereItRuns } from "./harness.ts";
import { GNOME_KEYRING } from "./stores.ts";

conformanceWhereItRuns(
  GNOME_KEYRING,
  "conformance over gnome-keyring",
  linuxOnly("the conformance suite over gnome-keyring"),
);
