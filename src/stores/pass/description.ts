import { OTHER_UNIXES, type StoreDescription } from "../store-description.ts";
import { encodeHostForPath, serviceFolder } from "./entry-names.ts";

/** The standard Unix password store, wherever `pass` and gpg run. */
export const passStore: StoreDescription = {
  name: "pass",
  title: "pass",
  platforms: [...OTHER_UNIXES, "darwin", "win32"],
  open: async (context) => (await import("./open.ts")).openPassStore(context),
  probe: async ({ service, io, deadline }) =>
    (await import("./pass-probe.ts")).probePass(service, io.env, io.homedir, io.platform, deadline),
  // One `pass rm` per entry: `rm -r` of the folder would delete a team's .gpg-id with it.
  deleteCommands: (service, hosts, env) => {
    if (hosts === undefined) return undefined;
    const dir = env.PASSWORD_STORE_DIR;
    return hosts.map((host) => ({
      words: ["pass", "rm", "-f", `${serviceFolder(service)}/${encodeHostForPath(host)}`],
      ...(dir === undefined || dir === ""
        ? {}
        : { variable: { name: "PASSWORD_STORE_DIR", value: dir } }),
    }));
  },
  sharedWith: async ({ io, deadline }) => {
    const { storeRemotes } = await import("./team-state.ts");
    const { passStoreDir } = await import("./store-dir.ts");
    const remotes = await storeRemotes(passStoreDir(io.env, io.homedir), io.env, deadline);
    return remotes.length === 0
      ? undefined
      : `its git remote${remotes.length === 1 ? "" : "s"} ${remotes.join(", ")}`;
  },
  sync: async (context) => (await import("./sync.ts")).syncPassStore(context),
  fixes: [
    "store-needs-doctor",
    "pass-missing",
    "pass-store-dir-relative",
    "pass-store-missing",
    "gpg-key-missing",
    "gpg-key-locked",
    "gpg-agent-hung",
    "gpg-key-elsewhere",
    "pass-not-recipient",
    "gpg-recipient-untrusted",
    "gpg-recipient-missing",
    "pass-merge-in-progress",
    "pass-rebase-in-progress",
    "pass-sync-conflict",
    "pass-store-unsynced",
    "pass-commit-failed",
  ],
};
