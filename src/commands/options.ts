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
 * Whether a command line names the store its call reaches: it gives `--backend` or
 * `--service`. Then the line decides, with the defaults for what it leaves out, and no
 * credentials_helper block is read; otherwise the block in effect does.
 */
export function namesStore(given: Partial<GlobalOptions>): boolean {
  return given.service !== undefined || given.backend !== undefined;
}

/**
 * The options of every call, Terraform's, a script's and a person's alike: the store its
 * command line names (`namesStore`), else the one the installed block's args name
 * (`fromBlock`, parsed from them; its `--timeout` too unless the line gives one), else the
 * defaults. Which streams the call has decides nothing. `followed` is true when the block
 * decided something the defaults would not have.
 */
export function followBlock(
  given: Partial<GlobalOptions>,
  fromBlock: Partial<GlobalOptions>,
): { options: GlobalOptions; followed: boolean } {
  const block = namesStore(given) ? {} : fromBlock;
  const timeout = given.timeout ?? block.timeout;
  const options: GlobalOptions = {
    service: given.service ?? block.service ?? DEFAULT_SERVICE,
    backend: given.backend ?? block.backend ?? DEFAULT_BACKEND,
    ...(timeout === undefined ? {} : { timeout }),
  };
  const followed =
    (given.service === undefined && options.service !== DEFAULT_SERVICE) ||
    (given.backend === undefined && options.backend !== DEFAULT_BACKEND) ||
    (given.timeout === undefined && options.timeout !== undefined);
  return { options, followed };
}

/**
 * The `args` of the block `install` writes: both options that name the store, always, so
 * that each of Terraform's calls carries its store on its line and reads no file (a call
 * whose line names no store reads the block in effect: `followBlock`).
 */
export function blockArgs(options: Pick<GlobalOptions, "backend" | "service">): string[] {
  return ["--backend", options.backend, "--service", options.service];
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
 * The store a block's args select, as one comparable string (backend and service, the
 * defaults filling in what they leave out, and a --timeout they give); `undefined` when the
 * args are not options of ours. Args in another order or spelling select the same.
 */
export function storeOfArgs(args: readonly string[]): string | undefined {
  const options = optionsOfArgs(args);
  if (options === undefined) return undefined;
  const { options: all } = followBlock({}, options);
  return [all.backend, all.service].join("\0");
}

/** The global options: each takes one value, as `--name value` or `--name=value`. */
const GLOBAL_OPTION_NAMES = [
  "service",
  "backend",
  "timeout",
] as const satisfies readonly (keyof GlobalOptions)[];

/**
 * The global option at `argv[i]`, as commander reads it: its name, its value (after `=`,
 * else the next word whatever it is, `undefined` at the end of the line), whether the value
 * was inline, and the index of the word after it. `undefined` when `argv[i]` is no global
 * option. The one reader of these options' spelling: callers decide what a value may be.
 */
export function globalOptionAt(
  argv: readonly string[],
  i: number,
):
  | { name: keyof GlobalOptions; value: string | undefined; inline: boolean; next: number }
  | undefined {
  const option = /^--([a-z]+)(?:=(.*))?$/s.exec(argv[i] ?? "");
  const name = GLOBAL_OPTION_NAMES[GLOBAL_OPTION_NAMES.indexOf(option?.[1] as keyof GlobalOptions)];
  if (option === null || name === undefined) return undefined;
  const inline = option[2];
  return inline === undefined
    ? { name, value: argv[i + 1], inline: false, next: i + 2 }
    : { name, value: inline, inline: true, next: i + 1 };
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
    const option = globalOptionAt(argv, i);
    if (option === undefined) break;
    const { value } = option;
    if (value === undefined || (!option.inline && value.startsWith("-"))) return undefined;
    i = option.next;
    try {
      if (option.name === "service") service = parseServiceName(value);
      else if (option.name === "backend") backend = parseBackend(value);
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
