import { existsSync, lstatSync, mkdirSync, readlinkSync, rmdirSync, statSync } from "node:fs";
import path from "node:path";
import { CliError } from "../errors.ts";
import { terraformLocations, type TerraformLocations } from "../terraform/locations.ts";
import type { Machine } from "../system/io.ts";
import { removeFile, stageReplacement } from "../system/files.ts";

// The CLI config files install and uninstall edit, and the steps both take: each written
// aside first, then put in place in order, each reported once it is.

/** The name in `credentials_helper "keychain" {}`; Terraform adds the `terraform-credentials-` prefix. */
export const HELPER_BLOCK_NAME = "keychain";

/**
 * Refuses to write into another user's home as root (`sudo -E`, or sudo keeping HOME): the
 * config, plugin directory and files made there would belong to root, and the user's own
 * Terraform and helper could then not use or replace them.
 */
export function refuseRootInOthersHome(machine: Pick<Machine, "uid" | "homedir">): void {
  if (machine.uid !== 0) return;
  let owner;
  try {
    owner = statSync(machine.homedir).uid;
  } catch {
    return; // No home to protect.
  }
  if (owner === 0) return;
  throw new CliError(
    `this runs as root, but HOME (${machine.homedir}) belongs to user id ${owner}: what it wrote there would belong to root, and that user's Terraform could not use it; run it as that user, without sudo`,
  );
}

export interface ConfigChange {
  readonly file: string;
  /** Which tools read this file. */
  readonly tools: readonly ("Terraform" | "OpenTofu")[];
  /** absent: uninstall found no such file. */
  readonly change: "added" | "replaced" | "unchanged" | "removed" | "absent";
  /** The file's new text; absent when unchanged. */
  readonly text?: string;
  /**
   * When `file` is a symlink (a dotfile manager's: stow, chezmoi, home-manager), the file it
   * leads to, which is read and edited instead: replacing the link would cut the dotfile off.
   */
  readonly linkTarget?: string;
}

export function locationsOf(machine: Machine): TerraformLocations {
  return terraformLocations({ ...machine, exists: existsSync });
}

/**
 * A part of a plan that has been carried out, as `applyInstall` and `applyUninstall` report
 * it: a config (the plan's own object), the executable, or a link (by its path).
 */
export type AppliedStep = ConfigChange | "helper" | { readonly link: string };

/** A change written aside, to be put in place or dropped, and what it carries out. */
export interface Change {
  readonly step?: AppliedStep;
  commit(): void;
  discard(): void;
}

/**
 * Puts each change in place, in order, and reports each step once it is in place; after a
 * failure, the rest are dropped.
 */
export function commitAll(changes: readonly Change[], applied: (step: AppliedStep) => void): void {
  for (const [index, change] of changes.entries()) {
    try {
      change.commit();
    } catch (error) {
      for (const rest of changes.slice(index + 1)) rest.discard();
      throw error;
    }
    if (change.step !== undefined) applied(change.step);
  }
}

/**
 * Makes `dir` and whichever of its parents are missing, and adds those it made to `made`,
 * deepest first, for `removeEmptyDirectories` to take away if what they were made for fails.
 */
export function makeDirectory(dir: string, mode: number, made: string[]): void {
  const first = mkdirSync(dir, { recursive: true, mode });
  if (first === undefined) return;
  const chain = [];
  for (let current = dir; ; current = path.dirname(current)) {
    chain.push(current);
    if (current === first || current === path.dirname(current)) break;
  }
  made.unshift(...chain);
}

/** Removes the directories in `made` that are still empty, deepest first. */
export function removeEmptyDirectories(made: readonly string[]): void {
  for (const dir of [...made].sort((a, b) => b.length - a.length)) {
    try {
      rmdirSync(dir);
    } catch {
      // Not empty (something went in after all), or gone: left as it is.
    }
  }
}

/** The removal of `file` as a change. */
export function removal(file: string, step: AppliedStep): Change {
  return { step, commit: () => removeFile(file), discard: () => undefined };
}

/**
 * Each config's new text written aside (or its removal planned), nothing yet in place; the
 * directories made for them are added to `made`.
 */
export function stageConfigChanges(configs: readonly ConfigChange[], made: string[]): Change[] {
  const staged: Change[] = [];
  try {
    for (const config of configs) {
      if (config.text === undefined) continue;
      // A file that held only our block (install created it) goes: an empty ~/.terraformrc
      // would still keep OpenTofu from its own tofurc. A symlinked one belongs to a dotfile
      // manager and is only emptied, as is a hard-linked one (the other names stay).
      if (
        config.change === "removed" &&
        config.text === "" &&
        config.linkTarget === undefined &&
        !hasOtherLinks(config.file)
      ) {
        staged.push(removal(config.file, config));
        continue;
      }
      const file = config.linkTarget ?? config.file;
      makeDirectory(path.dirname(file), 0o700, made);
      // A CLI config may hold tokens in credentials blocks: a new one is private.
      const text = stageReplacement(file, config.text, 0o600);
      staged.push({ step: config, commit: () => text.commit(), discard: () => text.discard() });
    }
  } catch (error) {
    for (const change of staged) change.discard();
    throw error;
  }
  return staged;
}

function hasOtherLinks(file: string): boolean {
  try {
    return statSync(file).nlink > 1;
  } catch {
    return false;
  }
}

/**
 * The file a symlink at `file` finally leads to, followed link by link so that a dangling
 * one gives the path it names (which is then created), or `undefined` when `file` is not
 * a symlink. Relative links are read from the directory of the link.
 */
export function linkTargetOf(file: string): string | undefined {
  let current = file;
  for (let hops = 0; hops < 40; hops++) {
    let isLink;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") break;
      throw error;
    }
    if (!isLink) break;
    current = path.resolve(path.dirname(current), readlinkSync(current));
  }
  if (current === file) return undefined;
  if (lstatSafe(current)?.isSymbolicLink() === true) {
    throw new CliError(
      `${file} is a chain of more than 40 symlinks (a loop?); fix it and try again`,
    );
  }
  return current;
}

function lstatSafe(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

/**
 * The CLI config files to edit, each once, with the tools that read it. With
 * `openTofuOnly`, Terraform's file is left out (see openTofuTakeover).
 */
export function configFiles(
  locations: TerraformLocations,
  openTofuOnly = false,
): Array<{ file: string; tools: ConfigChange["tools"] }> {
  if (openTofuOnly) return [{ file: locations.tofuConfigFile, tools: ["OpenTofu"] }];
  // OpenTofu reads ~/.terraformrc while it has no file of its own; once install has written
  // ~/.terraformrc, that is where OpenTofu's default would point.
  const tofuFile = locations.tofuConfigFile;
  if (tofuFile === locations.terraformConfigFile)
    return [{ file: tofuFile, tools: ["Terraform", "OpenTofu"] }];
  if (!existsSync(tofuFile))
    return [{ file: locations.terraformConfigFile, tools: ["Terraform", "OpenTofu"] }];
  return [
    { file: locations.terraformConfigFile, tools: ["Terraform"] },
    { file: tofuFile, tools: ["OpenTofu"] },
  ];
}
