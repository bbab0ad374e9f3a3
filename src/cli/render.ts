import { CliError } from "../errors.ts";
import { printable } from "../system/quote.ts";
import type { Check } from "../commands/doctor.ts";
import type { DoctorReport } from "../commands/doctor-report.ts";
import type { AppliedStep } from "../commands/cli-config-edits.ts";
import { argsWithout, commandLine, helperArgs, withVariable } from "../commands/command-line.ts";
import { fixWith, renderFix } from "../fixes.ts";
import { storeTitle } from "../stores/registry.ts";
import { leftBehind, type ImportResult } from "../commands/import.ts";
import type { InstallResult } from "../commands/install.ts";
import type { ListResult } from "../commands/list.ts";
import type { UninstallResult } from "../commands/uninstall.ts";
import type { Io } from "../system/io.ts";
import type { GlobalOptions } from "../commands/options.ts";

// What the commands for people return, as lines for people: the commands return data
// (plans, steps taken, hosts, checks), and this file turns it into the report they print.

/** `install`'s report on stdout; a failure part way is thrown after the steps that were taken. */
export function renderInstall(io: Io, result: InstallResult): void {
  const say = sayer(io);
  const { plan, dryRun, options } = result;
  const would = dryRun ? "would be " : "";
  const report = stepReport(result);
  const helperVerb = {
    installed: "installed",
    updated: "updated",
    unchanged: "already up to date",
  }[plan.helper.change];
  if (plan.helper.change === "unchanged")
    report.line(`helper: ${plan.helper.target} ${helperVerb}`);
  else report.line(`helper: ${plan.helper.target} ${would}${helperVerb}`, "helper");
  for (const config of plan.configs) {
    const tools = config.tools.join(" and ");
    if (config.change === "unchanged") {
      report.line(`config: ${config.file} (${tools}) already has the block`);
      continue;
    }
    report.line(
      `config: ${config.file} (${tools}): credentials_helper block ${would}${config.change}`,
      config,
    );
    if (config.linkTarget !== undefined)
      report.line(
        `        ${config.file} is a symlink: its target ${config.linkTarget} ${would}edited`,
        config,
      );
  }
  const { link } = plan;
  if (link.kind === "link" && link.change === "unchanged")
    report.line(`link: ${link.path} already leads to it`);
  else if (link.kind === "link")
    report.line(`link: ${link.path} ${would}added, leading to it: PATH finds it by name`, {
      link: link.path,
    });
  else if (link.kind === "taken")
    report.line(
      `note: ${link.path} is something else: left as it is, so the helper is not linked there`,
    );
  else if (link.kind === "none") report.line(`note: ${link.hint}`);
  for (const note of plan.notes ?? []) report.line(`note: ${note}`);
  for (const { dir, why, fix } of plan.exposures ?? [])
    report.line(
      `warning: ${dir} is ${why}: another user could replace the helper, which reads every token; ${fix}`,
    );
  report.print(say);
  if (result.failure !== undefined) throw result.failure;
  if (dryRun) {
    say("the block:");
    for (const line of plan.block.trimEnd().split("\n")) say(`  ${line}`);
    say("dry run: nothing was changed");
    return;
  }
  const { next, storeProblem } = result;
  if (next === undefined) return;
  // Each next step runs as printed (see InstallResult's `next`).
  const inProfile = (words: readonly string[]) =>
    withVariable(next.profile, commandLine(words, io.platform), io.platform);
  const helper = (options: GlobalOptions, ...words: string[]) =>
    inProfile([next.helper, ...helperArgs(options), ...words]);
  say(
    `next: "${inProfile(["terraform", "login", "HOST"])}" (or "${inProfile(["tofu", "login", "HOST"])}") stores the token in ${storeTitle(options.backend, io.platform)};`,
  );
  say(
    `      "${helper(options, "import")}" moves tokens already in credentials.tfrc.json or credentials blocks;`,
  );
  say(`      "${helper(options, "doctor")}" checks the set-up`);
  if (storeProblem === undefined) return;
  say(`warning: ${storeProblem.title} cannot store tokens here yet: ${storeProblem.summary}`);
  if (storeProblem.fix !== undefined) {
    const fix = fixWith(storeProblem.fix, inProfile([next.helper]), (named) =>
      commandLine(argsWithout(helperArgs(options), named), io.platform),
    );
    say(`      fix: ${renderFix(fix)}`);
  }
  const { instead } = storeProblem;
  if (instead !== undefined)
    say(
      `      or store in ${instead.title} instead: "${helper({ ...options, backend: instead.backend }, "install", "--force")}"`,
    );
}

