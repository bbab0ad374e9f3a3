import { readdirSync } from "node:fs";
import path from "node:path";
import type { GlobalOptions } from "./options.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import { PROBE_TIMEOUT_SECONDS, type ProbeResult } from "../stores/store-description.ts";
import { DEFAULT_BACKEND, storeFor, storesHere, storeTitle } from "../stores/registry.ts";
import { deadlineIn, timeoutGiven, timeoutSeconds, type Deadline } from "../system/deadline.ts";
import { fixFor, fixWith, renderFix, type FixNeeded } from "../fixes.ts";
import { CliError } from "../errors.ts";
import { stacksHostnameNote } from "../terraform/stacks-hostname.ts";
import type { TerraformLocations } from "../terraform/locations.ts";
import {
  describeSends,
  readingProblems,
  shadowsOf,
  whereIs,
  type TerraformView,
  type Tool,
} from "../terraform/view.ts";
import { openTofuTakeover } from "./install.ts";
import { HELPER_BLOCK_NAME, locationsOf } from "./cli-config-edits.ts";
import type { Machine } from "../system/io.ts";
import { exposuresOf } from "./writable-by-others.ts";
import { installedBlock } from "./installed-block.ts";
import { readTextIfExists } from "../system/files.ts";
import { printable } from "../system/quote.ts";
import { viewsOf } from "./read-view.ts";
import { whyHelperNotRun } from "./why-helper-not-run.ts";
import { captureCommand } from "../system/run-command.ts";
import {
  argsWithout,
  commandInProfile,
  commandLine,
  helperArgs as shortestArgs,
} from "./command-line.ts";
import { helperCommand, linksTo } from "./command-link.ts";
import { renderCredentialsHelper } from "../terraform/cli-config.ts";
import { DEFAULT_SERVICE, followBlock, namesStore, optionsOfArgs, storeOfArgs } from "./options.ts";
import { checkStoredTokens, type TokenCheckOptions } from "./token-check.ts";

export interface Check {
  readonly status: "ok" | "warn" | "fail";
  readonly title: string;
  readonly details: readonly string[];
  readonly fix?: string;
}

/**
 * `doctor`: what stands between `terraform` and the keychain, each finding with its fix.
 * It never prints a token: it reads credential files and variables for host names only.
 */
