import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  statSync,
} from "node:fs";
import path from "node:path";
import { CliError } from "../errors.ts";
import { optionsOfArgs, storeOfArgs } from "../system/options.ts";
import {
  addCredentialsHelper,
  findCredentialsHelpers,
  removeCredentialsHelper,
  renderCredentialsHelper,
} from "../terraform/cli-config.ts";
import { terraformLocations, type TerraformLocations } from "../terraform/locations.ts";
import { readConfigFile } from "../terraform/config-dir.ts";
import { otherHelperFiles, readConfigDirFiles } from "./config-dir-files.ts";
import type { Machine } from "../system/io.ts";
import {
  modeIfExists,
  readTextIfExists,
  removeFile,
  stageFile,
  stageSymlink,
} from "../system/files.ts";
import { linksTo, planCommandLink, type CommandLink } from "./command-link.ts";
import { exposuresOf, type Exposure } from "./writable-by-others.ts";

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

export interface InstallPlan {
  readonly helper: {
    readonly source: string;
    readonly target: string;
    readonly change: "installed" | "updated" | "unchanged";
  };
  readonly block: string;
  readonly configs: readonly ConfigChange[];
  /** How people get the helper at hand by name (see command-link.ts). */
  readonly link: CommandLink;
  /** What install leaves undone and why, with what to do; absent when there is nothing. */
  readonly notes?: readonly string[];
  /**
   * Directories where the helper or its link goes through which another user could replace
   * it (see writableByOthers); absent when there is none.
   */
  readonly exposures?: readonly Exposure[];
}

/**
 * Whether `text` has one credentials_helper block, ours, whose args select the same store as
 * `args` (the same backend and service, the defaults filling in what either leaves out).
 */
function selectsSameStore(text: string, args: readonly string[]): boolean {
  let helpers;
  try {
    helpers = findCredentialsHelpers(text);
  } catch {
    return false;
  }
  const [ours, ...others] = helpers;
  if (ours?.name !== HELPER_BLOCK_NAME || others.length > 0 || ours.argsUnparsed) return false;
  const existing = ours.args ?? [];
  // A --timeout of the block's is kept only by --force.
  const timeout = (words: readonly string[]) => optionsOfArgs(words)?.timeout;
  return (
    storeOfArgs(existing) !== undefined &&
    storeOfArgs(existing) === storeOfArgs(args) &&
    timeout(existing) === timeout(args)
  );
}

export function locationsOf(machine: Machine): TerraformLocations {
  return terraformLocations({ ...machine, exists: existsSync });
}

/**
 * What `install` would do: copy this executable into Terraform's plugin directory and add
 * `credentials_helper "keychain" { args = helperArgs }` to every CLI config file Terraform and
 * OpenTofu read. A different credentials_helper already there is refused unless `force`.
 */
export function planInstall(
  machine: Machine,
  helperArgs: readonly string[],
  force: boolean,
): InstallPlan {
  if (!machine.isSea) {
    throw new CliError("install copies the built executable, and this is the sources", undefined, {
      fix: { situation: "install-from-source" },
    });
  }
  refuseRootInOthersHome(machine);
  const locations = locationsOf(machine);
  refuseSecondHelper(locations);
  const notes = openTofuTakeover(machine, locations)
    ? [
        `Terraform not set up: creating ${locations.terraformConfigFile} would make OpenTofu stop reading ${locations.tofuConfigFile}; for Terraform set TF_CLI_CONFIG_FILE=${locations.tofuConfigFile}`,
      ]
    : [];
  const target = locations.helperInstallPath;
  const source = machine.execPath;
  let change: InstallPlan["helper"]["change"] = "installed";
  if (existsSync(target)) change = sameContent(source, target) ? "unchanged" : "updated";

  const configs = configFiles(locations, notes.length > 0).map(({ file, tools }): ConfigChange => {
    const link = linkTargetOf(file);
    const before = readTextIfExists(link ?? file) ?? "";
    // Our own block that names the same store (as one written before blocks named both
    // options: `{}`, or `--backend pass`) is brought up to these args without --force.
    const sameStore = force || selectsSameStore(before, helperArgs);
    const result = addCredentialsHelper(before, HELPER_BLOCK_NAME, helperArgs, {
      force: sameStore,
      file,
    });
    const linked = link === undefined ? {} : { linkTarget: link };
    return result.change === "unchanged"
      ? { file, tools, change: "unchanged", ...linked }
      : { file, tools, change: result.change, text: result.text, ...linked };
  });
  const link = planCommandLink(machine, target);
  const exposures = exposuresOf(
    [path.dirname(target), ...(link.kind === "link" ? [path.dirname(link.path)] : [])],
    machine.uid,
  );
  return {
    helper: { source, target, change },
    block: renderCredentialsHelper(HELPER_BLOCK_NAME, helperArgs),
    configs,
    link,
    ...(notes.length > 0 ? { notes } : {}),
    ...(exposures.length > 0 ? { exposures } : {}),
  };
}

/**
 * A credentials_helper of another name in a file Terraform merges from its config directory
 * (~/.terraform.d/*.tfrc): with ours added, Terraform would refuse the whole CLI config and
 * run no helper. That file is the user's to change, with or without --force.
 */
