import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import { CliError, errnoMeaning } from "../errors.ts";

/**
 * The file's text, or `undefined` when it does not exist. Anything but a regular file (a
 * FIFO, a device, a directory) is refused before a byte is read: reading a FIFO with no
 * writer would block forever, and a device has no end.
 */
export function readTextIfExists(file: string): string | undefined {
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
  // Windows has neither the flag nor FIFOs; there a stat first does the same job.
  const nonBlocking = constants.O_NONBLOCK as number | undefined;
  let fd;
  try {
    if (nonBlocking === undefined) refuseSpecialFile(file, statSync(file), true);
    fd = openSync(file, constants.O_RDONLY | (nonBlocking ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    refuseSpecialFile(file, fstatSync(fd), true);
    return strictUtf8(readFileSync(fd), file);
  } catch (error) {
    // A read that fails after the open names no file: say which one.
    (error as NodeJS.ErrnoException).path ??= file;
    throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Invalid UTF-8 is refused rather than replaced with U+FFFD: a file read here may be written
 * back (install, import), and every byte the user wrote must survive that.
 */
function strictUtf8(bytes: Uint8Array, file: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new CliError(`${file} is not valid UTF-8 text: it was not read`);
  }
}

/** A new file's content, written and flushed beside its target, not yet in its place. */
interface StagedFile {
  readonly target: string;
  /** Renames it over the target: readers see the old file or the new one, never a part. */
  commit(): void;
  /** Removes it; the target stays as it was. */
  discard(): void;
}

/**
 * Writes `content` to a temp file beside `file` (created exclusively, with `mode` from the
 * start so its content is never readable by others), checks that every byte went out,
 * and flushes it to disk. `file` itself is untouched until `commit()`. Refuses a target
 * that exists and is not a regular file (a device such as /dev/null, a FIFO, a directory,
 * or a symlink: callers that edit a symlinked file resolve it first). Any failure — a full
 * disk, a quota, EIO — is a CliError naming `file`, and leaves `file` byte for byte.
 */
export function stageFile(file: string, content: string | Uint8Array, mode: number): StagedFile {
  refuseSpecialFile(file, lstatIfExists(file));
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  return stagedAt(writeTemp(file, bytes, mode).temp, file);
}

/**
 * The new content of a file others may hold too (Terraform's CLI config files and
 * credentials.tfrc.json, which dotfile repositories hard-link), staged beside it as
 * `stageFile` stages it; `commit()` puts it in place so that the file stays what it is to
 * everyone else:
 * - a file with one link, whose owner the copy could be given, is replaced by the copy with
 *   a rename (readers see the old file or the new one, never a part);
 * - a file with more than one hard link, or whose owner the copy could not be given (another
 *   user's file that this user may write), is written over in place: a rename would leave
 *   the old content, tokens included, in every other link, or hand the file to this user.
 * The file's mode is kept (`newMode` for a file that does not exist yet), and its owner.
 * The one writer of these files: install, uninstall and import all stage through it.
 */
export function stageReplacement(file: string, content: string, newMode = 0o600): StagedFile {
  const before = lstatIfExists(file);
  refuseSpecialFile(file, before);
  const bytes = Buffer.from(content, "utf8");
  const { temp, ownerKept } = writeTemp(
    file,
    bytes,
    before === undefined ? newMode : before.mode & 0o7777,
    before,
  );
  const copy = stagedAt(temp, file);
  if (before === undefined || (before.nlink <= 1 && ownerKept)) return copy;
  return {
    target: file,
    commit: () => writeInPlace(file, bytes, before, temp),
    discard: () => copy.discard(),
  };
}

/**
 * Thrown by a commit that finds `file` replaced since it was staged (another program renamed
 * its own new version into place): nothing was written, and the caller may read the file
 * again and start over.
 */
export class FileChanged extends CliError {}

/**
 * Writes `bytes` over the file `before` described, in place, once the copy at `temp` holds
 * them (a full disk failed there already, with `file` untouched); then truncates, flushes,
 * checks the size, and removes the copy. Refuses, writing nothing, when `file` is no longer
 * that inode. Should the write fail once begun, the copy is left to recover from, and named.
 */
function writeInPlace(file: string, bytes: Uint8Array, before: Stats, temp: string): void {
  let fd;
  try {
    fd = openSync(file, constants.O_WRONLY);
  } catch (error) {
    removeQuietly(temp);
    throw writeFailure(file, error);
  }
  let now;
  try {
    now = fstatSync(fd);
  } catch (error) {
    closeQuietly(fd);
    removeQuietly(temp);
    throw writeFailure(file, error);
  }
  if (now.ino !== before.ino || now.dev !== before.dev) {
    closeQuietly(fd);
    removeQuietly(temp);
    throw new FileChanged(`${file} was replaced while it was being written: it was left as it is`);
  }
  try {
    writeAll(fd, bytes);
    ftruncateSync(fd, bytes.byteLength);
    fsyncSync(fd);
    if (fstatSync(fd).size !== bytes.byteLength) throw shortWrite();
  } catch (error) {
    closeQuietly(fd);
    throw new CliError(
      `could not write ${file} in place: ${causeOf(error)}; its new content is in a file beside it named .${path.basename(file)}.*.tmp`,
      undefined,
      { cause: error },
    );
  }
  closeSync(fd);
  removeQuietly(temp);
}

/**
 * Writes `bytes` to a new temp file beside `file` (created exclusively, with `mode` from the
 * start so its content is never readable by others), checks that every byte went out, and
 * flushes it; with `owner`, gives it that file's owner and group where it can
 * (`ownerKept` says whether it could). Any failure is a CliError naming `file`.
 */
function writeTemp(
  file: string,
  bytes: Uint8Array,
  mode: number,
  owner?: Stats,
): { temp: string; ownerKept: boolean } {
  const temp = tempNameBeside(file);
  let fd;
  try {
    fd = openSync(temp, "wx", mode);
  } catch (error) {
    throw writeFailure(file, error);
  }
  let ownerKept = true;
  try {
    fchmodSync(fd, mode); // the umask may have narrowed what openSync was given
    if (owner !== undefined) ownerKept = giveOwner(fd, owner);
    writeAll(fd, bytes);
    fsyncSync(fd);
    // The size the file system reports, not only what write() returned: the last word on
    // whether the content is all there.
    if (fstatSync(fd).size !== bytes.byteLength) throw shortWrite();
  } catch (error) {
    closeQuietly(fd);
    removeQuietly(temp);
    throw writeFailure(file, error);
  }
  try {
    closeSync(fd); // on some file systems (NFS) a deferred write error surfaces here
  } catch (error) {
    removeQuietly(temp);
    throw writeFailure(file, error);
  }
  return { temp, ownerKept };
}

/**
 * Gives the file open as `fd` the owner and group of `owner`, when they differ; false when
 * the system refuses (only root may give a file away). Windows has no POSIX owners.
 */
function giveOwner(fd: number, owner: Stats): boolean {
  if (process.platform === "win32") return true;
  const mine = fstatSync(fd);
  if (mine.uid === owner.uid && mine.gid === owner.gid) return true;
  try {
    fchownSync(fd, owner.uid, owner.gid);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EPERM" || code === "EINVAL") return false;
    throw error;
  }
  // The set-user-ID and set-group-ID bits go with a change of owner: put the mode back.
  fchmodSync(fd, owner.mode & 0o7777);
  return true;
}

/**
 * A symlink at `file` that leads to `target`, made beside it under a temp name and renamed
 * over `file` on `commit()`: whatever was at `file` is replaced in one step. Callers decide
 * whether `file` may be replaced; a failure is a CliError naming `file`.
 */
export function stageSymlink(file: string, target: string): StagedFile {
  const temp = tempNameBeside(file);
  try {
    symlinkSync(target, temp);
  } catch (error) {
    throw writeFailure(file, error);
  }
  return stagedAt(temp, file);
}

/** `temp`, made beside `file`, as a StagedFile: renamed over `file` on commit. */
function stagedAt(temp: string, file: string): StagedFile {
  return {
    target: file,
    commit() {
      try {
        renameSync(temp, file);
      } catch (error) {
        removeQuietly(temp);
        throw writeFailure(file, error);
      }
      syncDirectory(path.dirname(file));
    },
    discard() {
      removeQuietly(temp);
    },
  };
}

/**
 * Removes the file (or symlink) `file`; one already gone counts as removed. A failure is a
 * CliError naming `file` and the kernel's cause, and `file` is still there. unlink, not
 * rmSync: the runtimes mislabel rmSync's failures (for the EPERM of an immutable file, Bun
 * says EFAULT and Node ENOTDIR, from the rmdir it tries next).
 */
export function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new CliError(
      `could not remove ${file}: ${causeOf(error)}; it is still there`,
      undefined,
      {
        cause: error,
      },
    );
  }
}

/** Removes a temp file of ours, when a failure is already being reported. */
function removeQuietly(temp: string): void {
  try {
    unlinkSync(temp);
  } catch {
    // The first failure is the one to report; a temp file left behind is named like no other.
  }
}

/** A name beside `file` that no other process picks. */
function tempNameBeside(file: string): string {
  // No crypto module needed, which keeps it off the start-up path of the addon loader that
  // shares this module; "wx" (or symlink's EEXIST) refuses a name that exists anyway.
  const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  return path.join(path.dirname(file), `.${path.basename(file)}.${unique}.tmp`);
}

/** Replaces `file` with `content` at once: `stageFile` and `commit`. */
export function writeFileAtomically(
  file: string,
  content: string | Uint8Array,
  mode: number,
): void {
  stageFile(file, content, mode).commit();
}

/**
 * Writes every byte of `bytes`, in as many calls as the kernel needs. A call that takes
 * nothing (a full device that reports it as 0 rather than ENOSPC) is a failure, not a
 * reason to loop forever.
 */
function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.byteLength) {
    const count = writeSync(fd, bytes, written, bytes.byteLength - written);
    if (count <= 0) throw shortWrite();
    written += count;
  }
}