export async function runDoctor(
  io: Machine,
  version: string,
  options: GlobalOptions,
  helperArgs: readonly string[],
  openStore: (deadline: Deadline) => CredentialStore | Promise<CredentialStore>,
  tokens?: Omit<TokenCheckOptions, "deadline">,
): Promise<Check[]> {
  // One deadline for all of doctor: its probes, the store, the token check.
  const deadline = deadlineIn(timeoutSeconds(options, io.env));
  const locations = locationsOf(io);
  const checks: Check[] = [];

  // Read once: the config, install and shadow checks all look at what Terraform reads.
  const views = viewsOf(io);
  // A block already in place keeps its args: install with other args would be refused, and
  // --force would drop them (a profile's --service).
  const inBlock = installedBlock(io)?.args;
  const fromBlock = inBlock === undefined ? undefined : optionsOfArgs(inBlock);
  // In their shortest form: install writes both options whatever it is given.
  const blockArgs =
    fromBlock === undefined ? inBlock : shortestArgs(followBlock({}, fromBlock).options);
  const installation = await installationCheck(
    io,
    deadline,
    version,
    locations.helperInstallPath,
    locations.pluginDirs,
    blockArgs ?? helperArgs,
  );
  // Said as import says it: with no executable where Terraform looks, it asks no helper.
  const notRun =
    views.Terraform.helperChoice.kind === "missing" && whyHelperNotRun(views.Terraform);
  checks.push(
    notRun && installation.status === "fail"
      ? { ...installation, details: [...installation.details, notRun.reason] }
      : installation,
  );
  checks.push(...exposureChecks(io, locations.helperInstallPath));
  // Fixes name a file that runs as printed: the installed helper once it runs, else this one
  // (the plugin directory is not on PATH, so a bare name would not be found).
  // By name when PATH finds the installed file (install linked it), and in the profile
  // TF_CLI_CONFIG_FILE chose: without it, "install" would write the default file.
  const executable =
    installation.status === "fail" ? io.execPath : helperCommand(io, locations.helperInstallPath);
  const inProfile = (words: readonly string[]) => commandInProfile(words, io);
  const runnable = (...words: string[]) => inProfile([executable, ...helperArgs, ...words]);
  // First in the report; checked here, once a fix can name the command that switches stores.
  const switchTo = (backend: GlobalOptions["backend"]) =>
    inProfile([
      executable,
      "--backend",
      backend,
      ...argsWithout(helperArgs, ["backend"]),
      "install",
      "--force",
    ]);
  // terraform stacks finds a host only in credentials.tfrc.json or a variable.
  const stacksNote = (hosts: readonly string[]) =>
    stacksHostnameNote(
      hosts.filter((host) => !namedInCredentialsFile(views.Terraform, host)),
      io.env,
    );
  // Opened once, by the store check when the probe allows it; the token check reuses it.
  let opened: Promise<CredentialStore> | undefined;
  const openOnce = () => (opened ??= Promise.resolve(deadline).then(openStore));
  // A fix as data, rendered with the helper's command and these options.
  const renderNeeded = (needed: FixNeeded) =>
    renderFix(
      fixWith(needed, inProfile([executable]), (named) =>
        commandLine(argsWithout(helperArgs, named), io.platform),
      ),
    );
  checks.unshift(
    ...(await storeChecks(io, options, deadline, openOnce, switchTo, stacksNote, renderNeeded)),
  );

  for (const { view, tools } of mainFiles(views)) {
    const file = view.mainFile;
    // install leaves ~/.terraformrc uncreated while OpenTofu reads its own XDG tofurc (its
    // existence would hide that file from OpenTofu): not a failure, the choice it made.
    if (
      view.files.length === 0 &&
      file === locations.terraformConfigFile &&
      openTofuTakeover(io, locations)
    ) {
      checks.push({
        status: "warn",
        title: `Terraform is not set up: ${file} does not exist, and creating it would make OpenTofu stop reading ${locations.tofuConfigFile}`,
        details: [],
        fix: `for Terraform, set TF_CLI_CONFIG_FILE=${locations.tofuConfigFile}`,
      });
      continue;
    }
    checks.push(
      configCheck(view, tools.join(" and "), helperArgs, runnable, (args, ...words) =>
        inProfile([executable, ...args, ...words]),
      ),
    );
  }

  // ~/.terraform.d/*.tfrc(.json): merged into the CLI config; a second helper there breaks it.
  const dirCheck = configDirCheck(views.Terraform);
  if (dirCheck !== undefined) checks.push(dirCheck);
  // Files Terraform drops (nothing in them counts) and layouts it panics on.
  for (const { file, tools, kind, reason } of readingProblems(views)) {
    if (kind === "dropped" && mainFiles(views).some(({ view }) => view.mainFile === file)) continue;
    checks.push({
      status: "fail",
      title:
        kind === "dropped"
          ? `${tools.join(" and ")} ${tools.length > 1 ? "ignore" : "ignores"} ${file} entirely: it cannot be read, so nothing in it counts`
          : `${tools.join(" and ")} ${tools.length > 1 ? "crash" : "crashes"} on every command reading ${file}`,
      details: [
        kind === "dropped" ? `${tools[0] ?? "Terraform"} says: ${reason}` : `Go panics: ${reason}`,
      ],
      fix: `fix ${file} by hand${kind === "dropped" ? " where the message points" : ""}`,
    });
  }

  if (views.Terraform.override !== undefined) checks.push(configFromEnvCheck(views));
  else {
    const hidden = hiddenTofurcCheck(locations);
    if (hidden) checks.push(hidden);
  }
  checks.push(shadowCheck(views, runnable()));
  if (tokens === undefined) return checks;
  const shadows = new Map(
    shadowsOf(views).map(({ host, sends }) => [host, printable(describeSends(sends))]),
  );
  const context = {
    ...io,
    shadows,
    storeName: storeTitle(options.backend, io.platform),
    inProfile,
  };
  checks.push(...(await checkStoredTokens(opened, context, { ...tokens, deadline })));
  return checks;
}

