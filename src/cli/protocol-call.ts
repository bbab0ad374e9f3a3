import { leadingOptions, type GlobalOptions } from "../commands/options.ts";
import type { StandardStreams } from "../system/io.ts";

export const PROTOCOL_VERB_NAMES = ["get", "store", "forget"] as const;
export type ProtocolVerb = (typeof PROTOCOL_VERB_NAMES)[number];

/** A protocol verb with its hostname and options, as Terraform runs the helper. */
interface ProtocolCall {
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