function shortWrite(): NodeJS.ErrnoException {
  return Object.assign(new Error("no space left on the device"), {
    code: "ENOSPC",
    syscall: "write",
  });
}

/** Makes the rename itself durable; a no-op where directories cannot be opened (Windows). */
function syncDirectory(dir: string): void {
  let fd;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Not supported here (EISDIR, EPERM, EINVAL): the rename stands, durable or not.
  } finally {
    if (fd !== undefined) closeQuietly(fd);
  }
}

function lstatIfExists(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw writeFailure(file, error);
  }
}

const KINDS: ReadonlyArray<[(stats: Stats) => boolean, string]> = [
  [(stats) => stats.isDirectory(), "a directory"],
  [(stats) => stats.isSymbolicLink(), "a symlink"],
  [(stats) => stats.isFIFO(), "a FIFO"],
  [(stats) => stats.isCharacterDevice(), "a character device"],
  [(stats) => stats.isBlockDevice(), "a block device"],
  [(stats) => stats.isSocket(), "a socket"],
];

function refuseSpecialFile(file: string, stats: Stats | undefined, reading = false): void {
  if (stats === undefined || stats.isFile()) return;
  const kind = KINDS.find(([is]) => is(stats))?.[1] ?? "something else";
  throw new CliError(
    reading
      ? `${file} is ${kind}, not a regular file: it was not read; point it at a file`
      : `${file} is ${kind}, not a regular file: it was not replaced and is left as it is`,
  );
}

/** One line naming the target (never the temp file) and saying that it is unchanged. */
function writeFailure(file: string, error: unknown): Error {
  if (error instanceof CliError) return error;
  return new CliError(
    `could not write ${file}: ${causeOf(error)}; it was left as it was`,
    undefined,
    {
      cause: error,
    },
  );
}

/** The kernel's cause of a failed file operation, in words. */
function causeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === undefined ? String(error) : errnoMeaning(code);
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already failing: the first error is the one to report.
  }
}