function refuseSecondHelper(locations: TerraformLocations): void {
  const [other] = otherHelperFiles(readConfigDirFiles(locations), HELPER_BLOCK_NAME);
  if (other === undefined) return;
  throw new CliError(
    `${other.file} sets credentials_helper "${other.name}", and Terraform reads that file too: with a second helper it refuses its CLI config and runs none; remove that block from ${other.file} and install again`,
  );
}

/**
 * A part of a plan that has been carried out, as `applyInstall` and `applyUninstall` report
 * it: a config (the plan's own object), the executable, or a link (by its path).
 */
export type AppliedStep = ConfigChange | "helper" | { readonly link: string };

/**
 * Carries out a plan: the config files' permissions kept (new ones 0600). Every file is
 * written and flushed beside its target before any target changes, so a full disk or a
 * failed write leaves everything as it was, and the directories made for it are removed
 * again. The configs go in place first: they are what a read-only or immutable file would
 * refuse, and then the executable is not left behind. `applied` hears of each step once it
 * is in place, so that nothing is reported before it happened.
 */
export function applyInstall(
  plan: InstallPlan,
  applied: (step: AppliedStep) => void = () => undefined,
): void {
  const staged: Change[] = [];
  const made: string[] = [];
  try {
    staged.push(...stageConfigChanges(plan.configs, made));
    if (plan.helper.change !== "unchanged") {
      makeDirectory(path.dirname(plan.helper.target), 0o755, made);
      // A new file renamed over the old one: replacing a running binary in place fails.
      const executable = readFileSync(plan.helper.source);
      const copy = stageFile(plan.helper.target, executable, 0o755);
      staged.push({
        step: "helper",
        commit() {
          copy.commit();
          // Read back once in place: the copy Terraform will run is the one checked.
          if (!readFileSync(copy.target).equals(executable)) {
            throw new CliError(
              `the copy at ${copy.target} differs from ${plan.helper.source} after writing it; run install again`,
            );
          }
        },
        discard: () => copy.discard(),
      });
    }
    // Last: the link leads to the executable, so it goes in once that is in place.
    if (plan.link.kind === "link" && plan.link.change === "added") {
      makeDirectory(path.dirname(plan.link.path), 0o755, made);
      const link = stageSymlink(plan.link.path, plan.helper.target);
      staged.push({
        step: { link: plan.link.path },
        commit: () => link.commit(),
        discard: () => link.discard(),
      });
    }
  } catch (error) {
    for (const change of staged) change.discard();
    removeEmptyDirectories(made);
    throw error;
  }
  try {
    commitAll(staged, applied);
  } catch (error) {
    removeEmptyDirectories(made);
    throw error;
  }
}

/** A change written aside, to be put in place or dropped, and what it carries out. */
interface Change {
  readonly step?: AppliedStep;
  commit(): void;
  discard(): void;
}

/**
 * Puts each change in place, in order, and reports each step once it is in place; after a
 * failure, the rest are dropped.
 */