/**
 * Which stores work on this machine (both are probed without touching a secret), then the
 * store the options select, opened for real only when the probe says it is safe.
 */
async function storeChecks(
  io: Machine,
  options: GlobalOptions,
  deadline: Deadline,
  openStore: () => CredentialStore | Promise<CredentialStore>,
  switchTo: (backend: GlobalOptions["backend"]) => string,
  stacksNote: (hosts: readonly string[]) => string | undefined,
  renderNeeded: (needed: FixNeeded) => string,
): Promise<Check[]> {
  // Each probe waits as long as --timeout (or the variable) leaves before it calls its store
  // hung; without either, doctor's own shorter default: a person is waiting, and no probe
  // waits for an unlock prompt, for which a call's default is as long as it is.
  const probeDeadline = () =>
    timeoutGiven(options, io.env) ? deadline : deadline.within(PROBE_TIMEOUT_SECONDS);
  const chosenStore = storeFor(options.backend, io.platform);
  const probes = new Map<string, ProbeResult>();
  for (const store of await storesHere(io, chosenStore)) {
    probes.set(
      store.name,
      await store.probe({ service: options.service, io, deadline: probeDeadline() }),
    );
  }
  const chosen = probes.get(chosenStore.name);
  if (chosen === undefined) throw new Error(`${chosenStore.name} serves ${io.platform} unprobed`);
  const title = `store --backend ${options.backend} (service "${options.service}")`;
  const others = [...probes].filter(([backend]) => backend !== options.backend);
  // Each store said once: the chosen one first; another that works as an ok line; another
  // that does not only when the chosen one fails too (its fix is then a way out), never
  // inside an ok line.
  const otherChecks = (chosenWorks: boolean): Check[] =>
    others.flatMap(([backend, probe]): Check[] => {
      if (probe.status !== "fail")
        return [
          {
            status: "ok",
            title: `--backend ${backend} works here too: ${probe.summary}`,
            details: [],
          },
        ];
      if (chosenWorks) return [];
      return [
        {
          status: "warn",
          title: `--backend ${backend} does not work here either: ${probe.summary}`,
          details: [],
          ...(probe.fix === undefined ? {} : { fix: renderNeeded(probe.fix) }),
        },
      ];
    });
  if (!chosen.safeToOpen) {
    // The other store works here (a headless machine without D-Bus, with pass set up): the
    // way out is to switch the helper to it, which install --force does, block and all.
    const other = others.find(([, probe]) => probe.status === "ok")?.[0];
    const chosenFix = chosen.fix ? renderNeeded(chosen.fix) : undefined;
    const fixes = chosenFix === undefined ? [] : [chosenFix];
    if (other !== undefined) {
      const command = switchTo(other);
      // Unless the chosen store's fix is that very switch (no session bus: use pass).
      if (chosenFix?.includes(`"${command}"`) !== true) {
        fixes.push(
          `${chosenFix ? "or use" : "use"} ${storeTitle(other, io.platform)}: run "${command}"`,
        );
      }
    }
    return [
      {
        status: chosen.status,
        title: `${title}: ${chosen.summary}`,
        details: [],
        ...(fixes.length > 0 ? { fix: fixes.join("; ") } : {}),
      },
      ...otherChecks(false),
    ];
  }
  try {
    const hosts = await (await openStore()).list();
    const note = stacksNote(hosts);
    return [
      {
        status: "ok",
        title: `${title}: reachable, ${hosts.length} host${hosts.length === 1 ? "" : "s"} stored`,
        // What the probe learnt of it (its provider, a limit on an entry's size): only a
        // store that is safe to open gets here, and its probe is then ok.
        details: [
          chosen.summary,
          ...hosts.map((host) => `has credentials for ${host}`),
          ...(note === undefined ? [] : [note]),
        ],
      },
      ...otherChecks(true),
    ];
  } catch (error) {
    const fix = error instanceof CliError ? error.fix : undefined;
    return [
      {
        status: "fail",
        title: `${title}: not reachable`,
        details: [(error as Error).message],
        ...(fix === undefined ? {} : { fix: renderNeeded(fix) }),
      },
      ...otherChecks(false),
    ];
  }
}

