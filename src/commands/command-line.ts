import { DEFAULT_SERVICE, globalOptionAt, type GlobalOptions } from "./options.ts";
import { DEFAULT_BACKEND } from "../stores/registry.ts";

/**
 * A command line a person can paste into their shell and run as printed: words made only of
 * safe characters stay bare, others are single-quoted. On Windows that shell is PowerShell:
 * a quote is doubled inside quotes, and a quoted program needs the call operator `&` (a
 * quoted string alone is only printed back). Neither form is for cmd.exe, whose quoting
 * rules depend on each program.
 */
export function commandLine(words: readonly string[], platform: NodeJS.Platform): string {
  if (platform === "win32") {
    const quoted = words.map((word) =>
      /^[\w.:\\/=+-]+$/.test(word) ? word : `'${word.replace(/'/g, "''")}'`,
    );
    return quoted[0]?.startsWith("'") === true ? `& ${quoted.join(" ")}` : quoted.join(" ");
  }
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`))
    .join(" ");
}

/**
 * `command` with an environment variable set for it: `NAME=value command` in a POSIX shell,
 * `$env:NAME='value'; command` in PowerShell (which has no per-command form). No variable:
 * the command as it is.
 */
export function withVariable(
  variable: { readonly name: string; readonly value: string } | undefined,
  command: string,
  platform: NodeJS.Platform,
): string {
  if (variable === undefined) return command;
  if (platform === "win32")
    return `$env:${variable.name}='${variable.value.replace(/'/g, "''")}'; ${command}`;
  return `${variable.name}=${commandLine([variable.value], platform)} ${command}`;
}

/**
 * `words` as a command a person pastes, in the profile this call runs in: with the variable
 * that chose the CLI config set for it (`profileVariable`).
 */
export function commandInProfile(
  words: readonly string[],
  machine: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly platform: NodeJS.Platform;
  },
): string {
  return withVariable(
    profileVariable(machine.env),
    commandLine(words, machine.platform),
    machine.platform,
  );
}

/**
 * The variable that chose the CLI config (a profile), for commands printed for people: run
 * without it, they would use the default file instead.
 */
export function profileVariable(
  env: Readonly<Record<string, string | undefined>>,
): { name: string; value: string } | undefined {
  for (const name of ["TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG"]) {
    const value = env[name];
    if (value !== undefined && value !== "") return { name, value };
  }
  return undefined;
}

/** `args` (option words) less the options named in `named` and their values. */
export function argsWithout(args: readonly string[], named: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length;) {
    const option = globalOptionAt(args, i);
    if (option !== undefined && named.includes(option.name)) i = option.next;
    else kept.push(args[i++] ?? "");
  }
  return kept;
}

/** The shortest options that select the same store as these: for commands a person types. */
export function helperArgs(options: Pick<GlobalOptions, "backend" | "service">): string[] {
  return [
    ...(options.backend === DEFAULT_BACKEND ? [] : ["--backend", options.backend]),
    ...(options.service === DEFAULT_SERVICE ? [] : ["--service", options.service]),
  ];
}
