import { OTHER_UNIXES, type StoreDescription } from "../store-description.ts";
import { serviceFolder } from "./entry-names.ts";

/** The standard Unix password store, wherever `pass` and gpg run. */
export const passStore: StoreDescription = {
  name: "pass",
  title: "pass",
  platforms: [...OTHER_UNIXES, "darwin", "win32"],
  open: async (context) => (await import("./open.ts")).openPassStore(context),
  probe: async ({ io, deadline }) =>
    (await import("./pass-probe.ts")).probePass(io.env, io.homedir, io.platform, deadline),
  // The service's folder, whatever it holds: no list of hosts needed.
  deleteCommands: (service, _hosts, env) => {
    const dir = env.PASSWORD_STORE_DIR;
    return [
      {
        words: ["pass", "rm", "-r", "-f", serviceFolder(service)],
        ...(dir === undefined || dir === ""
          ? {}
          : { variable: { name: "PASSWORD_STORE_DIR", value: dir } }),
      },
    ];
  },
  fixes: [
    "pass-store-missing",
    "gpg-key-missing",
    "gpg-key-locked",
    "gpg-agent-hung",
    "gpg-key-elsewhere",
  ],
};