/**
 * Where the installed helper or a link to it sits in a directory another user could write:
 * they could replace the helper, which reads every token.
 */
function exposureChecks(io: Machine, target: string): Check[] {
  const dirs = [target, ...linksTo(io, target)].map((file) => path.dirname(file));
  return exposuresOf(dirs, io.uid).map(({ dir, why, fix }) => ({
    status: "warn",
    title: `${dir} is ${why}: another user could replace the helper, which reads every token`,
    details: [],
    fix,
  }));
}

async function installationCheck(
  io: Machine,
  deadline: Deadline,
  version: string,
  target: string,
  pluginDirs: readonly string[],
  helperArgs: readonly string[],
): Promise<Check> {
  const copies = pluginDirs.flatMap((dir) => helperFilesIn(dir));
  const installed = await versionOf(target, io.env, deadline.within(5));
  const others = copies.filter((file) => file !== target);
  const details = others.map(
    (file) =>
      `another copy: ${file} (Terraform uses the newest _vX.Y.Z suffix, else the first found)`,
  );
  if (installed === undefined) {
    return {
      status: "fail",
      title: `not installed: ${target} is missing or does not run`,
      details,
      fix: `run "${commandInProfile([io.execPath, ...helperArgs, "install"], io)}"`,
    };
  }
  if (installed !== version) {
    return {
      status: "warn",
      title: `installed ${target} is version ${installed}, this one is ${version}`,
      details,
      fix: `run "${commandInProfile([io.execPath, ...helperArgs, "install"], io)}" to replace it`,
    };
  }
  return {
    status: others.length > 0 ? "warn" : "ok",
    title: `installed: ${target} (version ${installed})`,
    details,
  };
}

/** Each main CLI config file once, with the view of the first tool that reads it. */
function mainFiles(
  views: Readonly<Record<Tool, TerraformView>>,
): Array<{ view: TerraformView; tools: Tool[] }> {
  const { Terraform, OpenTofu } = views;
  return Terraform.mainFile === OpenTofu.mainFile
    ? [{ view: Terraform, tools: ["Terraform", "OpenTofu"] }]
    : [
        { view: Terraform, tools: ["Terraform"] },
        { view: OpenTofu, tools: ["OpenTofu"] },
      ];
}

/** Whether credentials.tfrc.json, as the view reads it, names `host`. */
function namedInCredentialsFile(view: TerraformView, host: string): boolean {
  return view.files.some(
    ({ file, entries }) =>
      path.basename(file) === "credentials.tfrc.json" &&
      entries.some((entry) => entry.host === host),
  );
}

