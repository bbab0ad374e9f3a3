import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { PATIENCE_MS } from "./timing.ts";

/**
 * The built single executable that integration tests run: the host's build, or the one
 * named by TFCK_TEST_HELPER, run through the command in TFCK_TEST_RUNNER when set (for
 * example a linux-arm64 build under "qemu-aarch64 -L /usr/aarch64-linux-gnu").
 */
export const HELPER_BINARY = path.resolve(
  process.env.TFCK_TEST_HELPER ??
    path.join(
      import.meta.dirname,
      "../../dist",
      `terraform-credentials-keychain${process.platform === "win32" ? ".exe" : ""}`,
    ),
);
const RUNNER = (process.env.TFCK_TEST_RUNNER ?? "").split(" ").filter((word) => word !== "");

export function requireBuiltHelper(): string {
  if (!existsSync(HELPER_BINARY))
    throw new Error(`${HELPER_BINARY} is missing: run "npm run build" first`);
  return HELPER_BINARY;
}

/** The command line that runs the built helper: the runner's words, then the binary. */
export function helperCommand(): [string, ...string[]] {
  const helper = requireBuiltHelper();
  return RUNNER.length > 0 ? [RUNNER[0]!, ...RUNNER.slice(1), helper] : [helper];
}

export interface HelperResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the helper read everything written to its stdin (the pipe never broke). */
  readonly stdinDrained: boolean;
  readonly milliseconds: number;
}

export interface HelperRunOptions {
  readonly env: Record<string, string | undefined>;
  /** The command line that runs the helper, when not `helperCommand()` (Wine, qemu). */
  readonly command?: readonly [string, ...string[]];
  /** Bytes or text for stdin; omitted: stdin is the null device, as Terraform gives `get`. */
  readonly stdin?: string | Uint8Array;
  readonly timeoutMs?: number;
  /** Keep stdin open after writing it, until the helper exits (a writer that never closes). */
  readonly holdStdinOpen?: boolean;
  /** The working directory; omitted: the test's own. */
  readonly cwd?: string;
}

/**
 * Wine's own failure to talk to its wineserver ("wine client error:4dc: sendmsg: Socket
 * operation on non-socket", ":550:"), seen about once in a few hundred Wine processes on a
 * loaded machine: Wine's IPC, before or around the helper, not the helper's doing.
 */
const WINE_CLIENT_ERROR = /^wine client error:[0-9a-f]+:/m;

/**
 * Runs the built helper with `args` and collects what it printed. Under Wine, a run that
 * Wine itself broke (WINE_CLIENT_ERROR) is run again, up to twice; every call the suites
 * make is one that may run twice (a get, a store of the same object, a forget).
 */
export async function runHelper(
  args: readonly string[],
  options: HelperRunOptions,
): Promise<HelperResult> {
  const underWine = /wine/.test(path.basename(options.command?.[0] ?? ""));
  for (let attempt = 0; ; attempt++) {
    const result = await runHelperOnce(args, options);
    if (!underWine || attempt >= 2 || !WINE_CLIENT_ERROR.test(result.stderr)) return result;
  }
}

function runHelperOnce(args: readonly string[], options: HelperRunOptions): Promise<HelperResult> {
  const started = performance.now();
  const [command, ...commandArgs] = options.command ?? helperCommand();
  const child = spawn(command, [...commandArgs, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    timeout: options.timeoutMs ?? PATIENCE_MS,
  });
  let stdout = "";
  let stderr = "";
  let stdinDrained = options.stdin === undefined;
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  if (options.stdin !== undefined && child.stdin) {
    // As Terraform's writer: a helper that leaves before reading everything makes it fail
    // with EPIPE, which is what stdinDrained reports.
    child.stdin.on("error", () => (stdinDrained = false));
    if (options.holdStdinOpen === true) {
      child.stdin.write(options.stdin);
      child.on("exit", () => child.stdin?.destroy());
    } else {
      child.stdin.end(options.stdin, () => (stdinDrained = true));
    }
  }
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code, stdout, stderr, stdinDrained, milliseconds: performance.now() - started }),
    );
  });
}
