import { startPassSession } from "../support/pass-session.ts";
import { describeExec } from "../support/exec-suite.ts";

describeExec("pass (gpg-encrypted files, no session bus)", async () => {
  const session = await startPassSession();
  return { env: session.env, args: ["--backend", "pass"], close: () => session.close() };
});
