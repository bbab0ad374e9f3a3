import { startKeyringSession } from "../support/keyring-session.ts";
import { describeExec } from "../support/exec-suite.ts";

describeExec("the Secret Service (gnome-keyring)", async () => {
  const session = await startKeyringSession();
  return { env: session.env, args: [], close: () => session.close() };
});
