import { CliError, ExitCode } from "../errors.ts";
import { quote } from "../system/quote.ts";
import { DEFAULT_BACKEND, parseBackend } from "../stores/registry.ts";
import { parseTimeout } from "../system/deadline.ts";

/** The service name entries are kept under unless `--service` says otherwise. */
export const DEFAULT_SERVICE = "terraform-credentials";

/** A `--backend` value: the name of a store in the registry (`parseBackend` checks it). */
type Backend = string;

/** Options given before the verb: the `args` of the CLI config's credentials_helper block. */
export interface GlobalOptions {
  readonly service: string;
  readonly backend: Backend;
  /** Seconds a call may take in all (`--timeout`); unset: the environment's or the default. */
  readonly timeout?: number;
}

/**
 * The options a command for people runs with: each one given on its command line, else the
 * installed block's (`fromBlock`, parsed from its args), else the default. `followed` is
 * true when the block decided something the defaults would not have.
 */
export function followBlock(
  given: Partial<GlobalOptions>,
  fromBlock: Partial<GlobalOptions>,
): { options: GlobalOptions; followed: boolean } {
  const options: GlobalOptions = {
    service: given.service ?? fromBlock.service ?? DEFAULT_SERVICE,
    backend: given.backend ?? fromBlock.backend ?? DEFAULT_BACKEND,
    ...((given.timeout ?? fromBlock.timeout) === undefined
      ? {}
      : { timeout: given.timeout ?? fromBlock.timeout }),
  };
  const followed =
    (given.service === undefined && options.service !== DEFAULT_SERVICE) ||
    (given.backend === undefined && options.backend !== DEFAULT_BACKEND) ||
    (given.timeout === undefined && options.timeout !== undefined);
  return { options, followed };
}

/**
 * A service name becomes part of keychain entries (and of file paths in other stores), so
 * it is kept to characters that are safe everywhere and readable in a keychain browser.
 */
export function parseServiceName(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value)) {
    throw new CliError(
      `invalid --service ${quote(value)}: use 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
      ExitCode.Usage,
    );
  }
  return value;
}

/**
 * The options a credentials_helper block's `args` give, each only when given; `undefined`
 * when the args hold anything else or a value the options refuse.
 */
export function optionsOfArgs(args: readonly string[]): Partial<GlobalOptions> | undefined {
  const leading = leadingOptions(args);
  return leading === undefined || leading.next !== args.length ? undefined : leading.options;
}

/**
 * The options at the start of `argv` and the index of the first word after them;
 * `undefined` when an option lacks its value or has one the options refuse.
 */
export function leadingOptions(
  argv: readonly string[],
): { options: Partial<GlobalOptions>; next: number } | undefined {
  let service: string | undefined;
  let backend: Backend | undefined;
  let timeout: number | undefined;
  let i = 0;
  for (;;) {
    const option = /^--(service|backend|timeout)(?:=(.*))?$/s.exec(argv[i] ?? "");
    if (option === null) break;
    const inline = option[2];
    const value = inline ?? argv[i + 1];
    if (value === undefined || (inline === undefined && value.startsWith("-"))) return undefined;
    i += inline === undefined ? 2 : 1;
    try {
      if (option[1] === "service") service = parseServiceName(value);
      else if (option[1] === "backend") backend = parseBackend(value);
      else timeout = parseTimeout(value);
    } catch {
      return undefined;
    }
  }
  return {
    options: {
      ...(service === undefined ? {} : { service }),
      ...(backend === undefined ? {} : { backend }),
      ...(timeout === undefined ? {} : { timeout }),
    },
    next: i,
  };
}
