import { CliError, ExitCode } from "../errors.ts";
import type { Hostname } from "../protocol/hostname.ts";
import { quote } from "../system/quote.ts";
import type { CommandOutcome } from "../system/run-command.ts";
import { signalExitCode } from "../system/signal-forwarding.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import type { Io } from "../system/io.ts";
import type { GlobalOptions } from "../commands/options.ts";
import type { ExecHandler } from "./program.ts";

/** Runs a command with our standard streams and `env`; supplied by main.ts. */
export type CommandRunner = (
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
) => Promise<CommandOutcome>;

/** Exit codes a shell uses for a command it could not run. */
const NOT_EXECUTABLE = 126;
const NOT_FOUND = 127;

/**
 * `exec`: reads the tokens, builds the command's environment and runs it. Writes nothing of
 * its own unless something fails; sets `ended.code` to what the command's ending maps to.
 */
export function execHandler(
  io: Io,
  openStore: (options: GlobalOptions) => CredentialStore | Promise<CredentialStore>,
  runCommand: CommandRunner | undefined,
  ended: { code?: number },
): ExecHandler {
  return {
    async exec(given, { hosts, tfe }, [command, ...args]) {
      if (runCommand === undefined || command === undefined) {
        throw new Error("exec needs a command and a way to run it");
      }
      if (command === "") {
        throw new CliError('exec: the command after "--" is empty', ExitCode.Usage);
      }
      const [{ storedTokens, nulMessage }, { execEnvironment }] = await Promise.all([
        import("../commands/exec.ts"),
        import("../terraform/token-variables.ts"),
      ]);
      const { followedOptions } = await import("./followed-options.ts");
      // Nothing of its own when all goes well: the block it follows is not news.
      const options = await followedOptions(io, given, {
        unreadable: (line) => io.stderr.write(`${line}\n`),
      });
      const store = await openStore(options);
      const only: Hostname[] | undefined =
        hosts.length > 0
          ? [...new Set([...hosts, ...(tfe === undefined ? [] : [tfe])])]
          : undefined;
      const tokens = await storedTokens(store, only, (host) => {
        io.stderr.write(`warning: left out: ${nulMessage(host)}\n`);
      });
      if (tfe !== undefined && !tokens.has(tfe)) {
        throw new CliError(`no token stored for ${tfe}: run "terraform login ${tfe}" first`);
      }
      const env = execEnvironment(io.env, tokens, tfe);
      const outcome = await runCommand(command, args, env);
      switch (outcome.kind) {
        case "exited":
          ended.code = outcome.code;
          return;
        case "signalled":
          ended.code = signalExitCode(outcome.signal);
          return;
        case "not-found":
          io.stderr.write(`exec: command not found: ${quote(command)}\n`);
          ended.code = NOT_FOUND;
          return;
        case "not-executable":
          io.stderr.write(`exec: permission denied: ${quote(command)}\n`);
          ended.code = NOT_EXECUTABLE;
          return;
        case "too-big":
          io.stderr.write(
            `exec: could not start ${quote(command)}: its arguments and environment are larger than the system allows (E2BIG); pass fewer tokens with --host\n`,
          );
          ended.code = NOT_EXECUTABLE;
          return;
        case "not-started":
          io.stderr.write(`exec: could not start ${quote(command)} (${outcome.code})\n`);
          ended.code = NOT_EXECUTABLE;
          return;
      }
    },
  };
}
