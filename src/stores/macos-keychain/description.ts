import type { StoreDescription } from "../store-description.ts";

/** The keychain of macOS, through the @napi-rs/keyring addon. */
export const macosKeychainStore: StoreDescription = {
  name: "keychain",
  title: "the keychain",
  platforms: ["darwin"],
  open: async (context) => (await import("./open.ts")).openKeychainStore(context),
  // Nothing to find out without asking the keychain itself, which may prompt.
  probe: async () => ({
    status: "ok",
    summary: "the system keychain is built in",
    safeToOpen: true,
  }),
  // One generic password per host: the service name as its service, the host as its account.
  deleteCommands: (service, hosts) =>
    hosts?.map((host) => ({
      words: ["security", "delete-generic-password", "-s", service, "-a", host],
    })),
  fixes: [],
};
