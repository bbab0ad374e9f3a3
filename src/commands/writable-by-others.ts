import { statSync, type Stats } from "node:fs";
import path from "node:path";

/** A directory through which another local user could replace the helper. */
export interface Exposure {
  readonly dir: string;
  /** In a few words: "writable by other users (mode 0777)", "owned by user id 1001". */
  readonly why: string;
  /** The command that closes it. */
  readonly fix: string;
}

/**
 * The first directory, from `dir` (or its nearest existing ancestor: install makes the rest
 * itself, 0755) up to the root, through which a user other than `uid` (or root) could put
 * another file where the helper is, or `undefined` when there is none. The helper reads every
 * token, so whoever can replace it can read them too.
 *
 * Such a directory is one writable by others, or by a group other than the owner's own
 * (user private groups share the owner's id: their group-write bit lets in no one else),
 * unless its sticky bit keeps others from renaming what they do not own (/tmp); or one owned
 * by another user than `uid` or root. On Windows, or when `uid` is unknown, `undefined`.
 */
export function writableByOthers(dir: string, uid: number | undefined): Exposure | undefined {
  if (uid === undefined) return undefined;
  let current = path.resolve(dir);
  for (;;) {
    const stats = statIfExists(current);
    if (stats !== undefined) {
      const why = exposure(stats, uid);
      if (why !== undefined) return { dir: current, why, fix: fixFor(current, stats, uid) };
    }
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** The exposures of `dirs` (see writableByOthers), each directory once. */
export function exposuresOf(dirs: readonly string[], uid: number | undefined): Exposure[] {
  const found = new Map<string, Exposure>();
  for (const dir of dirs) {
    const exposure = writableByOthers(dir, uid);
    if (exposure !== undefined) found.set(exposure.dir, exposure);
  }
  return [...found.values()];
}

const STICKY = 0o1000;

function exposure(stats: Stats, uid: number): string | undefined {
  const mode = `mode ${(stats.mode & 0o7777).toString(8).padStart(4, "0")}`;
  if (stats.uid !== uid && stats.uid !== 0) return `owned by user id ${stats.uid}`;
  if ((stats.mode & STICKY) !== 0) return undefined;
  if ((stats.mode & 0o002) !== 0) return `writable by every user (${mode})`;
  if ((stats.mode & 0o020) !== 0 && stats.gid !== stats.uid)
    return `writable by its group, id ${stats.gid} (${mode})`;
  return undefined;
}

function fixFor(dir: string, stats: Stats, uid: number): string {
  return stats.uid !== uid && stats.uid !== 0
    ? `move the helper out of ${dir}, or have it owned by you ("sudo chown ${uid} ${dir}")`
    : `run "chmod go-w ${dir}"`;
}

function statIfExists(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
