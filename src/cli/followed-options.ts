import { commandLine } from "./command-line.ts";
import type { Io } from "./io.ts";
import { followBlock, type GlobalOptions } from "./options.ts";
import { optionsOfArgs } from "./protocol-call.ts";

/** Where `followedOptions` says what it did; a missing one says nothing. */
export interface FollowNotes {
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
