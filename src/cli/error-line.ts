import type { CliError } from "../errors.ts";
import { FIXES, fixWith, renderFix, type Fix } from "../fixes.ts";
import { commandLine } from "../commands/command-line.ts";
import { globalOptionAt } from "../commands/options.ts";
import type { Io } from "../system/io.ts";

/**
 * The line a failed call prints: the error's cause, then its one fix with this call's values
 * filled in: `HELPER` is this executable as a person runs it (by name when PATH finds it),
 * `ARGS` the options on this call's line that the fix's command does not name itself, so
 * that the command reaches the same store and runs as printed.
 */
export async function errorLine(error: CliError, io: Io, argv: readonly string[]): Promise<string> {
  if (error.fix === undefined) return error.message;
  // Run from the sources (npm start, npm run setup's dry run), this executable has no name
  // a command could run as printed: the caller says what to run instead.
  const { command } = FIXES[error.fix.situation] as Fix;
  if (!io.isSea && command?.startsWith("HELPER") === true) return error.message;
  const [{ helperCommand }, { HELPER_NAME }] = await Promise.all([
    import("../commands/command-link.ts"),
    import("../terraform/locations.ts"),
  ]);
  const helper = io.isSea ? helperCommand(io, io.execPath) : HELPER_NAME;
  const fix = fixWith(error.fix, commandLine([helper], io.platform), (named) =>
    commandLine(
      optionsOnLine(argv)
        .filter(([name]) => !named.includes(name))
        .flatMap(([name, value]) => [`--${name}`, value]),
      io.platform,
    ),
  );
  return `${error.message}; ${renderFix(fix)}`;
}

/**
 * The global options on a command line, in order, each `[name, value]`: the words before
 * `--` that are `--service`, `--backend` or `--timeout` with their value.
 */
function optionsOnLine(argv: readonly string[]): (readonly [string, string])[] {
  const found: (readonly [string, string])[] = [];
  for (let i = 0; i < argv.length && argv[i] !== "--";) {
    const option = globalOptionAt(argv, i);
    if (option === undefined) i++;
    else {
      if (option.value !== undefined) found.push([option.name, option.value]);
      i = option.next;
    }
  }
  return found;
}
