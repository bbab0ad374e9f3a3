import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { CliError } from "../errors.ts";
import {
  addCredentialsHelper,
  findCredentialsHelpers,
  renderCredentialsHelper,
} from "../terraform/cli-config.ts";
import type { FixNeeded } from "../fixes.ts";
import { terraformLocations, type TerraformLocations } from "../terraform/locations.ts";
import { viewsOf } from "./read-view.ts";
import type { Machine } from "../system/io.ts";
import { readTextIfExists, stageFile, stageSymlink } from "../system/files.ts";
import { blockArgs, optionsOfArgs, storeOfArgs, type GlobalOptions } from "./options.ts";
import { PROBE_TIMEOUT_SECONDS, type StoreDescription } from "../stores/store-description.ts";
import { storeFor, storesHere } from "../stores/registry.ts";
import { deadlineIn, timeoutGiven, timeoutSeconds } from "../system/deadline.ts";
import { helperCommand, planCommandLink, type CommandLink } from "./command-link.ts";
import { commandInProfile, profileVariable } from "./command-line.ts";
import { exposuresOf, type Exposure } from "./writable-by-others.ts";
import {
  commitAll,
  configFiles,
  HELPER_BLOCK_NAME,
  linkTargetOf,
  locationsOf,
  makeDirectory,
  refuseRootInOthersHome,
  removeEmptyDirectories,
  stageConfigChanges,
  type AppliedStep,
  type Change,
  type ConfigChange,
} from "./cli-config-edits.ts";

/** What `install` did, for cli/ to report. */
export interface InstallResult {
  readonly plan: InstallPlan;
  /** The store the block selects. */
  readonly options: GlobalOptions;
  readonly dryRun: boolean;
  /** The steps carried out, in the plan's order: none on a dry run. */
  readonly applied: readonly AppliedStep[];
  /** What stopped the install part way: the steps in `applied` are in place, no other is. */
  readonly failure?: Error;
  /**
   * How the next commands run as printed, once installed: the helper by name once PATH finds
   * it, else by its path, and the profile's variable when one chose the CLI config, so that
   * "terraform login" stores into that profile.
   */
  readonly next?: {
    readonly helper: string;
    readonly profile?: { readonly name: string; readonly value: string };
  };
  /**
   * The chosen store cannot keep tokens here yet: how messages name it, why, the fix its
   * probe gives, and another store (its --backend name and title) whose probe finds it working.
   */
  readonly storeProblem?: {
    readonly title: string;
    readonly summary: string;
    readonly fix?: FixNeeded;
    readonly instead?: { readonly backend: string; readonly title: string };
  };
}

/**
 * `install`: plans it (see planInstall), and unless `dryRun` carries the plan out and probes
 * the chosen store, so that a store that cannot keep tokens here is told now rather than by
 * the first `terraform login`.
 */
export async function install(
  machine: Machine,
  options: GlobalOptions,
  flags: { readonly force: boolean; readonly dryRun: boolean },
): Promise<InstallResult> {
  // A dry run copies nothing, so it runs from the sources too: `npm run setup` asks it
  // whether install would refuse before it spends half a minute building.
  if (!flags.dryRun && !machine.isSea) {
    throw new CliError("install copies the built executable, and this is the sources", undefined, {
      fix: { situation: "install-from-source" },
    });
  }
  const plan = planInstall(machine, blockArgs(options), flags.force);
  if (flags.dryRun) return { plan, options, dryRun: true, applied: [] };
  const applied: AppliedStep[] = [];
  try {
    applyInstall(plan, (step) => applied.push(step));
  } catch (failure) {
    if (!(failure instanceof Error)) throw failure;
    return { plan, options, dryRun: false, applied, failure };
  }
  const profile = profileVariable(machine.env);
  const storeProblem = await probeChosenStore(machine, options);
  return {
    plan,
    options,
    dryRun: false,
    applied,
    next: { helper: helperCommand(machine, plan.helper.target), ...(profile && { profile }) },
    ...(storeProblem && { storeProblem }),
  };
}

