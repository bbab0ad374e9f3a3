import type { StoreDescription } from "../store-description.ts";
import { entryName } from "../windows-entry-name.ts";

/**
 * Linux on WSL: the Windows login's Credential Manager, through the Windows helper run by
 * WSL interop, so its entries are those of Terraform on Windows. It serves Linux; whether
 * this Linux is WSL is `here`'s, whether interop and the Windows helper work its probe's.
 */
export const wincredStore: StoreDescription = {
  name: "wincred",
  title: "the Windows login's Credential Manager (shared with Terraform on Windows)",
  platforms: ["linux"],
  // WSL by its interop entry, on or off: off, the probe says how to switch it on.
  here: async (machine) =>
    (await import("./wsl-machine.ts")).wslMachine(machine.env).interop !== undefined,
  open: async (context) => (await import("./open.ts")).openWincredStore(context),
  probe: async ({ io, service, deadline }) =>
    (await import("./probe.ts")).probeWincred(io.env, service, deadline),
  // cmdkey.exe through interop, on the Windows helper's own entry names.
  deleteCommands: (service, hosts) =>
    hosts?.map((host) => ({ words: ["cmdkey.exe", `/delete:${entryName(service, host)}`] })),
  fixes: ["wsl-interop-off", "wsl-interop-failing", "windows-helper-missing", "windows-side-hung"],
};
