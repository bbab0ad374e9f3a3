import { Command } from "commander";
import { CliError, ExitCode } from "../errors.ts";
import { quote } from "../quote.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { Io } from "./io.ts";
import {
  BACKENDS,
  DEFAULT_SERVICE,
  parseBackend,
  parseServiceName,
  parseTimeout,
  TIMEOUT_VARIABLE,
} from "./options.ts";
import type { GlobalOptions } from "./options.ts";
import { DEFAULT_TIMEOUT_SECONDS } from "../stores/keychain-calls.ts";

/** What each verb does once its arguments are known; `run` supplies them. */
export interface VerbHandlers {
  get(options: GlobalOptions, host: Hostname): Promise<void>;
  store(options: GlobalOptions, host: Hostname): Promise<void>;
  forget(options: GlobalOptions, host: Hostname): Promise<void>;
}

/** The commands for people, beside the protocol verbs; they never change what the verbs do. */
export interface HumanHandlers {
  install(options: GlobalOptions, flags: { force: boolean; dryRun: boolean }): Promise<void>;
  uninstall(options: GlobalOptions, flags: { force: boolean; dryRun: boolean }): Promise<void>;
  import(
    options: GlobalOptions,
    flags: { keep: boolean; force: boolean; dryRun: boolean },
  ): Promise<void>;
  list(options: GlobalOptions, flags: { json: boolean }): Promise<void>;
  doctor(options: GlobalOptions): Promise<void>;
}

/** `exec`: runs a command with the stored tokens in its environment. */
export interface ExecHandler {
  exec(
    options: GlobalOptions,
    flags: { hosts: Hostname[]; tfe: Hostname | undefined },
    command: readonly string[],
  ): Promise<void>;
}

const PROTOCOL_VERBS = "get, store or forget";
const HUMAN_COMMANDS = "install, uninstall, import, list, doctor or exec";

/**
 * The command line. Terraform runs `<executable> [args...] VERB HOSTNAME`, with the block's
 * `args` before the verb, so options live on the root command. Verbs are case-sensitive.
 */
export function buildProgram(
  io: Io,
  version: string,
  handlers: VerbHandlers & HumanHandlers & ExecHandler,
): Command {
  const program = new Command("terraform-credentials-keychain")
    .description(
      "A Terraform and OpenTofu credentials helper that keeps API tokens in the operating system's keychain.",
    )
    .usage("[options] get|store|forget <hostname>  |  [options] <command>")
    .version(version, "-v, --version", "print the version")
    .helpOption("-h, --help", "print this help")
    .option(
      "--service <name>",
      "keep entries under this service name, for separate sets of credentials (profiles)",
      parseServiceName,
      DEFAULT_SERVICE,
    )
    .option(
      "--backend <store>",
      `where to keep the entries: ${BACKENDS.join(" or ")} (pass: the standard Unix password store, for machines without a desktop keyring)`,
      parseBackend,
      "keychain",
    )
    .option(
      "--timeout <seconds>",
      `give up a call to the keychain after this many seconds (default: $${TIMEOUT_VARIABLE}, else ${DEFAULT_TIMEOUT_SECONDS})`,
      (value: string) => parseTimeout(value),
    )
    .exitOverride()
    .showSuggestionAfterError(false)
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Terraform already prefixes a helper's message with "error in <path>:".
      outputError: (text, write) => write(text.replace(/^error: /, "")),
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
        ? new CliError(
            `missing command: Terraform runs get, store or forget HOSTNAME; people run ${HUMAN_COMMANDS} (see --help)`,
            ExitCode.Usage,
          )
        : new CliError(
            `unknown verb ${quote(verb)}: expected ${PROTOCOL_VERBS} (verbs are case-sensitive)`,
            ExitCode.Usage,
          );
    });

  program.commandsGroup("Protocol verbs (run by Terraform):");
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

  program.commandsGroup("Commands for people:");
  program.helpCommand("help [command]", "print this help, or a command's");
  program
    .command("install")
    .description(
      "copy this executable where Terraform and OpenTofu find it and add the credentials_helper block",
    )
    .option("--force", "replace a different credentials_helper block")
    .option("--dry-run", "print what would be done and change nothing")
    .action(async (flags: { force?: boolean; dryRun?: boolean }, command: Command) => {
      await handlers.install(globalOptions(command), {
        force: flags.force === true,
        dryRun: flags.dryRun === true,
      });
    });
  program
    .command("uninstall")
    .description(
      "remove the credentials_helper block, and the installed executable once no other CLI config names it",
    )
    .option("--force", "remove the executable even when another CLI config still names it")
    .option("--dry-run", "print what would be done and change nothing")
    .action(async (flags: { force?: boolean; dryRun?: boolean }, command: Command) => {
      await handlers.uninstall(globalOptions(command), {
        force: flags.force === true,
        dryRun: flags.dryRun === true,
      });
    });
  program
    .command("import")
    .description("move the tokens in credentials.tfrc.json into the store --backend selects")
    .option("--keep", "copy them and leave credentials.tfrc.json as it is")
    .option("--force", "replace different credentials the store already holds for a host")
    .option("--dry-run", "print what would be done and change nothing")
    .action(
      async (flags: { keep?: boolean; force?: boolean; dryRun?: boolean }, command: Command) => {
        await handlers.import(globalOptions(command), {
          keep: flags.keep === true,
          force: flags.force === true,
          dryRun: flags.dryRun === true,
        });
      },
    );
  program
    .command("list")
    .description("print the hosts that have credentials (names only)")
    .option("--json", "print a JSON array")
    .action(async (flags: { json?: boolean }, command: Command) => {
      await handlers.list(globalOptions(command), { json: flags.json === true });
    });
  program
    .command("doctor")
    .description(
      "check the keychain, the installation and the CLI config, and say how to fix what is wrong",
    )
    .action(async (_flags: unknown, command: Command) => {
      await handlers.doctor(globalOptions(command));
    });
  program
    .command("exec")
    .description(
      "run a command with the stored tokens as TF_TOKEN_* variables, for tools that never run a credentials helper",
    )
    .usage("[--host HOST]... [--tfe HOST] -- COMMAND [ARG...]")
    .option(
      "--host <hostname>",
      "pass only this host's token (repeatable)",
      (value: string, previous: Hostname[] | undefined) => [
        ...(previous ?? []),
        normalizeHostname(value),
      ],
    )
    .option(
      "--tfe <hostname>",
      "also set TFE_TOKEN and TFE_HOSTNAME for this host",
      normalizeHostname,
    )
    .argument("[command...]")
    .action(
      async (command: string[], flags: { host?: Hostname[]; tfe?: Hostname }, self: Command) => {
        if (command.length === 0) {
          throw new CliError(
            "exec: missing command: exec [--host HOST]... -- COMMAND [ARG...]",
            ExitCode.Usage,
          );
        }
        await handlers.exec(
          globalOptions(self),
          { hosts: flags.host ?? [], tfe: flags.tfe },
          command,
        );
      },
    );
  return program;
}

function globalOptions(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}
