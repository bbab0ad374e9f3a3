import {
  closeSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import path from "node:path";

/** The file's text, or `undefined` when it does not exist. */
export function readTextIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    if (failure.code === "ENOENT") return undefined;
    // A read that fails after the open (EISDIR) names no file: say which one.
    failure.path ??= file;
    throw error;
  }
}

/** The file's permission bits, or `undefined` when it does not exist. */
export function modeIfExists(file: string): number | undefined {
  try {
    return statSync(file).mode & 0o7777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Replaces `file` with `content` so that a reader sees the old file or the new one, never
 * a part: a temp file beside it (created exclusively, with `mode` from the start so its
 * content is never readable by others), flushed, then renamed over the target.
 */
export function writeFileAtomically(
  file: string,
  content: string | Uint8Array,
  mode: number,
): void {
  // A name no other process picks ("wx" refuses one that exists); no crypto module needed,
  // which keeps it off the start-up path of the addon loader that shares this function.
  const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${unique}.tmp`);
  const fd = openSync(temp, "wx", mode);
  try {
    fchmodSync(fd, mode); // the umask may have narrowed what openSync was given
    writeSync(fd, typeof content === "string" ? Buffer.from(content, "utf8") : content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
