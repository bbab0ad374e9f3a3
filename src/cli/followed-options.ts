import { CliError } from "../errors.ts";
import type { Hostname } from "../protocol/hostname.ts";
import { commandLine } from "../commands/command-line.ts";
import type { Io } from "../system/io.ts";
import { followBlock, optionsOfArgs, type GlobalOptions } from "../commands/options.ts";
import type { ProtocolVerb } from "./protocol-call.ts";

/** Where `followedOptions` says what it did; a missing one says nothing. */
interface FollowNotes {
  /** The block decided something: which block, and its args. */
  readonly following?: (line: string) => void;
  /** The block's args are not options we read: the command line's and the defaults are used. */
  readonly unreadable?: (line: string) => void;
}

/**
 * The options a command for people (list, exec, doctor, import, uninstall, and get, store
 * and forget typed by a person) runs with: those on its command line, and for the rest the
 * args of the `credentials_helper "keychain"` block in the CLI config in effect, so that it
 * reaches the store Terraform reaches. `notes` hears of what the block decided.
 */
export async function followedOptions(
  io: Io,
  given: Partial<GlobalOptions>,
  notes: FollowNotes = {},
): Promise<GlobalOptions> {
  const decided = given.service !== undefined && given.backend !== undefined;
  const { installedBlock } = await import("../commands/installed-block.ts");
  const block = decided && given.timeout !== undefined ? undefined : installedBlock(io);
  const fromBlock = block?.args === undefined ? undefined : optionsOfArgs(block.args);
  if (block !== undefined && fromBlock === undefined) {
    notes.unreadable?.(
      `the args of the credentials_helper block in ${block.file} are not options this command reads: it uses the command line's and the defaults`,
    );
  }
  const { options, followed } = followBlock(given, fromBlock ?? {});
  if (followed && block?.args !== undefined) {
    notes.following?.(
      `following the credentials_helper block in ${block.file}: ${commandLine(block.args, io.platform)}`,
    );
  }
  return options;
}

/** The advice of a keychain failure on a machine without one (each store words it alike). */
const ADD_PASS = /[;,]? ?(?:or |on a headless machine )?add --backend pass to the helper's args/;

/**
 * `error`, unless it is a store's failure advising to add `--backend pass` to the helper's
 * args while the installed block already has it: then that advice becomes a command with the
 * block's args, and the reason this call did not use them (its own `--backend`, or the
 * streams Terraform gives a helper, with which only the command line counts). The block is
 * read only here, on the way out of a failed call.
 */
export async function adviceTheBlockHas(
  io: Io,
  error: unknown,
  call: {
    readonly verb: ProtocolVerb;
    readonly host: Hostname;
    readonly given: Partial<GlobalOptions>;
    readonly asTerraform: boolean;
  },
): Promise<unknown> {
  if (!(error instanceof CliError) || !ADD_PASS.test(error.message)) return error;
  const [{ installedBlock }, { helperCommand }, { locationsOf }] = await Promise.all([
    import("../commands/installed-block.ts"),
    import("../commands/command-link.ts"),
    import("../commands/cli-config-edits.ts"),
  ]);
  const block = installedBlock(io);
  const args = block?.args;
  if (block === undefined || args === undefined || optionsOfArgs(args)?.backend !== "pass")
    return error;
  const why =
    call.given.backend !== undefined
      ? `this call's --backend ${call.given.backend} wins`
      : call.asTerraform
        ? "this call ran with the streams Terraform gives a helper (no terminal, stdin from /dev/null or a pipe), so only its own options count"
        : "this call did not use it";
  const helper = helperCommand(io, locationsOf(io).helperInstallPath);
  const command = commandLine([helper, ...args, call.verb, call.host], io.platform);
  return new CliError(
    error.message.replace(
      ADD_PASS,
      `; the credentials_helper block in ${block.file} already has ${commandLine(args, io.platform)}, but ${why}: run "${command}"`,
    ),
    error.exitCode,
    { cause: error.cause ?? error },
  );
}
