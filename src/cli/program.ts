import { Command } from "commander";
import { CliError, ExitCode } from "../errors.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { CommandRunner } from "../commands/exec.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import type { HttpsGet } from "../system/https-get.ts";
import type { Io } from "../system/io.ts";
import { DEFAULT_SERVICE, parseServiceName } from "../commands/options.ts";
import type { GlobalOptions } from "../commands/options.ts";
import { BACKENDS, DEFAULT_BACKEND, parseBackend } from "../stores/registry.ts";
import {
  DEFAULT_TIMEOUT_SECONDS,
  parseTimeout,
  TIMEOUT_VARIABLE,
  type Deadline,
} from "../system/deadline.ts";
import { PROTOCOL_VERB_NAMES, type ProtocolVerb } from "./protocol-call.ts";
import { isForPeople, missingCommand, unknownCommand, usageError } from "./usage-errors.ts";

/**
 * What each verb does once its arguments are known; `run` supplies them. They take the
 * options given on the line, each absent when not given: `run` decides the rest.
 */
export type VerbHandlers = Record<
  ProtocolVerb,
  (given: Partial<GlobalOptions>, host: Hostname) => Promise<void>
>;

/** What the commands for people need from outside the process's streams; `run` supplies it. */
interface CommandContext {
  readonly version: string;
  /** Opens the store; under `deadline` when the command started one, else one from now. */
  openStore(
    options: GlobalOptions,
    deadline?: Deadline,
  ): CredentialStore | Promise<CredentialStore>;
  /** Sends doctor's HTTPS requests; absent where no request may leave (tests in-process). */
  readonly httpsGet?: HttpsGet;
  /** Runs `exec`'s command; absent where no child process may be started. */
  readonly runCommand?: CommandRunner;
  /** Where `exec` leaves its command's exit code, which can be any number. */
  readonly ended: { code?: number };
}

const VERB_DESCRIPTIONS: Record<ProtocolVerb, string> = {
  get: "print the credentials stored for a host as JSON, or {} when there are none",
  store: "store the JSON credentials object read from stdin for a host",
  forget: "delete the credentials stored for a host",
};

/** How every command but install picks its store, below each command's help. */
const STORE_RULE = `
One rule for every call, Terraform's, a script's or yours: the store is the one its command
line names with --backend or --service, else the one the args of the credentials_helper block
in effect name, else the default (--backend keychain --service terraform-credentials).`;

/**
 * Parses a command line that is not the protocol's fast path (see protocolCall) and runs
 * what it asks. Terraform runs `<executable> [args...] VERB HOSTNAME`, with the block's
 * `args` before the verb, so options live on the root command. Verbs are case-sensitive.
 * A usage error is a one-line CliError; help and version end in commander's own errors
 * ("commander.helpDisplayed", "commander.help", "commander.version").
 */
export async function runProgram(
  io: Io,
  context: CommandContext,
  verbs: VerbHandlers,
  argv: readonly string[],
): Promise<void> {
  const program = buildProgram(io, context, verbs);
  for (const command of [program, ...program.commands]) {
    command.exitOverride((error) => {
      throw usageError(error, command, argv) ?? error;
    });
  }
  await program.parseAsync(commandOptionsAfterCommand(program, argv), { from: "user" });
}

