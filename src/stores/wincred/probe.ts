import { CliError } from "../../errors.ts";
import { oneLine } from "../../quote.ts";
import { callLimits } from "../call-limits.ts";
import type { ProbeResult } from "../probe-result.ts";
import { findWindowsHelper, WindowsSideError } from "./windows-helper.ts";
import { createWincredStore } from "./store.ts";
import { wslMachine } from "./wsl-machine.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** Whether this is WSL at all: doctor and install speak of the Windows side only there. */
export function onWsl(env: Env): boolean {
  return wslMachine(env).interop !== undefined;
}

/**
 * What `doctor` learns of the Windows side without reading a secret: interop, the Windows
 * helper and its version, and Credential Manager through it (its `list`, which reads no
 * blob). All of it within `timeoutSeconds`.
 */
export async function probeWincred(
  env: Env,
  service: string,
  timeoutSeconds: number,
): Promise<ProbeResult> {
  const limits = callLimits(timeoutSeconds);
  try {
    const helper = await findWindowsHelper(env, limits);
    const version = await helper.run(["--version"]);
    const hosts = await createWincredStore(async () => helper, service, limits).list();
    return {
      status: "ok",
      summary: `WSL interop runs the Windows helper ${helper.windowsPath} (${oneLine(version.stdout.toString("utf8"), 40) || "no version"}), and Windows Credential Manager answers through it (${hosts.length} host${hosts.length === 1 ? "" : "s"} of service "${service}")`,
      safeToOpen: true,
    };
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    return {
      status: "fail",
      summary: error instanceof WindowsSideError ? error.problem : error.message,
      ...(error instanceof WindowsSideError ? { fix: error.fix } : {}),
      safeToOpen: false,
    };
  }
}
