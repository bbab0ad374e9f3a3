import { test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { describeConformance } from "./harness.ts";
import { PASS } from "./stores.ts";

const skip = linuxOnly("the conformance suite over pass");
if (skip === false) describeConformance(PASS);
else test("conformance over pass", { skip }, () => {});