/**
 * Whether `text` has one credentials_helper block, ours, whose args select the same store as
 * `args` (the same backend and service, the defaults filling in what either leaves out) and
 * the same --timeout: install brings it up to `args` without --force.
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
  const timeout = (words: readonly string[]) => optionsOfArgs(words)?.timeout;
  return (
    storeOfArgs(existing) !== undefined &&
    storeOfArgs(existing) === storeOfArgs(args) &&
    timeout(existing) === timeout(args)
  );
}

/**
 * The chosen store's probe, when it fails (a Linux machine with no Secret Service, pass
 * without a store or a usable key): install works, and then every login would fail. Then
 * the other stores offered here (storesHere) are probed, for one that works. All by one
 * deadline: --timeout's, else the probes' short default.
 */
async function probeChosenStore(
  machine: Machine,
  options: GlobalOptions,
): Promise<InstallResult["storeProblem"]> {
  const deadline = deadlineIn(
    timeoutGiven(options, machine.env)
      ? timeoutSeconds(options, machine.env)
      : PROBE_TIMEOUT_SECONDS,
  );
  const probe = (store: StoreDescription) =>
    store.probe({ service: options.service, io: machine, deadline });
  const chosen = storeFor(options.backend, machine.platform);
  const verdict = await probe(chosen);
  if (verdict.status !== "fail") return undefined;
  let instead;
  for (const other of (await storesHere(machine)).filter((store) => store !== chosen)) {
    if ((await probe(other)).status !== "ok") continue;
    instead = { backend: other.name, title: other.title };
    break;
  }
  return {
    title: chosen.title,
    summary: verdict.summary,
    ...(verdict.fix !== undefined && { fix: verdict.fix }),
    ...(instead && { instead }),
  };
}

interface InstallPlan {
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
 * What `install` would do: copy this executable (`install` refuses unless it is the built
 * single executable) into Terraform's plugin directory and add
 * `credentials_helper "keychain" { args = helperArgs }` to every CLI config file Terraform and
 * OpenTofu read. A different credentials_helper already there is refused unless `force`.
 */
export function planInstall(
  machine: Machine,
  helperArgs: readonly string[],
  force: boolean,
): InstallPlan {
  refuseRootInOthersHome(machine);
  const locations = locationsOf(machine);
  refuseSecondHelper(machine, helperArgs);
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
    const result = addCredentialsHelper(before, HELPER_BLOCK_NAME, helperArgs, {
      force: force || selectsSameStore(before, helperArgs),
      file,
    });
    const linked = link === undefined ? {} : { linkTarget: link };
    return result.change === "unchanged"
      ? { file, tools, change: "unchanged", ...linked }
      : { file, tools, change: result.change, text: result.text, ...linked };
  });
  // The same store again, named on the line: what a person copies to reinstall after an
  // upgrade, whatever block is in effect by then.
  const installAgain = commandInProfile([target, ...helperArgs, "install"], machine);
  const link = planCommandLink(machine, target, installAgain);
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
 * A credentials_helper in a file Terraform merges after the one install edits (a drop-in,
 * ~/.terraform.d/*.tfrc): of another name, Terraform's CLI config would be invalid with ours
 * added; of ours with other args, its args would win over what install writes. That file is
 * the user's to change, with or without --force.
 */
function refuseSecondHelper(machine: Machine, helperArgs: readonly string[]): void {
  const view = viewsOf(machine).Terraform;
  const later = view.helpers.filter(({ file }) => file !== view.mainFile);
  const other = later.find(({ name }) => name !== HELPER_BLOCK_NAME);
  if (other !== undefined) {
    throw new CliError(
      `${other.file} sets credentials_helper "${other.name}", and Terraform reads that file too: with a second helper it refuses its CLI config and runs either; remove that block from ${other.file} and install again`,
    );
  }
  const ours = later.find(({ name }) => name === HELPER_BLOCK_NAME);
  const same =
    ours?.args?.length === helperArgs.length && ours.args.every((arg, i) => arg === helperArgs[i]);
  if (ours === undefined || same) return;
  throw new CliError(
    `${ours.file} sets credentials_helper "${HELPER_BLOCK_NAME}" ${ours.args === undefined ? "with args this tool cannot read" : `with args ${JSON.stringify(ours.args)}`}, and Terraform reads it after ${view.mainFile}: its args win over the ones install would write; change or remove that block, then install again`,
  );
}

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

/** Sizes first (cheap, and different after any rebuild that matters), then the bytes. */
function sameContent(a: string, b: string): boolean {
  return statSync(a).size === statSync(b).size && readFileSync(a).equals(readFileSync(b));
}
