import { lstatSync, realpathSync } from "node:fs";
import { CliError } from "../errors.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import { parseStorableObject } from "../protocol/credentials-object.ts";
import type { CredentialStore } from "../stores/credential-store.ts";
import {
  credentialsFileWithout,
  parseCredentialsFile,
  type PlaintextCredentials,
} from "../terraform/credentials-file.ts";
import type { TerraformLocations } from "../terraform/locations.ts";
import { modeIfExists, readTextIfExists, removeFile, stageFile } from "../system/files.ts";

const EMPTY_FILE = '{\n  "credentials": {}\n}\n';

export interface ImportOptions {
  /** Copy only: the files are not touched. */
  readonly keep?: boolean;
  /** Replace credentials the store already holds for a host with the file's. */
  readonly force?: boolean;
  /** Decide everything, store and change nothing. */
  readonly dryRun?: boolean;
}

export interface ImportedHost {
  readonly file: string;
  readonly host: string;
  /**
   * moved/copied: in the store now (copied: the file keeps it too); replaced: moved over
   * different credentials the store held (with force); kept: left in the file because the
   * store holds different credentials; failed: left in the file, with `reason`.
   */
  readonly outcome: "moved" | "copied" | "replaced" | "kept" | "failed";
  /** Why it was kept or failed; never holds a token. */
  readonly reason?: string;
}

export interface ImportedFile {
  readonly file: string;
  readonly change: "rewritten" | "removed";
}

export interface ImportReport {
  readonly hosts: readonly ImportedHost[];
  /** The files that changed (or would, with dryRun). */
  readonly files: readonly ImportedFile[];
}

const KEPT_REASON =
  "the store already holds different credentials for it (perhaps newer, from a login): left in the file; --force replaces them with the file's";

/**
 * `import`: moves every host of each `credentials.tfrc.json` into `store`. Each object is
 * stored, read back and compared before its host leaves the file; a host that fails stays.
 * The file is then rewritten atomically with its permissions, or removed when nothing is
 * left in it; with `keep` it is not touched. When the store cannot be reached at all the
 * file is left exactly as it was and the error is thrown.
 */
export async function importCredentials(
  store: CredentialStore,
  locations: TerraformLocations,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const hosts: ImportedHost[] = [];
  const files: ImportedFile[] = [];
  let storeReached = false;
  // Two spellings of one host (App.Example.COM, app.example.com), or one host given twice,
  // reach one entry: it moves only when every occurrence holds the same object, else a
  // token would be lost.
  const imported = new Map<string, string>();
  for (const file of locations.credentialsFiles) {
    const text = readTextIfExists(file);
    if (text === undefined) continue;
    const parsed = parseCredentialsFile(text, file);
    const objectsByHost = new Map<string, Set<string>>();
    const candidates = parsed.hosts.map(({ name, object }) => {
      try {
        const host = normalizeHostname(name);
        const stored = parseStorableObject(object, `the credentials for ${name} in ${file}`);
        objectsByHost.set(host, (objectsByHost.get(host) ?? new Set()).add(stored));
        return { name, host, stored };
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        return { name, failure: error.message };
      }
    });
    const moved = new Set<number>();
    for (const [index, candidate] of candidates.entries()) {
      const { name } = candidate;
      const report = (outcome: ImportedHost["outcome"], reason?: string) =>
        hosts.push({ file, host: name, outcome, ...(reason === undefined ? {} : { reason }) });
      if (candidate.failure !== undefined) {
        report("failed", candidate.failure);
        continue;
      }
      const { host, stored } = candidate;
      if ((objectsByHost.get(host)?.size ?? 0) > 1) {
        report("failed", `${host} is in the file more than once with different credentials`);
        continue;
      }
      const earlier = imported.get(host);
      if (earlier !== undefined) {
        if (earlier !== stored) {
          report("failed", `${host} was imported from another file with different credentials`);
          continue;
        }
        moved.add(index);
        report(options.keep ? "copied" : "moved");
        continue;
      }
      // Until one call has succeeded, a failing store is unreachable as a whole: then
      // nothing has moved, and the import fails with every file untouched.
      let replacing = false;
      try {
        const existing = await store.get(host);
        if (existing === stored) storeReached = true;
        if (existing !== undefined && existing !== stored) {
          if (!options.force) {
            report("kept", KEPT_REASON);
            continue;
          }
          replacing = true;
        }
        if (!options.dryRun && existing !== stored) {
          await store.store(host, stored);
          storeReached = true;
          if ((await store.get(host)) !== stored) {
            throw new CliError("the store returned something else when read back");
          }
        }
      } catch (error) {
        if (!storeReached) throw error;
        if (!(error instanceof CliError)) throw error;
        report("failed", error.message);
        continue;
      }
      imported.set(host, stored);
      moved.add(index);
      report(replacing ? "replaced" : options.keep ? "copied" : "moved");
    }
    if (options.keep || moved.size === 0) continue;
    const movedObjects = new Map(
      [...moved].map((index) => {
        const { host, stored } = candidates[index] as { host: string; stored: string };
        return [host, stored];
      }),
    );
    const change = removeMoved(file, parsed, movedObjects, options.dryRun === true);
    if (change !== undefined) files.push({ file, change });
  }
  return { hosts, files };
}

/**
 * Takes the moved hosts out of `file`. A symlinked file (a dotfile manager's) is edited
 * where it lives: replacing or removing the link would leave the tokens in its target.
 * Emptied, it keeps an empty credentials object, so that the link still points at a file.
 *
 * The file is read again just before it is replaced: a `terraform login` that wrote to it
 * while the hosts were stored must not be undone. From the text found then, only hosts whose
 * object is exactly the one stored are removed; everything else stays as it now is.
 */
function removeMoved(
  file: string,
  parsedBefore: PlaintextCredentials,
  moved: ReadonlyMap<string, string>,
  dryRun: boolean,
): ImportedFile["change"] | undefined {
  const isLink = lstatSync(file).isSymbolicLink();
  const target = isLink ? realpathSync(file) : file;
  for (let attempt = 0; ; attempt++) {
    const text = readTextIfExists(target);
    if (text === undefined) return undefined; // removed meanwhile: nothing of it to keep
    const parsed = text === parsedBefore.text ? parsedBefore : parseCredentialsFile(text, file);
    const removed = new Set<number>();
    for (const [index, { name, object }] of parsed.hosts.entries()) {
      if (sameMovedObject(name, object, moved)) removed.add(index);
    }
    if (removed.size === 0) return undefined;
    const rest = credentialsFileWithout(parsed, removed) ?? (isLink ? EMPTY_FILE : undefined);
    if (dryRun) return rest === undefined ? "removed" : "rewritten";
    const staged =
      rest === undefined ? undefined : stageFile(target, rest, modeIfExists(target) ?? 0o600);
    // The last look before the switch: if it changed while the new text was written, start over.
    if (readTextIfExists(target) !== text && attempt < 5) {
      staged?.discard();
      continue;
    }
    if (staged === undefined) {
      removeFile(target);
      return "removed";
    }
    staged.commit();
    return "rewritten";
  }
}

function sameMovedObject(
  name: string,
  object: string,
  moved: ReadonlyMap<string, string>,
): boolean {
  try {
    const host = normalizeHostname(name);
    return moved.get(host) === parseStorableObject(object, name);
  } catch {
    return false;
  }
}
