import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  helperCommand,
  runHelper,
  type HelperResult,
  type HelperRunOptions,
} from "./helper-process.ts";

// Runs the command after the file name with this process's stdio, then writes the peak
// resident memory of what it waited for (ru_maxrss: KiB on Linux) to that file.
const MEASURE = [
  "import resource, subprocess, sys",
  "code = subprocess.call(sys.argv[2:])",
  "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))",
  "sys.exit(code if code >= 0 else 128 - code)",
].join("\n");

/**
 * Runs the built helper as `runHelper` does, and also gives the peak resident memory in MB
 * of the helper (or of a process it waited for, if one took more).
 */
export async function runHelperMeasured(
  args: readonly string[],
  options: HelperRunOptions,
): Promise<HelperResult & { readonly peakMegabytes: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-peak-"));
  try {
    const file = path.join(dir, "peak");
    const result = await runHelper(args, {
      ...options,
      command: ["python3", "-c", MEASURE, file, ...helperCommand()],
    });
    return { ...result, peakMegabytes: Number(readFileSync(file, "utf8")) / 1024 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
