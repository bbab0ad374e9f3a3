import { CliError, ExitCode } from "../../errors.ts";
import { oneLine } from "../../system/quote.ts";
import { canonicalHostname, type Hostname } from "../../protocol/hostname.ts";
import type { CredentialStore } from "../../protocol/credential-store.ts";
import type { Deadline } from "../../system/deadline.ts";
import type { WindowsHelper } from "./windows-helper.ts";

/**
 * Windows Credential Manager from WSL: every call is the Windows helper's own verb, run
 * through interop with the protocol on its stdin and stdout, so the entries are exactly
 * those the helper on Windows keeps (its service and profile naming, credential-manager/),
 * and a token stored on either side is the other's. `--backend keychain` is always given:
 * on Windows that is Credential Manager, whatever block the Windows side has installed.
 * Each run gets what is left of the call's deadline as its own `--timeout`, and is ended
 * at the deadline if it has not ended itself. The secret passes only through the pipes.
 */
export function createWincredStore(
  helper: () => Promise<WindowsHelper>,
  service: string,
  deadline: Deadline,
): CredentialStore {
  const call = async (words: readonly string[], input?: string) => {
    const windows = await helper();
    // Whole tenths, at least one: the Windows helper accepts "1.5" but not "1e-3".
    const left = Math.max(0.1, Math.floor(deadline.remainingMs() / 100) / 10);
    const run = await windows.run(
      ["--service", service, "--backend", "keychain", "--timeout", String(left), ...words],
      input,
    );
    if (run.code !== 0) {
      const message = oneLine(run.stderr, 600);
      throw new CliError(
        `the Windows helper failed: ${message === "" ? `exit code ${run.code}, no message` : message}`,
      );
    }
    return run.stdout;
  };
  return {
    async get(host) {
      const printed = await call(["get", host]);
      // It always answers: "{}" when nothing is stored. Nothing at all is no stored entry
      // of any kind (interop lost its output, or the .exe is not the helper), and no reason
      // to delete one.
      if (printed.trim() === "") {
        throw new CliError(
          `the Windows helper answered nothing to "get ${host}" (exit code 0, no output)`,
          ExitCode.Failure,
          { fix: { situation: "wsl-interop-failing" } },
        );
      }
      // One JSON document and a newline; "{}" is "nothing stored" (protocol/verbs.ts).
      const object = printed.replace(/\r?\n$/, "");
      return object === "{}" ? undefined : object;
    },
    async store(host, secret) {
      await call(["store", host], secret);
    },
    async forget(host) {
      await call(["forget", host]);
    },
    async list() {
      const printed = await call(["list", "--json"]);
      let hosts: unknown;
      try {
        hosts = JSON.parse(printed);
      } catch {
        hosts = undefined;
      }
      if (!Array.isArray(hosts)) {
        throw new CliError(
          `the Windows helper's "list --json" printed no list (${oneLine(printed, 100)}); update it on the Windows side`,
        );
      }
      return hosts
        .map((host) => (typeof host === "string" ? canonicalHostname(host) : undefined))
        .filter((host): host is Hostname => host !== undefined)
        .sort();
    },
  };
}
