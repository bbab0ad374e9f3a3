import { execFile } from "node:child_process";

/**
 * What `command` printed on stdout, or `undefined` when it could not be run, failed or took
 * longer than `timeoutMs`: for probes, where "no answer" is itself the finding.
 */
export function outputOf(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout: timeoutMs }, (error, stdout) => {
      resolve(error ? undefined : stdout);
    });
  });
}
