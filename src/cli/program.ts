import { Command } from "commander";
import { CliError, ExitCode } from "../errors.ts";
import { quote } from "../system/quote.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { Io } from "../system/io.ts";
import { DEFAULT_SERVICE, parseServiceName } from "../commands/options.ts";
import type { GlobalOptions } from "../commands/options.ts";
import { BACKENDS, parseBackend } from "../stores/registry.ts";
import { DEFAULT_TIMEOUT_SECONDS, parseTimeout, TIMEOUT_VARIABLE } from "../system/deadline.ts";

/**
 * What each verb does once its arguments are known; `run` supplies them. They take the
 * options given on the line, each absent when not given: `run` decides the rest.
 */
export interface VerbHandlers {
  get(given: Partial<GlobalOptions>, host: Hostname): Promise<void>;
  store(given: Partial<GlobalOptions>, host: Hostname): Promise<void>;
  forget(given: Partial<GlobalOptions>, host: Hostname): Promise<void>;
}

/** The commands for people, beside the protocol verbs; they never change what the verbs do. */
export interface HumanHandlers {
  install(options: GlobalOptions, flags: { force: boolean; dryRun: boolean }): Promise<void>;
  // These take the options given on the command line, each absent when not given: they
  // follow the installed block for the rest (see followed-options.ts).
  uninstall(
    given: Partial<GlobalOptions>,
    flags: { force: boolean; dryRun: boolean; forget: boolean },
  ): Promise<void>;
  import(
    given: Partial<GlobalOptions>,
    flags: { keep: boolean; force: boolean; dryRun: boolean },
  ): Promise<void>;
  list(given: Partial<GlobalOptions>, flags: { json: boolean }): Promise<void>;
  doctor(given: Partial<GlobalOptions>, flags: { offline: boolean }): Promise<void>;
}

