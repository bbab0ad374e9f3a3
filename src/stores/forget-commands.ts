import type { Hostname } from "../protocol/hostname.ts";
import { entryName } from "./credential-manager/store.ts";
import { serviceFolder } from "./pass/pass-store.ts";

/**
 * Commands of a store's own tools (each as its words) that delete what the helper keeps for
 * `service`: for when the helper itself is gone, as after the last `uninstall`. pass deletes
 * the service's folder whatever it holds; the keychains delete one entry per host, named as
 * each store names them (secret-service/store.ts, macos-keychain/, credential-manager/).
 * wincred's run from WSL: cmdkey.exe through interop, on the Windows helper's entry names.
 * `undefined` when no tool of the store can, without the list of hosts.
 */
export function storeForgetCommands(
  backend: "keychain" | "pass" | "wincred",
  platform: NodeJS.Platform,
  service: string,
  hosts: readonly Hostname[] | undefined,
): (readonly string[])[] | undefined {
  if (backend === "pass") return [["pass", "rm", "-r", "-f", serviceFolder(service)]];
  if (hosts === undefined) return undefined;
  return hosts.map((host) =>
    backend === "wincred"
      ? ["cmdkey.exe", `/delete:${entryName(service, host)}`]
      : platform === "win32"
        ? ["cmdkey", `/delete:${entryName(service, host)}`]
        : platform === "darwin"
          ? ["security", "delete-generic-password", "-s", service, "-a", host]
          : ["secret-tool", "clear", "service", service, "username", host],
  );
}
