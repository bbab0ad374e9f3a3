import process from "node:process";
import { isSingleExecutable, TARGET, VERSION, versionLine } from "./system/build-info.ts";
import { run } from "./cli/run.ts";
import {
  loadStandardStreams,
  outputWritten,
  processOutput,
  streamsWereUsed,
} from "./system/process-output.ts";
import { isTerminal } from "./system/terminals.ts";
import { openStore } from "./stores/registry.ts";
import { builtin } from "./system/lazy-builtins.ts";
import { endOnSignals } from "./system/signal-forwarding.ts";
import { forbidCoreDumps } from "./system/core-dumps.ts";
import { hasAbandonedCalls } from "./system/deadline.ts";

endOnSignals();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function main(): Promise<number> {
  let home: string | undefined;
  return run(
    process.argv.slice(2),
    {
      stdin: {
        async *[Symbol.asyncIterator]() {
          yield* (await loadStandardStreams()).standardInput();
        },
      },
      stdinIsTTY: () => isTerminal(0),
      // Windows reads a pipe with blocking reads; the watchdog is loaded only there.
      ...(process.platform === "win32"
        ? {
            boundStdin: async (seconds: number, message: string) => {
              const { guardStdinReads } = await import("./system/deadline-watchdog.ts");
              (await loadStandardStreams()).guardWindowsReads(guardStdinReads(seconds, message));
            },
          }
        : {}),
      stdout: processOutput(1, () => process.stdout),
      stderr: processOutput(2, () => process.stderr),
      stdoutIsTTY: () => isTerminal(1),
      env: process.env,
      platform: process.platform,
      arch: process.arch,
      // Read once, when first asked (the config files, pass): node:os is not loaded for every call.
      get homedir() {
        return (home ??= builtin("node:os").homedir());
      },
      execPath: process.execPath,
      isSea: isSingleExecutable(),
      ...(process.getuid === undefined ? {} : { uid: process.getuid() }),
      processes: { pid: process.pid, isAlive },
    },
    {
      version: versionLine(VERSION, TARGET, process.versions),
      openStore,
      // Only once a token is about to be read (stdin, the keychain): see core-dumps.ts.
      protectSecrets: () => forbidCoreDumps(process.platform),
      // Loaded only for doctor's token check.
      httpsGet: async (request) => (await import("./system/https-get.ts")).httpsGet(request),
      // Loaded only for exec: node:child_process has no place in a get.
      runCommand: async (command, args, env) =>
        (await import("./system/run-command.ts")).runCommand(command, args, env, process),
    },
  );
}

void main().then(async (code) => {
  // With everything written, leave at once instead of tearing the runtime down (~1 ms); a
  // stream (asynchronous on Windows pipes) is left to flush as the process ends.
  await outputWritten();
  // A keychain call abandoned at its deadline still blocks a thread that process.exit
  // would wait for: end at once instead (the message is written by now).
  if (hasAbandonedCalls()) process.kill(process.pid, "SIGKILL");
  if (!streamsWereUsed()) process.exit(code);
  process.exitCode = code;
});