/** Whether the CLI config the view merges runs our helper, and with which args. */
function configCheck(
  view: TerraformView,
  tools: string,
  helperArgs: readonly string[],
  runnable: (...words: string[]) => string,
  runnableWith: (args: readonly string[], ...words: string[]) => string,
): Check {
  const file = view.mainFile;
  const block = renderCredentialsHelper(HELPER_BLOCK_NAME, helperArgs)
    .trimEnd()
    .replace(/\n\s*/g, " ");
  const fix = `run "${runnable("install")}", or add: ${block}`;
  const main = view.files.find(({ role }) => role === "main");
  if (main?.error !== undefined) {
    return {
      status: "fail",
      title: `CLI config ${file} (${tools}) cannot be read`,
      details: [main.error],
    };
  }
  if (main?.dropped !== undefined) {
    return {
      status: "fail",
      title: `CLI config ${file} (${tools}) is ignored entirely: Terraform cannot read it, so nothing in it counts`,
      details: [`Terraform says: ${main.dropped}`],
      fix: `fix ${file} where the message points`,
    };
  }
  const ours = view.helpers.find((helper) => helper.name === HELPER_BLOCK_NAME);
  if (ours === undefined) {
    const other = view.helpers[0];
    if (main === undefined && other === undefined) {
      return {
        status: "fail",
        title: `CLI config ${file} (${tools}) does not exist`,
        details: [],
        fix,
      };
    }
    return {
      status: "fail",
      title: `CLI config ${file} (${tools}) has no credentials_helper "${HELPER_BLOCK_NAME}" block`,
      details: other
        ? [`${whereIs(other)} names the helper "${printable(other.name)}" instead`]
        : [],
      fix: other ? `run "${runnable("install", "--force")}"` : fix,
    };
  }
  const args = ours.args ?? [];
  // The same store counts as the same args, whatever their order or a --timeout.
  const selects = (words: readonly string[]) => storeOfArgs(words) ?? words.join("\0");
  const where = ours.file === file ? "" : ` (from ${ours.file}, which it merges)`;
  if (ours.args === undefined || selects(args) !== selects(helperArgs)) {
    return {
      status: "warn",
      title: `CLI config ${file} (${tools}) runs the helper with args ${ours.args === undefined ? "this tool cannot read" : JSON.stringify(args)}${where}`,
      details: [
        `this check ran with ${helperArgs.length === 0 ? `the defaults (--backend ${DEFAULT_BACKEND} --service ${DEFAULT_SERVICE})` : JSON.stringify(helperArgs)}: Terraform sees a different set of entries`,
      ],
      fix: `run "${runnableWith(args, "doctor")}" to check what Terraform sees, or install again with the options you want`,
    };
  }
  if (!namesStore(optionsOfArgs(args) ?? {})) {
    // Such a call's line names no store, so it reads the CLI config to find the block's.
    return {
      status: "warn",
      title: `CLI config ${file} (${tools}) has the credentials_helper block${where}, but its args name no store`,
      details: [
        "so each call Terraform makes reads the CLI config files to find the store: a file read and a parse more per call; install writes --backend and --service",
      ],
      fix: `run "${runnable("install")}"`,
    };
  }
  return {
    status: "ok",
    title: `CLI config ${file} (${tools}) has the credentials_helper block${where}`,
    details: [],
  };
}

/**
 * Informs, rather than warns: whether that file has the block is the config check's job. A
 * set-up that points TF_CLI_CONFIG_FILE at ~/.terraformrc itself is common and correct, so
 * only the default files other than the chosen one are named as unread.
 */
function configFromEnvCheck(views: Readonly<Record<Tool, TerraformView>>): Check {
  const view = views.Terraform;
  const unread = [...new Set([...view.unread, ...views.OpenTofu.unread])];
  return {
    status: "ok",
    title: `${view.override ?? "TF_CLI_CONFIG_FILE"} is set: ${view.mainFile} is the CLI config file Terraform and OpenTofu read`,
    details: unread.map((file) => printable(`${file} is not read while it is set`)),
  };
}

/**
 * OpenTofu reads $XDG_CONFIG_HOME/opentofu/tofurc only while neither ~/.tofurc nor
 * ~/.terraformrc exists: a user's tofurc silently stops counting once one of them appears.
 */
function hiddenTofurcCheck({
  tofuXdgConfigFile: tofurc,
  tofuConfigFile,
}: TerraformLocations): Check | undefined {
  if (tofurc === undefined || tofurc === tofuConfigFile || readTextIfExists(tofurc) === undefined)
    return undefined;
  return {
    status: "warn",
    title: `OpenTofu does not read ${tofurc}: ${tofuConfigFile} exists, and OpenTofu reads that instead`,
    details: [],
    fix: `merge ${tofurc} into ${tofuConfigFile}, or remove ${tofuConfigFile} and install again`,
  };
}