/** `uninstall`'s report on stdout; a failure part way is thrown after the steps that were taken. */
export function renderUninstall(io: Io, result: UninstallResult): void {
  const say = sayer(io);
  const { plan, dryRun, options, hosts } = result;
  const would = dryRun ? "would be " : "";
  const report = stepReport(result);
  const { target, present, keptFor } = plan.helper;
  if (!present) report.line(`helper: ${target} not installed`);
  else if (keptFor)
    report.line(
      `helper: ${target} ${would}kept: ${keptFor.join(", ")} still names it ("uninstall --force" removes it anyway)`,
    );
  else report.line(`helper: ${target} ${would}removed`, "helper");
  if (keptFor === undefined)
    for (const link of plan.links) report.line(`link: ${link} ${would}removed`, { link });
  for (const config of plan.configs) {
    if (config.change !== "removed") {
      report.line(
        config.change === "absent"
          ? `config: ${config.file} does not exist: nothing to remove`
          : `config: ${config.file} has no credentials_helper "keychain" block`,
      );
      continue;
    }
    report.line(
      config.text === "" && config.linkTarget === undefined
        ? `config: ${config.file} ${would}removed: it held only the credentials_helper block`
        : `config: ${config.file}: credentials_helper block ${would}removed`,
      config,
    );
    if (config.linkTarget !== undefined)
      report.line(
        `        ${config.file} is a symlink: its target ${config.linkTarget} ${would}edited`,
        config,
      );
  }
  report.print(say);
  const where = `${storeTitle(options.backend, io.platform)} (service "${options.service}")`;
  for (const host of result.forgotten ?? [])
    say(
      dryRun
        ? `forget: ${host} would be deleted from ${where}`
        : `forgot: ${host} deleted from ${where}`,
    );
  if (result.sharedWith !== undefined && (result.forgotten?.length ?? 0) > 0)
    say(
      `forget: ${where} is shared through ${result.sharedWith}: the deletions ${dryRun ? "would be" : "are"} commits, and the next push deletes these tokens for everyone who pulls from it`,
    );
  if (result.failure !== undefined) throw result.failure;
  if (result.forgotten === undefined) {
    const deleting = result.deleteCommands
      ?.map(({ words, variable }) =>
        withVariable(variable, commandLine(words, io.platform), io.platform),
      )
      .join(" && ");
    if (hosts === undefined)
      say(
        `could not check which tokens stay in ${where}: ${result.unreachable ?? ""}${deleting === undefined ? "" : `; to delete any, run: ${deleting}`}`,
      );
    else if (hosts.length === 0) say(`no tokens are stored in ${where}`);
    else
      say(
        `the tokens for ${hosts.join(", ")} ${dryRun ? "would stay" : "stay"} in ${where}${deleting === undefined ? "" : `; to delete them, run: ${deleting}`}`,
      );
  }
  if (dryRun) say("dry run: nothing was changed");
}

/**
 * The lines of an install or uninstall plan, each tied to the step it reports (or to none:
 * what stays as it is). `print` prints, in the plan's order, the lines of steps that were
 * carried out (all of them on a dry run): after a failure, the error stands beside what
 * happened.
 */
