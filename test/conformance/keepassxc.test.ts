import { test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { describeConformance } from "./harness.ts";
import { KEEPASSXC } from "./stores.ts";

const skip = linuxOnly("the conformance suite over KeePassXC");
if (skip === false) describeConformance(KEEPASSXC);
else test("conformance over KeePassXC", { skip }, () => {});