/**
 * The files Terraform merges after its main one: one that sets another credentials_helper
 * makes Terraform's CLI config invalid, and it then runs either helper. Nothing to say when
 * there are none.
 */
function configDirCheck(view: TerraformView): Check | undefined {
  const dropIns = view.files.filter(({ role }) => role === "drop-in");
  if (dropIns.length === 0) return undefined;
  const unreadable = dropIns.flatMap(({ error }) => (error === undefined ? [] : [error]));
  const others = view.helpers.filter(({ name }) => name !== HELPER_BLOCK_NAME);
  const [other] = others;
  if (other !== undefined && view.helpers.length > 1) {
    return {
      status: "fail",
      title: `${other.file} sets credentials_helper "${printable(other.name)}" as well: Terraform refuses a CLI config with two ("No more than one credentials_helper block may be specified"); ${whyHelperNotRun(view)?.reason ?? "it runs either"}`,
      details: [
        ...others.slice(1).map(({ file, name }) => `${file} sets "${printable(name)}" too`),
        ...unreadable,
      ],
      fix: `remove that credentials_helper block from ${other.file}`,
    };
  }
  return {
    status: unreadable.length > 0 ? "warn" : "ok",
    title: `Terraform also reads ${dropIns.map(({ file }) => file).join(", ")}`,
    details: unreadable,
  };
}

/**
 * Hosts whose credentials come from somewhere that wins over the helper (Terraform ≥ 1.2),
 * one line each from the view, with every other place that names the host. The fix says per
 * cause what to run, in an order that never loses a token: `import` first (it removes a host
 * from its files only once it is stored), then entries import cannot move, by hand, and the
 * variables last.
 */
function shadowCheck(views: Readonly<Record<Tool, TerraformView>>, helper: string): Check {
  const shadows = shadowsOf(views);
  const details: string[] = [];
  const variables: string[] = [];
  let importable = false;
  let byHand = false;
  for (const { host, sends, tools, entries } of shadows) {
    if (sends.from === "variable") variables.push(sends.name);
    else if (sends.from === "file") importable = true;
    else byHand = true;
    const named =
      sends.from === "file" || sends.from === "nothing"
        ? [sends.entry]
        : sends.from === "unknown"
          ? sends.entries
          : [];
    const others = entries.filter((entry) => !named.includes(entry));
    const also = others.length === 0 ? "" : `; also named in ${others.map(whereIs).join(", ")}`;
    const only = tools.length === 1 ? ` (for ${tools.join("")} only)` : "";
    details.push(printable(`${host}: ${describeSends(sends)} wins over the helper${only}${also}`));
  }
  const values = { HELPER: helper, VARIABLES: [...new Set(variables)].map(printable).join(" ") };
  const fixes = [
    ...(importable ? [renderFix(fixFor("credentials-in-files", values))] : []),
    ...(byHand ? [fixFor("credentials-by-hand", values).effect] : []),
    ...(variables.length > 0 ? [renderFix(fixFor("token-variables", values))] : []),
  ];
  return details.length === 0
    ? {
        status: "ok",
        title: "no host is shadowed by TF_TOKEN_* variables or plaintext credentials",
        details,
      }
    : {
        status: "warn",
        title: "these hosts do not use the helper",
        details,
        ...(fixes.length > 0 ? { fix: fixes.join("; then ") } : {}),
      };
}

function helperFilesIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.startsWith("terraform-credentials-keychain"))
      .map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

async function versionOf(
  executable: string,
  env: Readonly<Record<string, string | undefined>>,
  deadline: Deadline,
): Promise<string | undefined> {
  const outcome = await captureCommand(executable, ["--version"], { env, deadline });
  return outcome.kind === "exited" && outcome.code === 0 ? outcome.stdout.trim() : undefined;
}
