/** The keychain addon that the build embeds in the Bun executable (`bun build --asset`). */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";

/** The addon's file name in the build's directory, and so in the executable. */
export const KEYRING_ASSET = "keyring.node";

interface BunRuntime {
  /** The entry point's path in the executable's own file system: /$bunfs/root/<name>. */
  readonly main: string;
}

/** A file embedded in the executable, read only when its bytes are needed. */
export interface EmbeddedFile {
  readonly size: number;
  bytes(): Uint8Array;
}

/**
 * The embedded addon. Bun keeps assets beside the entry point in the executable's file
 * system (/$bunfs/root/), where node:fs reads them from memory; dlopen cannot load them
 * from there. Its 3 MB are copied only when needed: on every call they cost ~6 MiB of RSS.
 */
export function embeddedAddon(): EmbeddedFile {
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (bun === undefined) throw new Error("this is not a Bun executable");
  const file = path.join(path.dirname(bun.main), KEYRING_ASSET);
  let bytes: Uint8Array | undefined;
  return { size: statSync(file).size, bytes: () => (bytes ??= readFileSync(file)) };
}
