import { startKeyringSession } from "../support/keyring-session.ts";
import { describeProtocol } from "../support/protocol-suite.ts";

describeProtocol("the Secret Service (gnome-keyring)", async () => {
  const session = await startKeyringSession();
  return { env: session.env, args: [], close: () => session.close() };
});
