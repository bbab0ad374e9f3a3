import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
} from "node:fs";
import path from "node:path";
import { CliError } from "../errors.ts";
import {
  addCredentialsHelper,
  removeCredentialsHelper,
  renderCredentialsHelper,
} from "../terraform/cli-config.ts";
import { terraformLocations, type TerraformLocations } from "../terraform/locations.ts";
import type { Io } from "../cli/io.ts";
import { modeIfExists, readTextIfExists, writeFileAtomically } from "../files.ts";

/** The name in `credentials_helper "keychain" {}`; Terraform adds the `terraform-credentials-` prefix. */
export const HELPER_BLOCK_NAME = "keychain";

export type Machine = Pick<Io, "env" | "platform" | "arch" | "homedir" | "execPath" | "isSea">;

export interface ConfigChange {
  readonly file: string;
  /** Which tools read this file. */
  readonly tools: readonly ("Terraform" | "OpenTofu")[];
  readonly change: "added" | "replaced" | "unchanged" | "removed";
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
    throw new CliError(
      'install copies the built executable: run "npm run build", then "dist/terraform-credentials-keychain install"',
    );
  }
  const locations = locationsOf(machine);
  const target = locations.helperInstallPath;
  const source = machine.execPath;
  let change: InstallPlan["helper"]["change"] = "installed";
  if (existsSync(target)) change = sameContent(source, target) ? "unchanged" : "updated";

  const configs = configFiles(locations).map(({ file, tools }): ConfigChange => {
    const link = linkTargetOf(file);
    const before = readTextIfExists(link ?? file) ?? "";
    const result = addCredentialsHelper(before, HELPER_BLOCK_NAME, helperArgs, { force });
    const linked = link === undefined ? {} : { linkTarget: link };
    return result.change === "unchanged"
      ? { file, tools, change: "unchanged", ...linked }
      : { file, tools, change: result.change, text: result.text, ...linked };
  });
  return {
    helper: { source, target, change },
    block: renderCredentialsHelper(HELPER_BLOCK_NAME, helperArgs),
    configs,
  };
}

/** Carries out a plan: atomic writes, the config files' permissions kept (new ones 0600). */
export function applyInstall(plan: InstallPlan): void {
  if (plan.helper.change !== "unchanged") {
    mkdirSync(path.dirname(plan.helper.target), { recursive: true, mode: 0o755 });
    // A new file renamed over the old one: replacing a running binary in place fails.
    writeFileAtomically(plan.helper.target, readFileSync(plan.helper.source), 0o755);
  }
  applyConfigChanges(plan.configs);
}

export interface UninstallPlan {
  readonly helper: { readonly target: string; readonly present: boolean };
  readonly configs: readonly ConfigChange[];
}

/** What `uninstall` would do: remove the plugin file and our block, keeping the rest of each file. */
export function planUninstall(machine: Machine): UninstallPlan {
  const locations = locationsOf(machine);
  const configs = configFiles(locations).map(({ file, tools }): ConfigChange => {
    const link = linkTargetOf(file);
    const linked = link === undefined ? {} : { linkTarget: link };
    const before = readTextIfExists(link ?? file);
    if (before === undefined) return { file, tools, change: "unchanged", ...linked };
    const result = removeCredentialsHelper(before, HELPER_BLOCK_NAME);
    return result.removed
      ? { file, tools, change: "removed", text: result.text, ...linked }
      : { file, tools, change: "unchanged", ...linked };
  });
  const target = locations.helperInstallPath;
  return { helper: { target, present: existsSync(target) }, configs };
}

export function applyUninstall(plan: UninstallPlan): void {
  if (plan.helper.present) rmSync(plan.helper.target, { force: true });
  applyConfigChanges(plan.configs);
}

function applyConfigChanges(configs: readonly ConfigChange[]): void {
  for (const config of configs) {
    if (config.text === undefined) continue;
    const file = config.linkTarget ?? config.file;
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // A CLI config may hold tokens in credentials blocks: a new one is private.
    writeFileAtomically(file, config.text, modeIfExists(file) ?? 0o600);
  }
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

/** The CLI config files to edit, each once, with the tools that read it. */
function configFiles(
  locations: TerraformLocations,
): Array<{ file: string; tools: ConfigChange["tools"] }> {
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
