import { Command } from "commander";
import { CliError, ExitCode } from "../errors.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { CommandRunner } from "../commands/exec.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import type { HttpsGet } from "../system/https-get.ts";
import type { Io } from "../system/io.ts";
import { blockArgs, DEFAULT_SERVICE, parseServiceName } from "../commands/options.ts";
import type { GlobalOptions } from "../commands/options.ts";
import { BACKENDS, DEFAULT_BACKEND, parseBackend } from "../stores/registry.ts";
import {
  DEFAULT_TIMEOUT_SECONDS,
  parseTimeout,
  TIMEOUT_VARIABLE,
  type Deadline,
} from "../system/deadline.ts";
import { PROTOCOL_VERB_NAMES, type ProtocolVerb } from "./protocol-call.ts";
import { renderCredentialsHelper } from "../terraform/cli-config.ts";
import { HELPER_BLOCK_NAME } from "../commands/cli-config-edits.ts";
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
  get: "print a host's stored credentials as JSON, or {}",
  store: "store the JSON object on stdin for a host",
  forget: "delete a host's stored credentials",
};

/**
 * How every command but install picks its store: below the top-level help and each such
 * command's, where the options it names are in the usage line.
 */
const STORE_RULE = `
The store a call reaches: the one its line names with --backend or --service (see --help),
else the one the args of the credentials_helper block in effect name, else the default.`;

/**
 * The example of the top-level help: the block `install --service work` writes, from
 * install's own renderer and args, so that the two cannot drift.
 */
function installExample(): string {
  const block = renderCredentialsHelper(
    HELPER_BLOCK_NAME,
    blockArgs({ backend: DEFAULT_BACKEND, service: "work" }),
  );
  return `
Example: "--service work install" adds to the CLI config the block Terraform runs it by:
${block.replace(/^(?=.)/gm, "  ").trimEnd()}`;
}

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
      `the name entries are kept under, one per profile (default: "${DEFAULT_SERVICE}")`,
      parseServiceName,
    )
    .option(
      "--backend <store>",
      `where tokens are kept: ${BACKENDS.join(", ")} (default: ${DEFAULT_BACKEND}; pass on headless machines, wincred in WSL)`,
      parseBackend,
    )
    .option(
      "--timeout <seconds>",
      `give up after this many seconds (default: $${TIMEOUT_VARIABLE}, else ${DEFAULT_TIMEOUT_SECONDS})`,
      (value: string) => parseTimeout(value),
    )
    .showSuggestionAfterError(false)
    .configureHelp({
      // The same lines on every terminal: the line budgets (test/unit/cli/help.test.ts) hold.
      helpWidth: 80,
      // The options before the command are described once, in the top-level help; each
      // command's usage line names them.
      showGlobalOptions: false,
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
    .addHelpText("after", `${installExample()}\n${STORE_RULE}`);

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
      .addHelpText("after", STORE_RULE)
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
    .summary("install the helper for Terraform and OpenTofu")
    .description(
      "copy this executable where Terraform and OpenTofu find it and add the credentials_helper block",
    )
    .option("--force", "replace a different credentials_helper block")
    .option("--dry-run", "print what would be done and change nothing")
    .addHelpText("after", installExample())
    .action(async (flags: { force?: boolean; dryRun?: boolean }, command: Command) => {
      // Installed again (an upgrade), it keeps the store its block names unless the line
      // names one: the store rule every command follows. Silently: its plan shows the block.
      const options = await follow(givenOptions(command), () => undefined);
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
    .summary("remove the block, and the executable once unused")
    .description(
      "remove the credentials_helper block, and the installed executable once no other CLI config names it",
    )
    .option("--force", "remove the executable even when another CLI config still names it")
    .option("--forget", "also delete every token kept in the store the block uses")
    .option("--dry-run", "print what would be done and change nothing")
    .addHelpText("after", STORE_RULE)
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
    .summary("move tokens from the CLI config files to the store")
    .description(
      "move the tokens in credentials.tfrc.json and in credentials blocks of the CLI config into the store the call reaches (below)",
    )
    .option("--keep", "copy them and leave the files as they are")
    .option("--force", "replace different credentials the store already holds for a host")
    .option(
      "--keep-stored",
      "keep different credentials the store already holds for a host, and drop the files'",
    )
    .option("--dry-run", "print what would be done and change nothing")
    .addHelpText("after", STORE_RULE)
    .action(
      async (
        flags: { keep?: boolean; force?: boolean; keepStored?: boolean; dryRun?: boolean },
        command: Command,
      ) => {
        if (flags.force === true && flags.keepStored === true)
          throw new CliError(
            "import: --force and --keep-stored ask for opposite things: give one",
            ExitCode.Usage,
          );
        const options = await follow(givenOptions(command));
        const [{ importTokens }, { renderImport }] = await Promise.all([
          import("../commands/import.ts"),
          import("./render.ts"),
        ]);
        const asked = {
          keep: flags.keep === true,
          force: flags.force === true,
          keepStored: flags.keepStored === true,
          dryRun: flags.dryRun === true,
        };
        renderImport(io, options, asked, await importTokens(io, () => openStore(options), asked));
      },
    );
  program
    .command("list")
    .summary("print the hosts that have credentials")
    .description("print the hosts that have credentials (names only)")
    .option("--json", "print a JSON array")
    .addHelpText("after", STORE_RULE)
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
    .summary("check the set-up and each token, with fixes")
    .description(
      "check the keychain, the installation, the CLI config and each stored token with its host, and say how to fix what is wrong",
    )
    .option("--offline", "do not check the stored tokens with their hosts (no network access)")
    .option("--json", "print what Terraform and OpenTofu read, and each host's source, as JSON")
    .addHelpText("after", STORE_RULE)
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
    .command("sync")
    .summary("bring a pass store shared through git in step")
    .description(
      "bring a store shared through git in step with its remote: fetch, fast-forward or rebase (a conflict is undone and named), push; for people and scheduled jobs, never Terraform",
    )
    .action(async (_flags: unknown, command: Command) => {
      const options = await follow(givenOptions(command));
      const { sync } = await import("../commands/sync.ts");
      say(io)(await sync(io, options));
    });
  program
    .command("exec")
    .summary("run a command with the tokens as TF_TOKEN_*")
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
    .addHelpText("after", STORE_RULE)
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
