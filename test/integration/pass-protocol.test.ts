import { startPassSession } from "../support/pass-session.ts";
import { describeProtocol } from "../support/protocol-suite.ts";

describeProtocol("pass (gpg-encrypted files, no session bus)", async () => {
  const session = await startPassSession();
  return { env: session.env, args: ["--backend", "pass"], close: () => session.close() };
});