/** `exec`: runs a command with the stored tokens in its environment. */
export interface ExecHandler {
  exec(
    given: Partial<GlobalOptions>,
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
      `keep entries under this service name, for separate sets of credentials (profiles) (default: the installed credentials_helper block's, else "${DEFAULT_SERVICE}"; see below)`,
      parseServiceName,
    )
    .option(
      "--backend <store>",
      `where to keep the entries: ${BACKENDS.join(", ")} (pass: the standard Unix password store, for machines without a desktop keyring; wincred: in WSL, Windows Credential Manager through the Windows helper) (default: the installed credentials_helper block's, else keychain; see below)`,
      parseBackend,
    )
    .option(
      "--timeout <seconds>",
      `give up a call to the keychain after this many seconds (default: $${TIMEOUT_VARIABLE}, else ${DEFAULT_TIMEOUT_SECONDS})`,
      (value: string) => parseTimeout(value),
    )
    .exitOverride()
    .showSuggestionAfterError(false)
    // `help list` shows --backend, --service and --timeout too: they apply to every command.
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(ourWording(undefined, text)),
    })
    .addHelpText(
      "after",
      `
Terraform or OpenTofu runs this program as a credentials helper:
  credentials_helper "keychain" { args = ["--service", "work"] }   (in ~/.terraformrc)
  get: print the stored JSON object, or {} when there is none
  store: read a JSON object from stdin and keep it whole, replacing what was there
  forget: delete the stored object (succeeds when there is none)

Without --backend or --service, every command but install takes them from the installed
credentials_helper block, except get, store and forget run with the streams Terraform gives a
helper (no terminal: stdin /dev/null or a pipe, stdout a pipe or /dev/null, stderr a pipe),
which use only their own command line.`,
    );

  // Anything that is not a known verb lands here, so that it gets a one-line error
  // instead of commander's help text.
  program
    .argument("[verb]")
    .argument("[arguments...]")
    .action((verb: string | undefined) => {
      throw verb === undefined
        ? new CliError(
            `missing command: Terraform runs ${PROTOCOL_VERBS} HOSTNAME; people run ${HUMAN_COMMANDS} (see --help)`,
            ExitCode.Usage,
          )
        : unknownCommand(verb);
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
      .configureOutput({ outputError: (text, write) => write(ourWording(verb, text)) })
      .action(async (hostname: string, _options: unknown, command: Command) => {
        await handlers[verb](givenOptions(command), normalizeHostname(hostname));
      });
  }

  program.commandsGroup("Commands for people:");
  // Our own `help`: commander's prints the whole help and exits 0 for a name it does not know.
  program.helpCommand(false);
  program
    .command("help")
    .description("print this help, or a command's")
    .argument("[command]")
    .action((name: string | undefined) => {
      if (name === undefined) {
        program.outputHelp();
        return;
      }
      const command = program.commands.find((each) => each.name() === name && name !== "help");
      if (command === undefined) throw unknownCommand(name);
      command.outputHelp();
    });
  program
    .command("install")
    .configureOutput({ outputError: (text, write) => write(ourWording("install", text)) })
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
    .configureOutput({ outputError: (text, write) => write(ourWording("uninstall", text)) })
    .description(
      "remove the credentials_helper block, and the installed executable once no other CLI config names it",
    )
    .option("--force", "remove the executable even when another CLI config still names it")
    .option("--forget", "also delete every token kept in the store the block uses")
    .option("--dry-run", "print what would be done and change nothing")
    .action(
      async (flags: { force?: boolean; dryRun?: boolean; forget?: boolean }, command: Command) => {
        await handlers.uninstall(givenOptions(command), {
          force: flags.force === true,
          dryRun: flags.dryRun === true,
          forget: flags.forget === true,
        });
      },
    );
  program
    .command("import")
    .configureOutput({ outputError: (text, write) => write(ourWording("import", text)) })
    .description(
      "move the tokens in credentials.tfrc.json and in credentials blocks of the CLI config into the store --backend selects",
    )
    .option("--keep", "copy them and leave the files as they are")
    .option("--force", "replace different credentials the store already holds for a host")
    .option("--dry-run", "print what would be done and change nothing")
    .action(
      async (flags: { keep?: boolean; force?: boolean; dryRun?: boolean }, command: Command) => {
        await handlers.import(givenOptions(command), {
          keep: flags.keep === true,
          force: flags.force === true,
          dryRun: flags.dryRun === true,
        });
      },
    );
  program
    .command("list")
    .configureOutput({ outputError: (text, write) => write(ourWording("list", text)) })
    .description("print the hosts that have credentials (names only)")
    .option("--json", "print a JSON array")
    .action(async (flags: { json?: boolean }, command: Command) => {
      await handlers.list(givenOptions(command), { json: flags.json === true });
    });
  program
    .command("doctor")
    .configureOutput({ outputError: (text, write) => write(ourWording("doctor", text)) })
    .description(
      "check the keychain, the installation, the CLI config and each stored token with its host, and say how to fix what is wrong",
    )
    .option("--offline", "do not check the stored tokens with their hosts (no network access)")
    .action(async (flags: { offline?: boolean }, command: Command) => {
      await handlers.doctor(givenOptions(command), { offline: flags.offline === true });
    });
  program
    .command("exec")
    .configureOutput({ outputError: (text, write) => write(ourWording("exec", text)) })
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
          givenOptions(self),
          { hosts: flags.host ?? [], tfe: flags.tfe },
          command,
        );
      },
    );
  return program;
}

/** Every command a person can name, for "did you mean". */
const COMMAND_NAMES = [
  "get",
  "store",
  "forget",
  "install",
  "uninstall",
  "import",
  "list",
  "doctor",
  "exec",
  "help",
] as const;

/**
 * A word that names no command, in one line: the command it most likely meant (a typo, a
 * letter case, "version" for --version), else what Terraform and people run.
 */
function unknownCommand(word: string): CliError {
  const meant = meantCommand(word);
  const caseOnly = meant !== undefined && meant.toLowerCase() === word.toLowerCase();
  return new CliError(
    meant === undefined
      ? `unknown command ${quote(word)}: Terraform runs ${PROTOCOL_VERBS} HOSTNAME; people run ${HUMAN_COMMANDS} (see --help)`
      : `unknown command ${quote(word)}: did you mean ${quote(meant)}?${caseOnly ? " (commands are case-sensitive)" : ""}`,
    ExitCode.Usage,
  );
}

