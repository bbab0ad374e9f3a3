import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import type { Hostname } from "../protocol/hostname.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import { readCliConfigFile } from "../terraform/view.ts";
import { mayNameHelper, removeCredentialsHelper } from "../terraform/cli-config.ts";
import type { Machine } from "../system/io.ts";
import type { GlobalOptions } from "./options.ts";
import { readTextIfExists } from "../system/files.ts";
import { oneLine } from "../system/quote.ts";
import { viewsOf } from "./read-view.ts";
import { linksTo } from "./command-link.ts";
import { storeFor } from "../stores/registry.ts";
import type { DeleteCommand } from "../stores/store-description.ts";
import {
  commitAll,
  configFiles,
  HELPER_BLOCK_NAME,
  linkTargetOf,
  locationsOf,
  refuseRootInOthersHome,
  removal,
  stageConfigChanges,
  type AppliedStep,
  type ConfigChange,
} from "./cli-config-edits.ts";

/** What `uninstall` did, for cli/ to report. */
export interface UninstallResult {
  readonly plan: UninstallPlan;
  readonly dryRun: boolean;
  /** The steps carried out, in the plan's order: none on a dry run. */
  readonly applied: readonly AppliedStep[];
  /** What stopped it part way: the steps in `applied` are in place, no other is. */
  readonly failure?: Error;
  /** The store the installed block used, whose tokens stay, or go with `--forget`. */
  readonly options: GlobalOptions;
  /**
   * The hosts with tokens in that store, read before anything went; absent when the store
   * could not be reached soon, and `unreachable` says why.
   */
  readonly hosts?: readonly Hostname[];
  readonly unreachable?: string;
  /** With `--forget`, the hosts whose tokens were deleted, or would be on a dry run. */
  readonly forgotten?: readonly Hostname[];
  /**
   * The commands of the store's own tools that delete the tokens that stay (each as its
   * words), with the variable they need: they still run after the last uninstall, when the
   * helper's executable is gone. Absent when no tool of the store can.
   */
  readonly deleteCommands?: readonly DeleteCommand[];
}

/**
 * `uninstall`: plans it (see planUninstall), reads which hosts have tokens in the store the
 * block used, and unless `dryRun` carries the plan out and, with `forget`, deletes those
 * tokens. A store that cannot be reached within 5 s leaves the tokens unknown, not the
 * uninstall undone.
 */
export async function uninstall(
  machine: Machine,
  options: GlobalOptions,
  openStore: (options: GlobalOptions) => CredentialStore | Promise<CredentialStore>,
  flags: { readonly force: boolean; readonly dryRun: boolean; readonly forget: boolean },
): Promise<UninstallResult> {
  const plan = planUninstall(machine, flags.force);
  // The hosts still stored, read before anything goes.
  let store: CredentialStore | undefined;
  let stored: Pick<UninstallResult, "hosts" | "unreachable">;
  try {
    store = await openStore({ ...options, timeout: Math.min(options.timeout ?? 5, 5) });
    stored = { hosts: await store.list() };
  } catch (error) {
    stored = { unreachable: oneLine(error instanceof Error ? error.message : String(error), 300) };
  }
  const { hosts } = stored;
  const result = { plan, dryRun: flags.dryRun, options, ...stored };
  const forgetting = flags.forget && store !== undefined && hosts !== undefined;
  if (flags.dryRun)
    return forgetting
      ? { ...result, applied: [], forgotten: hosts }
      : { ...result, applied: [], ...deleting(machine, options, hosts) };
  const applied: AppliedStep[] = [];
  try {
    applyUninstall(plan, (step) => applied.push(step));
  } catch (failure) {
    if (!(failure instanceof Error)) throw failure;
    return { ...result, applied, failure };
  }
  if (flags.forget && store !== undefined && hosts !== undefined) {
    const forgotten: Hostname[] = [];
    try {
      for (const host of hosts) {
        await store.forget(host);
        forgotten.push(host);
      }
    } catch (failure) {
      if (!(failure instanceof Error)) throw failure;
      return { ...result, applied, forgotten, failure };
    }
    return { ...result, applied, forgotten };
  }
  return { ...result, applied, ...deleting(machine, options, hosts) };
}

/** The store's own commands that delete the tokens that stay, as UninstallResult has them. */
function deleting(
  machine: Machine,
  options: GlobalOptions,
  hosts: readonly Hostname[] | undefined,
): Pick<UninstallResult, "deleteCommands"> {
  const commands = storeFor(options.backend, machine.platform).deleteCommands(
    options.service,
    hosts,
    machine.env,
  );
  return commands === undefined ? {} : { deleteCommands: commands };
}

interface UninstallPlan {
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
  const configs = [...configFiles(locations), ...dropInsWithOurs(machine)].map(
    ({ file, tools }): ConfigChange => {
      const link = linkTargetOf(file);
      const linked = link === undefined ? {} : { linkTarget: link };
      const before = readTextIfExists(link ?? file);
      if (before === undefined) return { file, tools, change: "absent", ...linked };
      const result = removeCredentialsHelper(before, HELPER_BLOCK_NAME);
      return result.removed
        ? { file, tools, change: "removed", text: result.text, ...linked }
        : { file, tools, change: "unchanged", ...linked };
    },
  );
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
 * The drop-ins (~/.terraform.d/*.tfrc) that hold our block, with the tools that read them:
 * Terraform runs the helper from there as from ~/.terraformrc. JSON syntax is not edited.
 */
function dropInsWithOurs(machine: Machine): Array<{ file: string; tools: ConfigChange["tools"] }> {
  const found = new Map<string, ConfigChange["tools"]>();
  for (const view of Object.values(viewsOf(machine))) {
    for (const { file, role, syntax, helpers } of view.files) {
      if (role !== "drop-in" || syntax !== "native") continue;
      if (!helpers.some(({ name }) => name === HELPER_BLOCK_NAME)) continue;
      found.set(file, [...(found.get(file) ?? []), view.tool]);
    }
  }
  return [...found].map(([file, tools]) => ({ file, tools }));
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

/**
 * The CLI configs this machine's tools may read besides the chosen one: the default files,
 * and the profiles the README suggests (~/.terraformrc-work, ~/.tofurc-personal, ...).
 */
function otherConfigFiles(machine: Machine): string[] {
  const { TF_CLI_CONFIG_FILE: _file, TERRAFORM_CONFIG: _legacy, ...env } = machine.env;
  const defaults = locationsOf({ ...machine, env });
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
      ...(defaults.tofuXdgConfigFile === undefined ? [] : [defaults.tofuXdgConfigFile]),
      ...profiles.sort(),
      ...viewsOf({ ...machine, env })
        .Terraform.files.filter(({ role }) => role === "drop-in")
        .map(({ file }) => file),
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
    const read = readCliConfigFile(file, text);
    // A file Terraform drops (or panics on) may still hold our block, which uninstall removes.
    if (read.error !== undefined || read.dropped !== undefined || read.panic !== undefined) {
      return mayNameHelper(text, HELPER_BLOCK_NAME);
    }
    return read.helpers.some(({ name }) => name === HELPER_BLOCK_NAME);
  } catch {
    return mayNameHelper(text, HELPER_BLOCK_NAME);
  }
}
