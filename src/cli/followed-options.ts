import { commandLine } from "../commands/command-line.ts";
import type { Io } from "../system/io.ts";
import { followBlock, namesStore, optionsOfArgs, type GlobalOptions } from "../commands/options.ts";

/** Where `followedOptions` says what it did; a missing one says nothing. */
interface FollowNotes {
  /** The block decided something: which block, and its args. */
  readonly following?: (line: string) => void;
  /** The block's args are not options we read: the command line's and the defaults are used. */
  readonly unreadable?: (line: string) => void;
}

/**
 * The options every call runs with, whatever its standard streams are: those on its command
 * line when it names a store (`--backend`, `--service`), and then no file is read (the
 * block `install` writes names both, so Terraform's calls never read one); otherwise the
 * args of the `credentials_helper "keychain"` block in effect, so that the call reaches
 * the store Terraform reaches; else the defaults. `notes` hears of what the block decided.
 */
export async function followedOptions(
  io: Io,
  given: Partial<GlobalOptions>,
  notes: FollowNotes = {},
): Promise<GlobalOptions> {
  if (namesStore(given)) return followBlock(given, {}).options;
  const { installedBlock } = await import("../commands/installed-block.ts");
  const block = installedBlock(io);
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