function commitAll(changes: readonly Change[], applied: (step: AppliedStep) => void): void {
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
function makeDirectory(dir: string, mode: number, made: string[]): void {
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
function removeEmptyDirectories(made: readonly string[]): void {
  for (const dir of [...made].sort((a, b) => b.length - a.length)) {
    try {
      rmdirSync(dir);
    } catch {
      // Not empty (something went in after all), or gone: left as it is.
    }
  }
}

export interface UninstallPlan {
  readonly helper: {
    readonly target: string;
    readonly present: boolean;
    /** Other CLI configs that still run the helper: the executable stays for them. */
    readonly keptFor?: readonly string[];
  };
  /** The links install made to the executable (~/.local/bin/...): they go with it. */
  readonly links: readonly string[];
  readonly configs: readonly ConfigChange[];
}

/** What `uninstall` would do: remove the plugin file and our block, keeping the rest of each file. */
export function planUninstall(machine: Machine, force = false): UninstallPlan {
  refuseRootInOthersHome(machine);
  const locations = locationsOf(machine);
  const configs = configFiles(locations).map(({ file, tools }): ConfigChange => {
    const link = linkTargetOf(file);
    const linked = link === undefined ? {} : { linkTarget: link };
    const before = readTextIfExists(link ?? file);
    if (before === undefined) return { file, tools, change: "absent", ...linked };
    const result = removeCredentialsHelper(before, HELPER_BLOCK_NAME);
    return result.removed
      ? { file, tools, change: "removed", text: result.text, ...linked }
      : { file, tools, change: "unchanged", ...linked };
  });
  const target = locations.helperInstallPath;
  const present = existsSync(target);
  const edited = new Set(configs.map((config) => config.file));
  const keptFor =
    present && !force
      ? otherConfigFiles(machine).filter((file) => !edited.has(file) && namesOurHelper(file))
      : [];
  return {
    helper: { target, present, ...(keptFor.length > 0 ? { keptFor } : {}) },
    configs,
    links: linksTo(machine, target),
  };
}

/**
 * Carries out an uninstall plan; `applied` hears of each step once it is done (see
 * `applyInstall`). A file that cannot be removed (an immutable executable) is a CliError
 * naming it, and the steps after it are not taken.
 */
export function applyUninstall(
  plan: UninstallPlan,
  applied: (step: AppliedStep) => void = () => undefined,
): void {
  const changes = stageConfigChanges(plan.configs, []);
  // The blocks go before the executable, so that no config is left naming a missing helper.
  if (plan.helper.keptFor === undefined) {
    // The links first: none is left leading nowhere if removing the executable fails.
    for (const link of plan.links) changes.push(removal(link, { link }));
    if (plan.helper.present) changes.push(removal(plan.helper.target, "helper"));
  }
  commitAll(changes, applied);
}

/** The removal of `file` as a change. */
function removal(file: string, step: AppliedStep): Change {
  return { step, commit: () => removeFile(file), discard: () => undefined };
}

/**
 * The CLI configs this machine's tools may read besides the chosen one: the default files,
 * and the profiles the README suggests (~/.terraformrc-work, ~/.tofurc-personal, ...).
 */
function otherConfigFiles(machine: Machine): string[] {
  const { TF_CLI_CONFIG_FILE: _file, TERRAFORM_CONFIG: _legacy, ...env } = machine.env;
  const defaults = locationsOf({ ...machine, env });
  const xdg = env.XDG_CONFIG_HOME;
  let profiles: string[] = [];
  try {
    profiles = readdirSync(machine.homedir)
      .filter((name) => /^\.(terraformrc|tofurc)/.test(name))
      .map((name) => path.join(machine.homedir, name));
  } catch {
    // No readable HOME: only the default files are looked at.
  }
  return [
    ...new Set([
      defaults.terraformConfigFile,
      defaults.tofuConfigFile,
      ...(xdg ? [path.join(xdg, "opentofu", "tofurc")] : []),
      ...profiles.sort(),
      ...readConfigDirFiles(defaults).map(({ file }) => file),
    ]),
  ];
}

/** Whether a CLI config has our credentials_helper block; unreadable text counts as yes. */
function namesOurHelper(file: string): boolean {
  let text: string | undefined;
  try {
    text = readTextIfExists(file);
  } catch {
    return false; // A directory or an unreadable file is no CLI config.
  }
  if (text === undefined) return false;
  try {
    return readConfigFile(file, text).helpers.includes(HELPER_BLOCK_NAME);
  } catch {
    return /credentials_helper\s+"?keychain"?/.test(text);
  }
}

/**
 * Each config's new text written aside (or its removal planned), nothing yet in place; the
 * directories made for them are added to `made`.
 */
function stageConfigChanges(configs: readonly ConfigChange[], made: string[]): Change[] {
  const staged: Change[] = [];
  try {
    for (const config of configs) {
      if (config.text === undefined) continue;
      // A file that held only our block (install created it) goes: an empty ~/.terraformrc
      // would still keep OpenTofu from its own tofurc. A symlinked one belongs to a dotfile
      // manager and is only emptied.
      if (config.change === "removed" && config.text === "" && config.linkTarget === undefined) {
        staged.push(removal(config.file, config));
        continue;
      }
      const file = config.linkTarget ?? config.file;
      makeDirectory(path.dirname(file), 0o700, made);
      // A CLI config may hold tokens in credentials blocks: a new one is private.
      const text = stageFile(file, config.text, modeIfExists(file) ?? 0o600);
      staged.push({ step: config, commit: () => text.commit(), discard: () => text.discard() });
    }
  } catch (error) {
    for (const change of staged) change.discard();
    throw error;
  }
  return staged;
}

/**
 * The file a symlink at `file` finally leads to, followed link by link so that a dangling
 * one gives the path it names (which is then created), or `undefined` when `file` is not
 * a symlink. Relative links are read from the directory of the link.
 */
function linkTargetOf(file: string): string | undefined {
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
 * True when OpenTofu reads a file of its own (its XDG tofurc) that it would stop reading
 * once Terraform's file exists: OpenTofu takes $XDG_CONFIG_HOME/opentofu/tofurc only while
 * neither ~/.tofurc nor ~/.terraformrc exists (internal/command/cliconfig/config_unix.go).
 */
export function openTofuTakeover(machine: Machine, locations: TerraformLocations): boolean {
  const terraformFile = locations.terraformConfigFile;
  if (locations.tofuConfigFile === terraformFile || existsSync(terraformFile)) return false;
  if (!existsSync(locations.tofuConfigFile)) return false;
  const after = terraformLocations({
    ...machine,
    exists: (file) => file === terraformFile || existsSync(file),
  });
  return after.tofuConfigFile !== locations.tofuConfigFile;
}

/**
 * The CLI config files to edit, each once, with the tools that read it. With
 * `openTofuOnly`, Terraform's file is left out (see openTofuTakeover).
 */
function configFiles(
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

/** Sizes first (cheap, and different after any rebuild that matters), then the bytes. */
function sameContent(a: string, b: string): boolean {
  return statSync(a).size === statSync(b).size && readFileSync(a).equals(readFileSync(b));
}
