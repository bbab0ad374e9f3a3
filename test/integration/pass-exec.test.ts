import { test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession } from "../support/pass-session.ts";
import { describeExec } from "../support/exec-suite.ts";

const skip = linuxOnly("the pass exec suite");
if (skip !== false) {
  test("pass exec suite", { skip }, () => {});
} else {
  describeExec("pass (gpg-encrypted files, no session bus)", async () => {
    const session = await startPassSession();
    return { env: session.env, args: ["--backend", "pass"], close: () => session.close() };
  });
}
