import { OTHER_UNIXES, type StoreDescription } from "../store-description.ts";

/** The keychain of Linux and the BSDs: the Secret Service on the session bus. */
export const secretServiceStore: StoreDescription = {
  name: "keychain",
  title: "the keychain",
  platforms: OTHER_UNIXES,
  open: async (context) => (await import("./open.ts")).openSecretServiceStore(context),
  probe: async ({ io, deadline }) =>
    (await import("./probe.ts")).probeSecretService(io.env, deadline),
  // One entry per host, found by the attributes store.ts gives it.
  deleteCommands: (service, hosts) =>
    hosts?.map((host) => ({
      words: ["secret-tool", "clear", "service", service, "username", host],
    })),
  fixes: [
    "session-bus-missing",
    "secret-service-missing",
    "no-default-collection",
    "keyring-locked",
    "keyring-password-wrong",
    "other-keyring-locked",
    "no-default-chosen",
    "unlock-prompt-dismissed",
    "keyring-on-desktop",
    "entry-unreadable",
    "several-items",
  ],
};