function buildProgram(io: Io, context: CommandContext, verbs: VerbHandlers): Command {
  const program: Command = new Command("terraform-credentials-keychain")
    .description(
      "A Terraform and OpenTofu credentials helper that keeps API tokens in the operating system's keychain.",
    )
    .usage("[options] get|store|forget <hostname>  |  [options] <command>")
    .version(context.version, "-v, --version", "print the version")
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
    .showSuggestionAfterError(false)
    .configureHelp({
      // `help list` shows --backend, --service and --timeout too: they apply to every command.
      showGlobalOptions: true,
      // A command's usage as Terraform calls it: the root's options go before its name.
      commandUsage: (command): string =>
        command.parent === null
          ? `${command.name()} ${command.usage()}`
          : `${command.parent.name()} ${rootOptionsUsage(command.parent)} ${command.name()} ${command.usage()}`,
    })
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Usage errors are ours to word, from commander's error codes (see usageError).
      outputError: () => undefined,
    })
    .addHelpText(
      "after",
      `
Terraform or OpenTofu runs this program as a credentials helper:
  credentials_helper "keychain" { args = ["--service", "work"] }   (in ~/.terraformrc)
  get: print the stored JSON object, or {} when there is none
  store: read a JSON object from stdin and keep it whole, replacing what was there
  forget: delete the stored object (succeeds when there is none)`,
    )
    // Below every command's help: the "see below" of --service and --backend.
    .addHelpText("afterAll", STORE_RULE);

  // Anything that is not a known verb lands here, so that it gets a one-line error
  // instead of commander's help text.
  program
    .argument("[verb]")
    .argument("[arguments...]")
    .action((verb: string | undefined) => {
      throw verb === undefined
        ? missingCommand(program, givenOptions(program))
        : unknownCommand(verb, program);
    });

  program.commandsGroup("Protocol verbs (run by Terraform):");
  for (const verb of PROTOCOL_VERB_NAMES) {
    program
      .command(verb)
      .description(VERB_DESCRIPTIONS[verb])
      .usage("<hostname>")
      .argument("<hostname>", "the host, as Terraform names it (e.g. app.terraform.io)")
      .action(async (hostname: string, _options: unknown, command: Command) => {
        await verbs[verb](givenOptions(command), normalizeHostname(hostname));
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
      if (command === undefined) throw unknownCommand(name, program);
      command.outputHelp();
    });

  // Each loads its modules only when it runs, so that the protocol verbs, which Terraform
  // runs over and over, never pay for them. The command returns data; render.ts words it.
  const openStore = (options: GlobalOptions, deadline?: Deadline) =>
    context.openStore(options, deadline);
  const follow = async (given: Partial<GlobalOptions>, tell = note(io)) =>
    (await import("./followed-options.ts")).followedOptions(io, given, {
      following: tell,
      unreadable: tell,
    });
  program
    .command("install")
    .description(
      "copy this executable where Terraform and OpenTofu find it and add the credentials_helper block",
    )
    .option("--force", "replace a different credentials_helper block")
    .option("--dry-run", "print what would be done and change nothing")
    .action(async (flags: { force?: boolean; dryRun?: boolean }, command: Command) => {
      const options = globalOptions(command);
      const [{ install }, { renderInstall }] = await Promise.all([
        import("../commands/install.ts"),
        import("./render.ts"),
      ]);
      const result = await install(io, options, {
        force: flags.force === true,
        dryRun: flags.dryRun === true,
      });
      renderInstall(io, result);
    });
  program
    .command("uninstall")
    .description(
      "remove the credentials_helper block, and the installed executable once no other CLI config names it",
    )
    .option("--force", "remove the executable even when another CLI config still names it")
    .option("--forget", "also delete every token kept in the store the block uses")
    .option("--dry-run", "print what would be done and change nothing")
    .action(
      async (flags: { force?: boolean; dryRun?: boolean; forget?: boolean }, command: Command) => {
        const options = await follow(givenOptions(command));
        const [{ uninstall }, { renderUninstall }] = await Promise.all([
          import("../commands/uninstall.ts"),
          import("./render.ts"),
        ]);
        const result = await uninstall(io, options, openStore, {
          force: flags.force === true,
          dryRun: flags.dryRun === true,
          forget: flags.forget === true,
        });
        renderUninstall(io, result);
      },
    );
  program
    .command("import")
    .description(
      "move the tokens in credentials.tfrc.json and in credentials blocks of the CLI config into the store --backend selects",
    )
    .option("--keep", "copy them and leave the files as they are")
    .option("--force", "replace different credentials the store already holds for a host")
    .option("--dry-run", "print what would be done and change nothing")
    .action(
      async (flags: { keep?: boolean; force?: boolean; dryRun?: boolean }, command: Command) => {
        const options = await follow(givenOptions(command));
        const [{ importTokens }, { renderImport }] = await Promise.all([
          import("../commands/import.ts"),
          import("./render.ts"),
        ]);
        const asked = {
          keep: flags.keep === true,
          force: flags.force === true,
          dryRun: flags.dryRun === true,
        };
        renderImport(io, options, asked, await importTokens(io, () => openStore(options), asked));
      },
    );
  program
    .command("list")
    .description("print the hosts that have credentials (names only)")
    .option("--json", "print a JSON array")
    .action(async (flags: { json?: boolean }, command: Command) => {
      const options = await follow(givenOptions(command));
      const [{ list }, { renderList }] = await Promise.all([
        import("../commands/list.ts"),
        import("./render.ts"),
      ]);
      await renderList(io, { json: flags.json === true }, await list(options, openStore));
    });
  program
    .command("doctor")
    .description(
      "check the keychain, the installation, the CLI config and each stored token with its host, and say how to fix what is wrong",
    )
    .option("--offline", "do not check the stored tokens with their hosts (no network access)")
    .option("--json", "print what Terraform and OpenTofu read, and each host's source, as JSON")
    .action(async (flags: { offline?: boolean; json?: boolean }, command: Command) => {
      if (flags.json === true) {
        // Only the view, read off the files and variables: no store, no network, no note.
        const [{ doctorReport }, { renderDoctorJson }] = await Promise.all([
          import("../commands/doctor-report.ts"),
          import("./render.ts"),
        ]);
        renderDoctorJson(io, doctorReport(io));
        return;
      }
      // doctor's whole report is on stdout: so is the block it follows.
      const options = await follow(givenOptions(command), say(io));
      const [{ runDoctor }, { helperArgs }, { renderDoctor }] = await Promise.all([
        import("../commands/doctor.ts"),
        import("../commands/command-line.ts"),
        import("./render.ts"),
      ]);
      // Without a way to the network (tests in-process), the token check is left out.
      const tokens = context.httpsGet && {
        offline: flags.offline === true,
        get: context.httpsGet,
      };
      const checks = await runDoctor(
        io,
        context.version,
        options,
        helperArgs(options),
        (deadline) => openStore(options, deadline),
        tokens,
      );
      renderDoctor(io, checks);
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
      async (words: string[], flags: { host?: Hostname[]; tfe?: Hostname }, self: Command) => {
        if (words.length === 0) {
          throw new CliError(
            "exec: missing command: exec [--host HOST]... -- COMMAND [ARG...]",
            ExitCode.Usage,
          );
        }
        const { runCommand } = context;
        if (runCommand === undefined) throw new Error("exec needs a way to run a command");
        // Nothing of its own when all goes well: the block it follows is not news.
        const options = await (
          await import("./followed-options.ts")
        ).followedOptions(io, givenOptions(self), { unreadable: note(io) });
        const { exec, nulMessage } = await import("../commands/exec.ts");
        const ended = await exec(
          io.env,
          () => openStore(options),
          { hosts: flags.host ?? [], tfe: flags.tfe },
          words,
          runCommand,
          (host) => {
            note(io)(`warning: left out: ${nulMessage(host)}`);
          },
        );
        if (ended.message !== undefined) note(io)(ended.message);
        context.ended.code = ended.code;
      },
    );
  return program;
}

const say = (io: Io) => (line: string) => io.stdout.write(`${line}\n`);
const note = (io: Io) => (line: string) => io.stderr.write(`${line}\n`);

/** The root's options that take a value, as usage shows them: `[--service <name>] ...`. */
function rootOptionsUsage(program: Command): string {
  return program.options
    .filter((option) => option.required)
    .map((option) => `[${option.flags}]`)
    .join(" ");
}

/**
 * Moves a command's own options given before it to after it: `--force install` is read as
 * `install --force`. Commander reads options only on the command they belong to, and the
 * root stops at the first it does not know. The root's options stay where they are, and a
 * line whose first word is no command for people (a protocol verb, a typo) is left alone.
 */
function commandOptionsAfterCommand(program: Command, argv: readonly string[]): string[] {
  const before: string[] = [];
  const moved: string[] = [];
  const takesValue = (command: Command, word: string) =>
    command.options.some((option) => option.required && option.long === word);
  const isRootOption = (word: string) =>
    program.options.some(
      (option) =>
        option.long === word ||
        option.short === word ||
        (option.required && word.startsWith(`${option.long ?? ""}=`)),
    ) || /^(-h|--help)$/.test(word);
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? "";
    if (word === "--" || !word.startsWith("-")) {
      const isCommand = program.commands.some((each) => each.name() === word);
      return moved.length > 0 && isCommand && isForPeople(word)
        ? [...before, word, ...moved, ...argv.slice(i + 1)]
        : [...argv];
    }
    if (isRootOption(word)) {
      before.push(word);
      if (takesValue(program, word) && i + 1 < argv.length) before.push(argv[++i] ?? "");
    } else {
      moved.push(word);
      // A command's option that takes a value (exec's --host) carries it along.
      if (program.commands.some((command) => takesValue(command, word)) && i + 1 < argv.length)
        moved.push(argv[++i] ?? "");
    }
  }
  return [...argv];
}

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
  const { service = DEFAULT_SERVICE, backend = DEFAULT_BACKEND, ...rest } = givenOptions(command);
  return { service, backend, ...rest };
}
