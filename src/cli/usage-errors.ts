import type { Command, CommanderError } from "commander";
import { CliError, ExitCode } from "../errors.ts";
import { quote } from "../system/quote.ts";
import { PROTOCOL_VERB_NAMES } from "./protocol-call.ts";
import type { GlobalOptions } from "../commands/options.ts";

/**
 * A usage error of commander's, in our words: one line, lowercase, naming the command and
 * how it is written, told from its error code and the command that raised it, never from
 * its English. Terraform already prefixes a helper's message with "error in <path>:".
 * `undefined` for help and version, which are not errors.
 */
export function usageError(
  error: CommanderError,
  command: Command,
  argv: readonly string[],
): CliError | undefined {
  const name = command.parent === null ? undefined : command.name();
  const help = name === undefined ? "--help" : `${name} --help`;
  const usage = (message: string) => new CliError(message, ExitCode.Usage);
  switch (error.code) {
    case "commander.helpDisplayed":
    case "commander.help":
    case "commander.version":
      return undefined;
    case "commander.excessArguments":
      return (PROTOCOL_VERB_NAMES as readonly string[]).includes(command.name())
        ? usage(
            `too many arguments: ${command.name()} takes one hostname (${command.name()} HOSTNAME)`,
          )
        : usage(`too many arguments for ${command.name()} (see "${help}")`);
    case "commander.missingArgument": {
      const missing = command.registeredArguments
        .find((argument, i) => argument.required && command.args[i] === undefined)
        ?.name();
      return usage(
        `missing ${missing ?? "argument"}: ${command.name()} ${(missing ?? "").toUpperCase()}`.trimEnd(),
      );
    }
    case "commander.optionMissingArgument":
      // An option takes the word after it as its value: only the line's last has none.
      return usage(`${argv[argv.length - 1] ?? "the option"} needs a value (see "${help}")`);
    case "commander.unknownOption": {
      // Commander stops its operands at the first option it does not know.
      const option = command.args.find((word) => word.length > 1 && word.startsWith("-")) ?? "";
      return usage(
        `unknown option ${quote(option)}${name === undefined ? "" : ` for ${name}`} (see "${help}")`,
      );
    }
    case "commander.unknownCommand":
      return unknownCommand(command.args[0] ?? "", command);
    default:
      // A code none of our commands gives rise to: commander's own words, in one line.
      return usage(`${error.message.replace(/^error: /, "")} (see "${help}")`);
  }
}

/**
 * A word that names no command, in one line: the command it most likely meant (a typo, a
 * letter case, "version" for --version), else what Terraform and people run.
 */
export function unknownCommand(word: string, program: Command): CliError {
  const meant = meantCommand(
    word,
    program.commands.map((command) => command.name()),
  );
  const caseOnly = meant !== undefined && meant.toLowerCase() === word.toLowerCase();
  return new CliError(
    meant === undefined
      ? `unknown command ${quote(word)}: ${whatRuns(program)} (see --help)`
      : `unknown command ${quote(word)}: did you mean ${quote(meant)}?${caseOnly ? " (commands are case-sensitive)" : ""}`,
    ExitCode.Usage,
  );
}

function meantCommand(word: string, names: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  if (lower === "version") return "--version";
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
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
 * The line names no command. When the value of one of the root's options is a command's
 * name (`--service list`), the option took the command as its value: say so.
 */
export function missingCommand(program: Command, given: Partial<GlobalOptions>): CliError {
  const names = program.commands.map((command) => command.name());
  const swallowed = Object.entries(given).find(
    (entry): entry is [string, string] => typeof entry[1] === "string" && names.includes(entry[1]),
  );
  if (swallowed !== undefined) {
    const [option, name] = swallowed;
    return new CliError(
      `missing command: ${quote(name)} was read as the value of --${option}; give its value, then the command: --${option} ${option.toUpperCase()} ${name}`,
      ExitCode.Usage,
    );
  }
  return new CliError(`missing command: ${whatRuns(program)} (see --help)`, ExitCode.Usage);
}

/** What Terraform and people run, from the commands themselves. */
function whatRuns(program: Command): string {
  const forPeople = program.commands.map((command) => command.name()).filter(isForPeople);
  return `Terraform runs ${either(PROTOCOL_VERB_NAMES)} HOSTNAME; people run ${either(forPeople)}`;
}

/** Whether a command's name is one of the commands for people (not a verb, not help). */
export function isForPeople(name: string): boolean {
  return !(PROTOCOL_VERB_NAMES as readonly string[]).includes(name) && name !== "help";
}

/** "a, b or c". */
function either(words: readonly string[]): string {
  return words.length < 2
    ? words.join("")
    : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1] ?? ""}`;
}
