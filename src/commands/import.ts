import { lstatSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { CliError, ExitCode } from "../errors.ts";
import { hostnameForComparison, type Hostname } from "../protocol/hostname.ts";
import { parseStorableObject } from "../protocol/credentials-object.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import { credentialsFileWithout, parseCredentialsFile } from "../terraform/credentials-file.ts";
import { findCredentialsBlockItems, removeCredentialsBlocks } from "../terraform/cli-config.ts";
import {
  hostIn,
  whereIs,
  type CredentialsEntry,
  type FilesGive,
  type TerraformView,
  type Tool,
} from "../terraform/view.ts";
import { fixFor } from "../fixes.ts";
import type { Machine } from "../system/io.ts";
import { stacksHostnameNote } from "../terraform/stacks-hostname.ts";
import { refuseRootInOthersHome } from "./cli-config-edits.ts";
import { viewsOf } from "./read-view.ts";
import { whyHelperNotRun } from "./why-helper-not-run.ts";
import {
  modeIfExists,
  readTextIfExists,
  removeFile,
  rewriteInPlace,
  stageFile,
} from "../system/files.ts";

const EMPTY_FILE = '{\n  "credentials": {}\n}\n';

interface ImportOptions {
  /** Copy only: the files are not touched. */
  readonly keep?: boolean;
  /**
   * Replace credentials the store already holds for a host with the file's, and drop
   * copies of a host that hold another token than the one Terraform sends.
   */
  readonly force?: boolean;
  /** Decide everything, store and change nothing. */
  readonly dryRun?: boolean;
}

interface ImportedHost {
  /** Where the token Terraform sends comes from (or the entry that keeps the host). */
  readonly file: string;
  readonly host: string;
  /**
   * moved/copied: in the store now (copied: the files keep it too); replaced: moved over
   * different credentials the store held (with force); kept: left in the files because the
   * store holds different credentials; failed: left in the files, with `reason`.
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

/** What `import` did, for cli/ to report. */
export interface ImportResult {
  readonly report: ImportReport;
  /** The CLI config files Terraform and OpenTofu read, that it looked into. */
  readonly filesRead: readonly string[];
  /** What `terraform stacks` now misses, when import moved its host (see stacksHostnameNote). */
  readonly stacksNote?: string;
}

/** `import` on this machine: the files its Terraform and OpenTofu read, into the store `openStore` gives. */
export async function importTokens(
  machine: Machine,
  openStore: () => CredentialStore | Promise<CredentialStore>,
  options: ImportOptions,
): Promise<ImportResult> {
  refuseRootInOthersHome(machine);
  const views = viewsOf(machine);
  // Moved into a store Terraform never asks, a token is one it stops sending. A copy
  // (--keep) leaves the files as they are.
  const notRun = options.keep === true ? undefined : whyHelperNotRun(views.Terraform);
  if (notRun !== undefined) {
    throw new CliError(`import moves nothing: ${notRun.reason}`, ExitCode.Failure, {
      fix: { situation: notRun.situation },
    });
  }
  const report = await importCredentials(await openStore(), views, options);
  const stacksNote = stacksHostnameNote(report.lastCredentialsFileHosts, machine.env);
  const filesRead = [...views.Terraform.files, ...views.OpenTofu.files].map(({ file }) => file);
  return {
    report,
    filesRead: [...new Set(filesRead)],
    ...(stacksNote !== undefined && { stacksNote }),
  };
}

/** Whether an import left a host behind: then it exits non-zero, after its summary. */
export function leftBehind(report: ImportReport): number {
  return report.hosts.filter(({ outcome }) => outcome === "failed" || outcome === "kept").length;
}

const KEPT_REASON =
  "the store already holds different credentials for it (perhaps newer, from a login): left in the files; --force replaces them with the files'";

const BY_HAND = `import cannot tell what Terraform reads from this entry (values other than plain strings, or a nested block); ${fixFor("credentials-by-hand").effect}`;
const NOT_EDITED = `it is written in a form import does not edit (only credentials "HOST" { ... } blocks and the members of {"credentials": {...}}); ${fixFor("credentials-by-hand").effect}`;

/** A host to move: what Terraform sends, and every entry that must go for the helper to be asked. */
interface Move {
  readonly host: Hostname;
  readonly object: string;
  readonly token: string;
  readonly from: CredentialsEntry;
  readonly entries: readonly CredentialsEntry[];
}

/**
 * `import`, by the view of `views`: for each host a `credentials` entry names in a file
 * Terraform (or OpenTofu) reads, stores the object Terraform sends (the merged `credentials`
 * object, as `terraform/view.ts` works it out), reads it back, and only then removes every
 * entry for that host from those files (a tokenless one included), so that Terraform asks
 * the helper and gets the same token. A host is refused, and its entries left alone, when
 * moving it would change what Terraform sends or drop a token silently: an entry with
 * another token (unless `force`), a misspelled `TOKEN`, an entry this tool cannot read,
 * spellings of the host that Terraform picks from at random, or a tokenless object (nothing
 * to move). A file with more than one hard link is rewritten in place, so that no link
 * keeps a moved token; a symlinked file is edited in its target. When the store cannot be
 * reached at all, every file is left as it was and the error is thrown.
 */
export async function importCredentials(
  store: CredentialStore,
  views: Readonly<Record<Tool, TerraformView>>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  refuseUnreadable(views);
  const hosts: ImportedHost[] = [];
  const stored = await storeAll(store, decide(views, options.force === true), options, hosts);
  const files: ImportedFile[] = [];
  const emptied: string[] = [];
  if (options.keep !== true && stored.length > 0) {
    for (const [file, entries] of byFile(stored)) {
      const change = removeEntries(file, entries, stored, options);
      if (change === undefined) continue;
      files.push({ file, change: change.change });
      if (path.basename(file) === "credentials.tfrc.json" && change.empty) emptied.push(file);
    }
  }
  return { hosts, files, lastCredentialsFileHosts: hostsOnlyIn(emptied, stored) };
}

/**
 * A credentials file import cannot read (not JSON, not UTF-8, not a file) may hold tokens
 * that win over the helper: nothing moves until it is fixed. A native-syntax file the
 * scanner cannot read is doctor's to report; its blocks stay where they are.
 */
function refuseUnreadable(views: Readonly<Record<Tool, TerraformView>>): void {
  for (const { error, syntax, text } of [...views.Terraform.files, ...views.OpenTofu.files]) {
    if (error !== undefined && (syntax === "json" || text === undefined)) throw new CliError(error);
  }
}

/** A host left where it is, and why. */
interface Refused {
  readonly host: string;
  readonly file: string;
  readonly reason: string;
  /** The entry the reason names, for the report's order. */
  readonly at: CredentialsEntry;
}

/** Per host named in a file: the move, or why it is refused. */
function decide(
  views: Readonly<Record<Tool, TerraformView>>,
  force: boolean,
): Array<Move | Refused> {
  // OpenTofu's view counts only where it reads other files than Terraform.
  const sameFiles =
    views.OpenTofu.files.map(({ file }) => file).join("\0") ===
    views.Terraform.files.map(({ file }) => file).join("\0");
  const list = sameFiles ? [views.Terraform] : [views.Terraform, views.OpenTofu];
  const invalid = unique(
    list.flatMap((view) => view.files.flatMap(({ entries }) => entries)),
  ).flatMap((entry): Refused[] => {
    if (entry.host !== undefined) return [];
    let reason = "not a hostname";
    try {
      hostnameForComparison(entry.label);
    } catch (error) {
      reason = (error as Error).message;
    }
    return [{ host: entry.label, file: entry.file, reason, at: entry }];
  });
  const hosts = [...new Set(list.flatMap((view) => view.hosts.map(({ host }) => host)))];
  // Reported in the order the entries stand in the files Terraform reads.
  const files = [...new Set(list.flatMap((view) => view.files.map(({ file }) => file)))];
  const position = (entry: CredentialsEntry) =>
    files.indexOf(entry.file) * 1e9 +
    (entry.place.syntax === "json" ? entry.place.index : entry.place.start);
  const order = (decision: Move | Refused) =>
    position("at" in decision ? decision.at : decision.from);
  const decisions: Array<Move | Refused> = [
    ...hosts.flatMap((host): Array<Move | Refused> => {
      const seen = list.flatMap((view) => {
        const entry = hostIn(view, host);
        return entry?.files === undefined ? [] : [{ view, entry, files: entry.files }];
      });
      const [first] = seen;
      if (first === undefined) return []; // Only a variable names it: nothing in a file.
      const entries = unique(seen.flatMap(({ entry }) => entry.entries));
      const refuse = (entry: CredentialsEntry, reason: string): Refused[] => [
        { host: entry.label, file: entry.file, reason: `${reason} (${whereIs(entry)})`, at: entry },
      ];
      const gives = seen.map(({ files }) => files);
      const why = refusal(first.files);
      if (why !== undefined) return refuse(why.entry, why.reason);
      const token = (first.files as Extract<FilesGive, { kind: "token" }>).token;
      const other = gives.find((give) => give.kind !== "token" || give.token !== token);
      if (other !== undefined) {
        const at = refusal(other)?.entry ?? (other as { from: CredentialsEntry }).from;
        return refuse(
          at,
          "Terraform and OpenTofu send different credentials for it; make them one",
        );
      }
      const misspelled = entries.find((entry) => entry.misspelled.length > 0);
      if (misspelled !== undefined) return refuse(misspelled, misspelledReason(misspelled));
      const unreadable = entries.find((entry) => entry.attributes === undefined);
      if (unreadable !== undefined) return refuse(unreadable, BY_HAND);
      const uneditable = entries.find((entry) => !entry.editable);
      if (uneditable !== undefined) return refuse(uneditable, NOT_EDITED);
      const differing = entries.find((entry) => {
        const value = tokenOf(entry);
        return value !== undefined && value !== token;
      });
      if (differing !== undefined && !force) {
        return refuse(
          differing,
          `another copy holds a different token, which Terraform does not send now; moving the one it sends would drop it: delete the copy you do not want, or rerun with --force to drop it`,
        );
      }
      const give = first.files as Extract<FilesGive, { kind: "token" }>;
      if (give.object === undefined) return refuse(give.from, BY_HAND);
      return [{ host, object: give.object, token, from: give.from, entries }];
    }),
    ...invalid,
  ];
  return decisions.sort((a, b) => order(a) - order(b));
}

/** Why what the files give cannot be moved, and the entry to name; `undefined` for a token. */
function refusal(give: FilesGive): { entry: CredentialsEntry; reason: string } | undefined {
  switch (give.kind) {
    case "token":
      return undefined;
    case "unknown":
      return { entry: give.from, reason: BY_HAND };
    case "ambiguous": {
      const [first, ...others] = give.labels;
      if (first === undefined) throw new Error("an ambiguous host without labels");
      return {
        entry: first,
        reason: `it is spelled ${[first, ...others].map((entry) => `"${entry.label}" (${whereIs(entry)})`).join(" and ")} with different credentials, and Terraform picks one of them at random; keep one`,
      };
    }
    case "no-token":
      return {
        entry: give.from,
        reason:
          give.from.misspelled.length > 0
            ? misspelledReason(give.from)
            : "its credentials hold no token: Terraform sends none for it and does not ask the helper; nothing to move, remove the entry by hand to use the helper",
      };
  }
}

function misspelledReason(entry: CredentialsEntry): string {
  return `it spells the attribute ${entry.misspelled.map((name) => `"${name}"`).join(" and ")}: Terraform reads only "token" and ignores it, so import leaves it alone; fix the spelling or remove it by hand`;
}

function tokenOf(entry: CredentialsEntry): string | undefined {
  return entry.attributes?.find(([name]) => name === "token")?.[1];
}

function unique(entries: readonly CredentialsEntry[]): CredentialsEntry[] {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    const at = entry.place.syntax === "json" ? entry.place.index : entry.place.start;
    const key = `${entry.file}\0${at}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Stores each move's object and reads it back, and reports every host in order; the moves
 * that are in the store now. Until
 * one call has succeeded, a failing store is unreachable as a whole: then nothing has
 * moved, and the import fails with every file untouched.
 */
async function storeAll(
  store: CredentialStore,
  decisions: ReadonlyArray<Move | Refused>,
  options: ImportOptions,
  hosts: ImportedHost[],
): Promise<Move[]> {
  const { force, keep, dryRun } = options;
  let reached = false;
  const done: Move[] = [];
  for (const move of decisions) {
    if ("reason" in move) {
      hosts.push({ file: move.file, host: move.host, outcome: "failed", reason: move.reason });
      continue;
    }
    const report = (outcome: ImportedHost["outcome"], reason?: string) =>
      hosts.push({
        file: move.from.file,
        host: move.from.label,
        outcome,
        ...(reason === undefined ? {} : { reason }),
      });
    let stored: string;
    try {
      stored = parseStorableObject(move.object, `the credentials for ${move.host}`);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      report("failed", error.message);
      continue;
    }
    let replacing = false;
    try {
      const existing = await store.get(move.host);
      if (existing === stored) reached = true;
      if (existing !== undefined && existing !== stored) {
        if (force !== true) {
          report("kept", KEPT_REASON);
          continue;
        }
        replacing = true;
      }
      if (dryRun !== true && existing !== stored) {
        await store.store(move.host, stored);
        reached = true;
        if ((await store.get(move.host)) !== stored) {
          throw new CliError("the store returned something else when read back");
        }
      }
    } catch (error) {
      if (!reached) throw error;
      if (!(error instanceof CliError)) throw error;
      report("failed", error.message);
      continue;
    }
    done.push(move);
    report(replacing ? "replaced" : keep === true ? "copied" : "moved");
  }
  return done;
}

function byFile(moves: readonly Move[]): Map<string, CredentialsEntry[]> {
  const files = new Map<string, CredentialsEntry[]>();
  for (const move of moves) {
    for (const entry of move.entries)
      files.set(entry.file, [...(files.get(entry.file) ?? []), entry]);
  }
  return files;
}

/**
 * Takes the moved hosts' entries out of `file`. The file is read again just before it is
 * replaced: a `terraform login` that wrote to it meanwhile must not be undone, so only
 * entries of a moved host that hold its token, or none, leave it (with force, any). A
 * symlinked file (a dotfile manager's) is edited where it lives; one with more than one
 * hard link is rewritten in place, so that the other links lose the tokens too.
 */
function removeEntries(
  file: string,
  planned: readonly CredentialsEntry[],
  moves: readonly Move[],
  { dryRun = false, force = false }: ImportOptions,
): { change: ImportedFile["change"]; empty: boolean } | undefined {
  const isLink = lstatSync(file).isSymbolicLink();
  const target = isLink ? realpathSync(file) : file;
  const json = planned.some((entry) => entry.place.syntax === "json");
  const tokens = new Map(moves.map((move) => [move.host as string, move.token]));
  // By label as the view read it: an entry a login added meanwhile under another label stays.
  // With force, a copy with another token goes too, when it is still the one planned.
  const goes = (label: string, token: string | undefined, misspelled: boolean): boolean => {
    const entry = planned.find((candidate) => candidate.label === label);
    const moved = entry?.host === undefined ? undefined : tokens.get(entry.host);
    if (moved === undefined || misspelled) return false;
    if (token === undefined || token === moved) return true;
    return (
      force &&
      planned.some((candidate) => candidate.label === label && tokenOf(candidate) === token)
    );
  };
  for (let attempt = 0; ; attempt++) {
    const text = readTextIfExists(target);
    if (text === undefined) return undefined; // removed meanwhile: nothing of it to keep
    let rest: string | undefined;
    let empty: boolean;
    if (json) {
      const parsed = parseCredentialsFile(text, file);
      const removed = new Set<number>();
      for (const [index, { name, object }] of parsed.hosts.entries()) {
        const token = (JSON.parse(object) as { token?: unknown }).token;
        if (goes(name, typeof token === "string" ? token : undefined, false)) removed.add(index);
      }
      if (removed.size === 0) return undefined;
      rest = credentialsFileWithout(parsed, removed);
      empty = removed.size === parsed.hosts.length;
    } else {
      const blocks = findCredentialsBlockItems(text);
      const removed = blocks.filter(({ host, attributes }) => {
        const token = attributes?.find(([name]) => name === "token")?.[1];
        const misspelled =
          attributes === undefined ||
          attributes.some(([name]) => name !== "token" && name.toLowerCase() === "token");
        return goes(host, token, misspelled);
      });
      if (removed.length === 0) return undefined;
      rest = removeCredentialsBlocks(text, removed);
      empty = removed.length === blocks.length;
    }
    const links = statSync(target).nlink;
    // A link's target or a hard-linked file is emptied, not removed: the other names stay.
    const content = rest ?? (isLink || links > 1 ? EMPTY_FILE : undefined);
    const change = content === undefined ? "removed" : "rewritten";
    if (dryRun) return { change, empty };
    if (links > 1 && content !== undefined) {
      if (readTextIfExists(target) !== text && attempt < 5) continue;
      rewriteInPlace(target, content);
      return { change, empty };
    }
    const staged =
      content === undefined ? undefined : stageFile(target, content, modeIfExists(target) ?? 0o600);
    // The last look before the switch: if it changed while the new text was written, start over.
    if (readTextIfExists(target) !== text && attempt < 5) {
      staged?.discard();
      continue;
    }
    if (staged === undefined) removeFile(target);
    else staged.commit();
    return { change, empty };
  }
}

/** The moved hosts that were in the credentials.tfrc.json files emptied. */
function hostsOnlyIn(emptied: readonly string[], moves: readonly Move[]): string[] {
  return moves
    .filter((move) => move.entries.some((entry) => emptied.includes(entry.file)))
    .map(({ host }) => host);
}