function stepReport(result: {
  readonly dryRun: boolean;
  readonly applied: readonly AppliedStep[];
}) {
  const lines: { text: string; step?: AppliedStep }[] = [];
  // A link is reported as a fresh object: it is known by its path.
  const key = (step: AppliedStep) =>
    typeof step === "object" && "link" in step ? `link:${step.link}` : step;
  const applied = new Set(result.applied.map(key));
  return {
    line(text: string, step?: AppliedStep) {
      lines.push({ text, ...(step === undefined ? {} : { step }) });
    },
    print(say: (line: string) => void) {
      for (const { text, step } of lines)
        if (step === undefined || result.dryRun || applied.has(key(step))) say(text);
    },
  };
}

/** `import`'s report on stdout; a host left behind makes it fail, after the report. */
export function renderImport(
  io: Io,
  options: GlobalOptions,
  { dryRun }: { readonly dryRun: boolean },
  { report, filesRead, stacksNote }: ImportResult,
): void {
  const say = sayer(io);
  if (report.hosts.length === 0) {
    say(
      `nothing to import: no credentials for any host in ${filesRead.length === 0 ? "the CLI config files" : filesRead.join(", ")}`,
    );
    return;
  }
  const into = storeTitle(options.backend, io.platform);
  const would = dryRun ? "would be " : "";
  const plan = dryRun ? "(dry run, nothing changed) " : "";
  for (const { outcome, host, file, reason } of report.hosts) {
    const name = printable(host);
    if (outcome === "failed") say(`${plan}failed: ${name} (stays in ${file}): ${reason ?? ""}`);
    else if (outcome === "kept") say(`${plan}kept: ${name} in ${file}: ${reason ?? ""}`);
    else if (outcome === "dropped")
      say(
        `${plan}${would}dropped: ${name} from ${file}: ${into} holds other credentials for it, which stay`,
      );
    else if (outcome === "replaced")
      say(`${plan}${would}replaced: the credentials for ${name} in ${into} by those from ${file}`);
    else say(`${plan}${would}${outcome}: ${name} from ${file} into ${into}`);
  }
  for (const { file, change } of report.files) {
    say(
      change === "removed"
        ? `${plan}${file} ${dryRun ? "would be" : "was"} deleted: nothing is left in it`
        : `${plan}${file} ${dryRun ? "would be" : "was"} rewritten without the hosts moved`,
    );
  }
  if (stacksNote !== undefined) say(`note: ${stacksNote}`);
  const left = leftBehind(report);
  if (left > 0)
    throw new CliError(
      `${left} of ${report.hosts.length} hosts were left where they are: Terraform takes their credentials from there, not from the helper`,
    );
}

/**
 * `list` on stdout, one host a line or one JSON array. An empty list is said only to a
 * person, and on stderr: stdout stays the list a script reads, empty when there is none.
 */
export async function renderList(
  io: Io,
  { json }: { readonly json: boolean },
  result: ListResult,
): Promise<void> {
  const { hosts, options } = result;
  if (json) sayer(io)(JSON.stringify(hosts));
  else if (hosts.length > 0) for (const host of hosts) sayer(io)(host);
  else if ((await io.stdoutIsTTY?.()) === true)
    io.stderr.write(
      `no credentials stored in ${storeTitle(options.backend, io.platform)} (service "${options.service}")\n`,
    );
}

/** `doctor`'s checks on stdout, each with its details and fix; a failed check makes it fail. */
export function renderDoctor(io: Io, checks: readonly Check[]): void {
  const say = sayer(io);
  for (const check of checks) {
    say(
      `${check.status === "ok" ? "ok  " : check.status === "warn" ? "warn" : "FAIL"}  ${check.title}`,
    );
    for (const line of check.details) say(`      ${line}`);
    if (check.fix !== undefined && check.status !== "ok") say(`      fix: ${check.fix}`);
  }
  const failed = checks.filter((check) => check.status === "fail").length;
  if (failed > 0) throw new CliError(`doctor: ${failed} check${failed === 1 ? "" : "s"} failed`);
}

/** `doctor --json`: the report as one JSON document, and nothing else, on stdout. */
export function renderDoctorJson(io: Io, report: DoctorReport): void {
  sayer(io)(JSON.stringify(report, null, 2));
}

function sayer(io: Io) {
  return (line: string) => io.stdout.write(`${line}\n`);
}
