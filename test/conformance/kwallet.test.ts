import { test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { describeConformance } from "./harness.ts";
import { KWALLET } from "./stores.ts";

const skip = linuxOnly("the conformance suite over KWallet");
if (skip === false) describeConformance(KWALLET);
else test("conformance over KWallet", { skip }, () => {});
