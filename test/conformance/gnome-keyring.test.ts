import { test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { describeConformance } from "./harness.ts";
import { GNOME_KEYRING } from "./stores.ts";

const skip = linuxOnly("the conformance suite over gnome-keyring");
if (skip === false) describeConformance(GNOME_KEYRING);
else test("conformance over gnome-keyring", { skip }, () => {});
