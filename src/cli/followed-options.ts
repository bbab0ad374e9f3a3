import { commandLine } from "../commands/command-line.ts";
import type { Io } from "../system/io.ts";
import { followBlock, type GlobalOptions } from "../system/options.ts";
import { optionsOfArgs } from "../system/options.ts";

/**
 * The options a command for people (list, exec, doctor, import, uninstall) runs with: those
 * on its command line, and for the rest the args of the `credentials_helper "keychain"` block
 * in the CLI config in effect, so that it reaches the store Terraform reaches. When the block
 * decided something, or its args cannot be read, `tell` gets one line saying so.
 */
export async function followedOptions(
  io: Io,
  given: Partial<GlobalOptions>,
  tell: (line: string) => void,
): Promise<GlobalOptions> {
  const decided = given.service !== undefined && given.backend !== undefined;
  const { installedBlock } = await import("../commands/installed-block.ts");
  const block = decided && given.timeout !== undefined ? undefined : installedBlock(io);
  const fromBlock = block?.args === undefined ? undefined : optionsOfArgs(block.args);
  if (block !== undefined && fromBlock === undefined) {
    tell(
      `the args of the credentials_helper block in ${block.file} are not options this command reads: it uses the command line's and the defaults`,
    );
  }
  const { options, followed } = followBlock(given, fromBlock ?? {});
  if (followed && block?.args !== undefined) {
    tell(
      `following the credentials_helper block in ${block.file}: ${commandLine(block.args, io.platform)}`,
    );
  }
  return options;
}
