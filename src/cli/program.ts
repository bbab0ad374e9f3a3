import { Command } from "commander";
import { CliError, ExitCode } from "../errors.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { Io } from "./io.ts";
import { DEFAULT_SERVICE, parseServiceName } from "./options.ts";
import type { GlobalOptions } from "./options.ts";

/** What each verb does once its arguments are known; `run` supplies them. */
export interface VerbHandlers {
  get(options: GlobalOptions, host: Hostname): Promise<void>;
  store(options: GlobalOptions, host: Hostname): Promise<void>;
  forget(options: GlobalOptions, host: Hostname): Promise<void>;
}

const PROTOCOL_VERBS = "get, store or forget";

/**
 * The command line. Terraform runs `<executable> [args...] VERB HOSTNAME`, with the block's
 * `args` before the verb, so options live on the root command. Verbs are case-sensitive.
 */
export function buildProgram(io: Io, version: string, handlers: VerbHandlers): Command {
  const program = new Command("terraform-credentials-keychain")
    .description(
      "A Terraform and OpenTofu credentials helper that keeps API tokens in the operating system's keychain.",
    )
    .usage("[options] <verb> <hostname>")
    .version(version, "-v, --version", "print the version")
    .helpOption("-h, --help", "print this help")
    .option(
      "--service <name>",
      "keep entries under this service name, for separate sets of credentials (profiles)",
      parseServiceName,
      DEFAULT_SERVICE,
    )
    .exitOverride()
    .showSuggestionAfterError(false)
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .addHelpText(
      "after",
      `
Terraform or OpenTofu runs this program as a credentials helper:
  credentials_helper "keychain" { args = ["--service", "work"] }   (in ~/.terraformrc)
  get: print the stored JSON object, or {} when there is none
  store: read a JSON object from stdin and keep it whole, replacing what was there
  forget: delete the stored object (succeeds when there is none)`,
    );

  // Anything that is not a known verb lands here, so that it gets a one-line error
  // instead of commander's help text.
  program
    .argument("[verb]")
    .argument("[arguments...]")
    .action((verb: string | undefined) => {
      throw verb === undefined
        ? new CliError(`missing verb: expected ${PROTOCOL_VERBS} and a hostname`, ExitCode.Usage)
        : new CliError(
            `unknown verb ${JSON.stringify(verb)}: expected ${PROTOCOL_VERBS} (verbs are case-sensitive)`,
            ExitCode.Usage,
          );
    });

  const verbs = [
    ["get", "print the credentials stored for a host as JSON, or {} when there are none"],
    ["store", "store the JSON credentials object read from stdin for a host"],
    ["forget", "delete the credentials stored for a host"],
  ] as const;
  for (const [verb, description] of verbs) {
    program
      .command(verb)
      .description(description)
      .argument("<hostname>", "the host, as Terraform names it (e.g. app.terraform.io)")
      .action(async (hostname: string, _options: unknown, command: Command) => {
        await handlers[verb](globalOptions(command), normalizeHostname(hostname));
      });
  }
  return program;
}

function globalOptions(command: Command): GlobalOptions {
  const { service } = command.optsWithGlobals<{ service: string }>();
  return { service };
}
