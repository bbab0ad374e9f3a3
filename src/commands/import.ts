import { lstatSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { CliError } from "../errors.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import { parseStorableObject } from "../protocol/credentials-object.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import { credentialsFileWithout, parseCredentialsFile } from "../terraform/credentials-file.ts";
import type { TerraformLocations } from "../terraform/locations.ts";
import {
  findCredentialsBlockItems,
  removeCredentialsBlocks,
  type CredentialsBlock,
} from "../terraform/cli-config.ts";
import { configDirFileNames, credentialsBlocksIn } from "../terraform/config-dir.ts";
import { fixFor } from "../fixes.ts";
import { modeIfExists, readTextIfExists, removeFile, stageFile } from "../system/files.ts";

const EMPTY_FILE = '{\n  "credentials": {}\n}\n';

interface ImportOptions {
  /** Copy only: the files are not touched. */
  readonly keep?: boolean;
  /** Replace credentials the store already holds for a host with the file's. */
  readonly force?: boolean;
  /** Decide everything, store and change nothing. */
  readonly dryRun?: boolean;
}

interface ImportedHost {
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

interface ImportedFile {
  readonly file: string;
  readonly change: "rewritten" | "removed";
}

interface ImportReport {
  readonly hosts: readonly ImportedHost[];
  /** The files that changed (or would, with dryRun). */
  readonly files: readonly ImportedFile[];
  /**
   * The hosts moved out of credentials.tfrc.json files that now name no host at all (or
   * would, with dryRun): `terraform stacks` found its host there.
   */
  readonly lastCredentialsFileHosts: readonly string[];
}

const KEPT_REASON =
  "the store already holds different credentials for it (perhaps newer, from a login): left in the file; --force replaces them with the file's";

/**
 * `import`: moves every host of each `credentials.tfrc.json`, then of each `credentials`
 * block in the CLI config files Terraform and OpenTofu read, into `store`. Each object is
 * stored, read back and compared before its host leaves the file; a host that fails stays.
 * A file is then rewritten atomically with its permissions (a credentials.tfrc.json is
 * removed when nothing is left in it); with `keep` it is not touched. A credentials block
 * import cannot move (JSON syntax, anything but one plain string token) is reported as
 * failed and left alone. When the store cannot be reached at all every file is left exactly
 * as it was and the error is thrown. A CLI config file the scanner cannot read is left
 * alone (doctor reports it).
 */
export async function importCredentials(
  store: CredentialStore,
  locations: TerraformLocations,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const configFiles = readCliConfigFiles(locations);
  const mover = new Mover(store, options);
  const fromCredentialsFiles: string[] = [];
  let hostsLeft = false;
  for (const file of locations.credentialsFiles) {
    const text = readTextIfExists(file);
    if (text === undefined) continue;
    const parsed = parseCredentialsFile(text, file);
    const reported = mover.hosts.length;
    const moved = await mover.move(
      file,
      parsed.hosts.map(({ name, object }) => ({
        name,
        read: () => parseStorableObject(object, `the credentials for ${name} in ${file}`),
      })),
    );
    hostsLeft ||= mover.hosts
      .slice(reported)
      .some(({ outcome }) => outcome !== "moved" && outcome !== "replaced");
    if (moved.size === 0) continue;
    fromCredentialsFiles.push(...moved.keys());
    const change = rewriteWithout(file, options.dryRun === true, EMPTY_FILE, (now) => {
      const current = now === parsed.text ? parsed : parseCredentialsFile(now, file);
      const removed = new Set<number>();
      for (const [index, { name, object }] of current.hosts.entries()) {
        if (sameMoved(name, () => parseStorableObject(object, name), moved)) removed.add(index);
      }
      return removed.size === 0 ? null : credentialsFileWithout(current, removed);
    });
    if (change !== undefined) mover.files.push({ file, change });
  }
  for (const { file, text, blocks } of configFiles) {
    const moved = await mover.move(
      file,
      blocks.map(({ host, token }) => ({
        name: host,
        read: () => {
          if (token === undefined) throw new CliError(BY_HAND);
          return parseStorableObject(JSON.stringify({ token }), `the credentials for ${host}`);
        },
      })),
    );
    if (moved.size === 0) continue;
    const change = rewriteWithout(file, options.dryRun === true, "", (now) => {
      const current = now === text ? blocks : findCredentialsBlockItems(now);
      const removed = current.filter(
        ({ host, token }) =>
          token !== undefined && sameMoved(host, () => tokenObject(token), moved),
      );
      return removed.length === 0 ? null : removeCredentialsBlocks(now, removed);
    });
    if (change !== undefined) mover.files.push({ file, change });
  }
  return {
    hosts: mover.hosts,
    files: mover.files,
    lastCredentialsFileHosts: hostsLeft ? [] : fromCredentialsFiles,
  };
}

const BY_HAND = `import does not edit this credentials block (JSON syntax, or values other than one plain string token); ${fixFor("credentials-by-hand").effect}`;

function tokenObject(token: string): string {
  return parseStorableObject(JSON.stringify({ token }), "a credentials block");
}

interface ConfigFileBlocks {
  readonly file: string;
  readonly text: string;
  readonly blocks: readonly CredentialsBlock[];
}

/**
 * Every CLI config file Terraform and OpenTofu read that has credentials blocks: the main
 * ones, then `*.tfrc` and `*.tfrc.json` of the config directories (credentials.tfrc.json
 * aside), with their blocks (see `credentialsBlocksIn`).
 */
function readCliConfigFiles(locations: TerraformLocations): ConfigFileBlocks[] {
  const dirFiles = locations.configDirs.flatMap((dir) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    return configDirFileNames(names).map((name) => path.join(dir, name));
  });
  const files = [
    ...new Set([locations.terraformConfigFile, locations.tofuConfigFile, ...dirFiles]),
  ].filter((file) => !locations.credentialsFiles.includes(file));
  return files.flatMap((file) => {
    const text = readTextIfExists(file);
    if (text === undefined) return [];
    let blocks: CredentialsBlock[];
    try {
      blocks = credentialsBlocksIn(file, text);
    } catch (error) {
      // A file the scanner cannot read is doctor's to report; its blocks stay where they are.
      if (error instanceof CliError) return [];
      throw error;
    }
    return blocks.length === 0 ? [] : [{ file, text, blocks }];
  });
}

/** One host found in a file: its name as written, and its object as the store keeps it. */
interface Candidate {
  readonly name: string;
  /** The object to store; throws a `CliError` saying why it cannot be. */
  readonly read: () => string;
}

/**
 * Stores hosts and reports each, across files. Two spellings of one host
 * (App.Example.COM, app.example.com), or one host given twice, reach one entry: it moves
 * only when every occurrence holds the same object, else a token would be lost.
 */
class Mover {
  readonly hosts: ImportedHost[] = [];
  readonly files: ImportedFile[] = [];
  readonly #imported = new Map<string, string>();
  #storeReached = false;
  readonly #store: CredentialStore;
  readonly #options: ImportOptions;

  constructor(store: CredentialStore, options: ImportOptions) {
    this.#store = store;
    this.#options = options;
  }

  /** Stores `candidates` of `file`; the hosts (normalized) that may leave it, with their objects. */
  async move(file: string, found: readonly Candidate[]): Promise<Map<string, string>> {
    const { force, keep, dryRun } = this.#options;
    const objectsByHost = new Map<string, Set<string>>();
    const candidates = found.map(({ name, read }) => {
      try {
        const host = normalizeHostname(name);
        const stored = read();
        objectsByHost.set(host, (objectsByHost.get(host) ?? new Set()).add(stored));
        return { name, host, stored };
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        return { name, failure: error.message };
      }
    });
    const moved = new Map<string, string>();
    for (const candidate of candidates) {
      const { name } = candidate;
      const report = (outcome: ImportedHost["outcome"], reason?: string) =>
        this.hosts.push({ file, host: name, outcome, ...(reason === undefined ? {} : { reason }) });
      if (candidate.failure !== undefined) {
        report("failed", candidate.failure);
        continue;
      }
      const { host, stored } = candidate;
      if ((objectsByHost.get(host)?.size ?? 0) > 1) {
        report("failed", `${host} is in the file more than once with different credentials`);
        continue;
      }
      const earlier = this.#imported.get(host);
      if (earlier !== undefined) {
        if (earlier !== stored) {
          report("failed", `${host} was imported from another file with different credentials`);
          continue;
        }
        moved.set(host, stored);
        report(keep ? "copied" : "moved");
        continue;
      }
      // Until one call has succeeded, a failing store is unreachable as a whole: then
      // nothing has moved, and the import fails with every file untouched.
      let replacing = false;
      try {
        const existing = await this.#store.get(host);
        if (existing === stored) this.#storeReached = true;
        if (existing !== undefined && existing !== stored) {
          if (!force) {
            report("kept", KEPT_REASON);
            continue;
          }
          replacing = true;
        }
        if (!dryRun && existing !== stored) {
          await this.#store.store(host, stored);
          this.#storeReached = true;
          if ((await this.#store.get(host)) !== stored) {
            throw new CliError("the store returned something else when read back");
          }
        }
      } catch (error) {
        if (!this.#storeReached) throw error;
        if (!(error instanceof CliError)) throw error;
        report("failed", error.message);
        continue;
      }
      this.#imported.set(host, stored);
      moved.set(host, stored);
      report(replacing ? "replaced" : keep ? "copied" : "moved");
    }
    return keep ? new Map() : moved;
  }
}

/**
 * Takes the moved hosts out of `file`: `without` gives the text without them, `null` when
 * none of them is in it, or `undefined` when nothing would be left (the file goes). A
 * symlinked file (a dotfile manager's) is edited where it lives: replacing or removing the
 * link would leave the tokens in its target; emptied, it gets `emptyLink`, so that the link
 * still points at a file.
 *
 * The file is read again just before it is replaced: a `terraform login` that wrote to it
 * while the hosts were stored must not be undone. `without` works on the text found then,
 * removing only hosts whose object is exactly the one stored.
 */
function rewriteWithout(
  file: string,
  dryRun: boolean,
  emptyLink: string,
  without: (text: string) => string | undefined | null,
): ImportedFile["change"] | undefined {
  const isLink = lstatSync(file).isSymbolicLink();
  const target = isLink ? realpathSync(file) : file;
  for (let attempt = 0; ; attempt++) {
    const text = readTextIfExists(target);
    if (text === undefined) return undefined; // removed meanwhile: nothing of it to keep
    const result = without(text);
    if (result === null) return undefined;
    const rest = result ?? (isLink ? emptyLink : undefined);
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

/** Whether the host `name` holds what was moved for it (`object` read lazily: it may throw). */
function sameMoved(
  name: string,
  object: () => string,
  moved: ReadonlyMap<string, string>,
): boolean {
  try {
    return moved.get(normalizeHostname(name)) === object();
  } catch {
    return false;
  }
}
