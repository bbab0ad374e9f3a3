/** The keychain addon that the build embeds in the Bun executable (`bun build --asset`). */
import { readFileSync } from "node:fs";
import path from "node:path";

/** The addon's file name in the build's directory, and so in the executable. */
export const KEYRING_ASSET = "keyring.node";

interface BunRuntime {
  /** The entry point's path in the executable's own file system: /$bunfs/root/<name>. */
  readonly main: string;
}

/**
 * The embedded addon's bytes. Bun keeps assets beside the entry point in the executable's
 * file system (/$bunfs/root/ on POSIX, B:\~BUN\root\ on Windows), where node:fs reads them
 * from memory; dlopen cannot load them from there.
 */
export function readEmbeddedAddon(): Uint8Array {
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (bun === undefined) throw new Error("this is not a Bun executable");
  return readFileSync(path.join(path.dirname(bun.main), KEYRING_ASSET));
}
