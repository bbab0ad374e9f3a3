import { test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession } from "../support/pass-session.ts";
import { describeProtocol } from "../support/protocol-suite.ts";

const skip = linuxOnly("the pass protocol suite");
if (skip !== false) {
  test("pass protocol suite", { skip }, () => {});
} else {
  describeProtocol("pass (gpg-encrypted files, no session bus)", async () => {
    const session = await startPassSession();
    return { env: session.env, args: ["--backend", "pass"], close: () => session.close() };
  });
}
