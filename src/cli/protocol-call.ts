import { parseBackend, parseServiceName, parseTimeout } from "./options.ts";
import type { Backend, GlobalOptions } from "./options.ts";
import type { StandardStreams } from "./io.ts";

export const PROTOCOL_VERB_NAMES = ["get", "store", "forget"] as const;
export type ProtocolVerb = (typeof PROTOCOL_VERB_NAMES)[number];

/**
 * The options a credentials_helper block's `args` give, each only when given; `undefined`
 * when the args hold anything else or a value the options refuse.
 */
export function optionsOfArgs(args: readonly string[]): Partial<GlobalOptions> | undefined {
  const leading = leadingOptions(args);
  return leading === undefined || leading.next !== args.length ? undefined : leading.options;
}

/** A protocol verb with its hostname and options, as Terraform runs the helper. */
export interface ProtocolCall {
  readonly verb: ProtocolVerb;
  readonly hostname: string;
  /** The options the line gave, each absent when not given (`run` decides the rest). */
  readonly given: Partial<GlobalOptions>;
}

/**
 * Recognises the one shape Terraform uses,
 * `[--service NAME] [--backend STORE] [--timeout SECONDS] VERB HOST`
 * (each option also as `--name=value`, in any order, the last one winning), without
 * loading commander: ~3.5 ms of every call. Anything else, or any value the options
 * refuse, gives undefined, and commander parses the line and reports what is wrong.
 */
export function protocolCall(argv: readonly string[]): ProtocolCall | undefined {
  const leading = leadingOptions(argv);
  if (leading === undefined) return undefined;
  const i = leading.next;
  if (argv.length - i !== 2) return undefined;
  const [verbName, hostname] = argv.slice(i);
  const verb = PROTOCOL_VERB_NAMES.find((name) => name === verbName);
  if (verb === undefined || hostname === undefined || hostname.startsWith("-")) return undefined;
  return { verb, hostname, given: leading.options };
}

/**
 * Whether a verb runs with the standard streams Terraform and OpenTofu give a helper
 * (svchost's helper_program.go runs it through Go's os/exec, which connects a stream it is
 * not given to the null device): `get` reads the null device and writes to a pipe, `store`
 * reads a pipe and writes to the null device, `forget` has the null device on both, and
 * stderr is always a pipe. A person at a terminal, or a script with a terminal or its own
 * stdin, has other streams. Unknown streams count as Terraform's.
 */
export function calledAsTerraformCalls(
  verb: ProtocolVerb,
  streams: StandardStreams | undefined,
): boolean {
  if (streams === undefined) return true;
  const [stdin, stdout, stderr] = streams;
  const expected = {
    get: ["null device", "pipe"],
    store: ["pipe", "null device"],
    forget: ["null device", "null device"],
  }[verb];
  return stdin === expected[0] && stdout === expected[1] && stderr === "pipe";
}

/** The options at the start of `argv` and the index of the first word after them. */
function leadingOptions(
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

/**
 * Whether `argv` asks for `store`: its first word that is not an option (or an option's
 * value) is the verb. Not "store" anywhere on the line: `exec -- grep store` is no store.
 */
export function isStoreCall(argv: readonly string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? "";
    if (/^--(service|backend|timeout)$/.test(word)) i++;
    else if (!word.startsWith("-")) return word === "store";
  }
  return false;
}
