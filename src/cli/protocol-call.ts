import { globalOptionAt, leadingOptions, type GlobalOptions } from "../commands/options.ts";

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
  const verb = PROTOCOL_VERB_NAMES[PROTOCOL_VERB_NAMES.indexOf(verbName as ProtocolVerb)];
  if (verb === undefined || hostname === undefined || hostname.startsWith("-")) return undefined;
  return { verb, hostname, given: leading.options };
}

/**
 * Whether `argv` asks for `store`: its first word that is not an option (or an option's
 * value) is the verb. Not "store" anywhere on the line: `exec -- grep store` is no store.
 * Values are skipped without being checked, and unknown options as words without one:
 * a call that failed on a bad option is a store call all the same.
 */
export function isStoreCall(argv: readonly string[]): boolean {
  for (let i = 0; i < argv.length;) {
    const option = globalOptionAt(argv, i);
    const word = argv[i] ?? "";
    if (option !== undefined) i = option.next;
    else if (word.startsWith("-")) i++;
    else return word === "store";
  }
  return false;
}
