import { CliError } from "../../errors.ts";
import { oneLine } from "../../system/quote.ts";
import type { Deadline } from "../../system/deadline.ts";
import type { ProbeResult } from "../store-description.ts";
import { findWindowsHelper } from "./windows-helper.ts";
import { createWincredStore } from "./store.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * What `doctor` learns of the Windows side without reading a secret: that this is WSL with
 * interop on, the Windows helper and its version, and Credential Manager through it (its
 * `list`, which reads no blob). All of it by `deadline`.
 */
export async function probeWincred(
  env: Env,
  service: string,
  deadline: Deadline,
): Promise<ProbeResult> {
  try {
    const helper = await findWindowsHelper(env, deadline);
    const version = await helper.run(["--version"]);
    const hosts = await createWincredStore(() => Promise.resolve(helper), service, deadline).list();
    return {
      status: "ok",
      summary: `WSL interop runs the Windows helper ${helper.windowsPath} (${oneLine(version.stdout, 40) || "no version"}), and Windows Credential Manager answers through it (${hosts.length} host${hosts.length === 1 ? "" : "s"} of service "${service}")`,
      safeToOpen: true,
    };
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    return {
      status: "fail",
      summary: error.message,
      ...(error.fix === undefined ? {} : { fix: error.fix }),
      safeToOpen: false,
    };
  }
}