function meantCommand(word: string): string | undefined {
  const lower = word.toLowerCase();
  if (lower === "version") return "--version";
  let best: { name: string; distance: number } | undefined;
  for (const name of COMMAND_NAMES) {
    const distance = editDistance(lower, name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  // One edit for short words, two from five letters on: "lsit", "instal", "uninstal".
  const allowed = word.length >= 5 ? 2 : 1;
  return best !== undefined && best.distance <= allowed ? best.name : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, swaps of two. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        distance = Math.min(distance, at(i - 2, j - 2) + 1);
      const row = rows[i];
      if (row !== undefined) row[j] = distance;
    }
  }
  return at(a.length, b.length);
}

/**
 * Commander's error text in our words: one line, lowercase, naming the command and how it is
 * written. Terraform already prefixes a helper's message with "error in <path>:", so the
 * "error: " commander puts first goes.
 */
function ourWording(command: string | undefined, text: string): string {
  const message = text.replace(/^error: /, "").trimEnd();
  const help = command === undefined ? "--help" : `${command} --help`;
  let match;
  if (command !== undefined && message.startsWith("too many arguments")) {
    return (["get", "store", "forget"] as readonly string[]).includes(command)
      ? `too many arguments: ${command} takes one hostname (${command} HOSTNAME)\n`
      : `too many arguments for ${command} (see "${help}")\n`;
  }
  if ((match = /^missing required argument '(.*)'$/.exec(message)) !== null) {
    return (
      `missing ${match[1] ?? "argument"}: ${command ?? ""} ${(match[1] ?? "").toUpperCase()}`.trimEnd() +
      "\n"
    );
  }
  if ((match = /^option '(\S+)[^']*' argument missing$/.exec(message)) !== null) {
    return `${match[1] ?? "the option"} needs a value (see "${help}")\n`;
  }
  if ((match = /^unknown option '(.*)'$/.exec(message)) !== null) {
    return `unknown option ${quote(match[1] ?? "")}${command === undefined ? "" : ` for ${command}`} (see "${help}")\n`;
  }
  return `${message}\n`;
}

/**
 * Moves a command's own options given before it to after it: `--force install` is read as
 * `install --force`. Options of the root (--service, --backend, --timeout, --help,
 * --version) stay where they are, and a line that names no command for people is left alone.
 */
export function commandOptionsAfterCommand(argv: readonly string[]): string[] {
  const before: string[] = [];
  const moved: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? "";
    if (word === "--" || !word.startsWith("-")) {
      const isHuman = (HUMAN_COMMAND_NAMES as readonly string[]).includes(word);
      return moved.length > 0 && isHuman
        ? [...before, word, ...moved, ...argv.slice(i + 1)]
        : [...argv];
    }
    const takesValue = /^--(service|backend|timeout)$/.test(word);
    if (
      takesValue ||
      /^--(service|backend|timeout)=/.test(word) ||
      /^(-h|--help|-v|--version)$/.test(word)
    ) {
      before.push(word);
      if (takesValue && i + 1 < argv.length) before.push(argv[++i] ?? "");
    } else {
      moved.push(word);
      // exec's options that take a value carry it along.
      if (/^--(host|tfe)$/.test(word) && i + 1 < argv.length) moved.push(argv[++i] ?? "");
    }
  }
  return [...argv];
}

const HUMAN_COMMAND_NAMES = ["install", "uninstall", "import", "list", "doctor", "exec"] as const;

/** The root's options given on the command line, each absent when not given. */
function givenOptions(command: Command): Partial<GlobalOptions> {
  // Only the root's: a command's own flags (--json, --force) are not among them.
  const { service, backend, timeout } = command.optsWithGlobals<Partial<GlobalOptions>>();
  return {
    ...(service === undefined ? {} : { service }),
    ...(backend === undefined ? {} : { backend }),
    ...(timeout === undefined ? {} : { timeout }),
  };
}

/** The root's options, the defaults for those not given. */
function globalOptions(command: Command): GlobalOptions {
  const { service = DEFAULT_SERVICE, backend = "keychain", ...rest } = givenOptions(command);
  return { service, backend, ...rest };
}
