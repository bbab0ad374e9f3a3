import type { StoreDescription } from "../store-description.ts";
import { entryName } from "../windows-entry-name.ts";

/** The keychain of Windows: Credential Manager, through advapi32 (the Windows executable only). */
export const credentialManagerStore: StoreDescription = {
  name: "keychain",
  title: "the keychain",
  platforms: ["win32"],
  open: async (context) => (await import("./open.ts")).openCredentialManagerStore(context),
  // Only the Windows executable has the FFI: loaded here, never elsewhere.
  probe: async ({ service, deadline }) =>
    (await import("./open.ts")).probeCredentialManagerNow(service, deadline),
  deleteCommands: (service, hosts) =>
    hosts?.map((host) => ({ words: ["cmdkey", `/delete:${entryName(service, host)}`] })),
  fixes: ["credential-manager-unusable", "entry-unreadable"],
};
