import { CliError } from "../errors.ts";
import type { Hostname } from "../protocol/hostname.ts";
import { oneLine, printable } from "../system/quote.ts";
import { commandLine, profileVariable, withVariable } from "../commands/command-line.ts";
import { DEFAULT_BACKEND, storeFor, storesHere, storeTitle } from "../stores/registry.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import { PROBE_TIMEOUT_SECONDS, type StoreDescription } from "../stores/store-description.ts";
import type { Io } from "../system/io.ts";
import { DEFAULT_SERVICE, type GlobalOptions } from "../commands/options.ts";
import type { Deadline } from "../system/deadline.ts";
import type { HumanHandlers } from "./program.ts";
import type { HttpsGet } from "../system/https-get.ts";
import type { AppliedStep } from "../commands/install.ts";

/**
 * The commands for people. Each loads its module only when it runs, so that the protocol
 * verbs, which Terraform runs over and over, never pay for them. Commands return data;
 * this file turns it into lines on stdout.
 */
export function humanHandlers(
  io: Io,
  version: string,
  openStore: (
    options: GlobalOptions,
    deadline?: Deadline,
  ) => CredentialStore | Promise<CredentialStore>,
  httpsGet?: HttpsGet,
): HumanHandlers {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const note = (line: string) => io.stderr.write(`${line}\n`);
  const follow = async (given: Partial<GlobalOptions>, tell = note) =>
    (await import("./followed-options.ts")).followedOptions(io, given, {
      following: tell,
      unreadable: tell,
    });
  return {
    async install(options, { force, dryRun }) {
      const { planInstall, applyInstall } = await import("../commands/install.ts");
      const plan = planInstall(io, helperArgs(options), force);
      const would = dryRun ? "would be " : "";
      const report = stepReport();
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
      if (dryRun) {
        report.print(say, () => true);
        say("the block:");
        for (const line of plan.block.trimEnd().split("\n")) say(`  ${line}`);
        say("dry run: nothing was changed");
        return;
      }
      report.apply(say, (applied) => {
        applyInstall(plan, applied);
      });
      // Each next step runs as printed: the helper by name once PATH finds it, else by its
      // path; the same options; and the profile's TF_CLI_CONFIG_FILE when one chose the file,
      // so that "terraform login" stores into that profile.
      const { helperCommand } = await import("../commands/command-link.ts");
      const helper = helperCommand(io, plan.helper.target);
      const profile = profileVariable(io.env);
      const inProfile = (words: readonly string[]) =>
        withVariable(profile, commandLine(words, io.platform), io.platform);
      const next = (command: string) => inProfile([helper, ...helperArgs(options), command]);
      say(
        `next: "${inProfile(["terraform", "login", "HOST"])}" (or "${inProfile(["tofu", "login", "HOST"])}") stores the token in ${storeTitle(options.backend, io.platform)};`,
      );
      say(
        `      "${next("import")}" moves tokens already in credentials.tfrc.json or credentials blocks;`,
      );
      say(`      "${next("doctor")}" checks the set-up`);
      // A store that cannot work here (a Linux machine with no Secret Service, pass without
      // a key): install works, and then every login would fail. Say so now, with its probe's
      // fix, and the store that does work here, if one does.
      // One deadline for all the probes: --timeout's, else the probes' short default.
      const { deadlineIn, timeoutGiven, timeoutSeconds } = await import("../system/deadline.ts");
      const deadline = deadlineIn(
        timeoutGiven(options, io.env) ? timeoutSeconds(options, io.env) : PROBE_TIMEOUT_SECONDS,
      );
      const probe = (store: StoreDescription) =>
        store.probe({ service: options.service, io, deadline });
      const chosen = storeFor(options.backend, io.platform);
      const verdict = await probe(chosen);
      if (verdict.status === "fail") {
        say(`warning: ${chosen.title} cannot store tokens here yet: ${verdict.summary}`);
        if (verdict.fix !== undefined) say(`      fix: ${verdict.fix}`);
        for (const other of storesHere(io).filter((store) => store !== chosen)) {
          if ((await probe(other)).status !== "ok") continue;
          const words = [
            helper,
            ...helperArgs({ ...options, backend: other.name }),
            "install",
            "--force",
          ];
          say(`      or store in ${other.title} instead: "${inProfile(words)}"`);
          break;
        }
      }
    },

    async uninstall(given, { force, dryRun, forget }) {
      const options = await follow(given);
      const { planUninstall, applyUninstall } = await import("../commands/install.ts");
      const plan = planUninstall(io, force);
      const would = dryRun ? "would be " : "";
      const report = stepReport();
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
      // The hosts still stored, read before anything goes; a store that cannot be reached
      // soon leaves them unknown, and says why.
      let store: CredentialStore | undefined;
      let hosts: readonly Hostname[] | undefined;
      let unreachable = "";
      try {
        store = await openStore({ ...options, timeout: Math.min(options.timeout ?? 5, 5) });
        hosts = await store.list();
      } catch (error) {
        hosts = undefined;
        unreachable = oneLine(error instanceof Error ? error.message : String(error), 300);
      }
      const where = `${storeTitle(options.backend, io.platform)} (service "${options.service}")`;
      if (dryRun) {
        report.print(say, () => true);
        if (forget && hosts !== undefined)
          for (const host of hosts) say(`forget: ${host} would be deleted from ${where}`);
        say("dry run: nothing was changed");
        return;
      }
      report.apply(say, (applied) => {
        applyUninstall(plan, applied);
      });
      if (forget && store !== undefined && hosts !== undefined) {
        for (const host of hosts) {
          await store.forget(host);
          say(`forgot: ${host} deleted from ${where}`);
        }
        return;
      }
      if (hosts !== undefined && hosts.length === 0) {
        say(`no tokens are stored in ${where}`);
        return;
      }
      // A command that runs after this and after the last uninstall too: the store's own
      // tools, not this helper, whose executable goes with the last profile.
      const deleting = storeFor(options.backend, io.platform)
        .deleteCommands(options.service, hosts, io.env)
        ?.map(({ words, variable }) =>
          withVariable(variable, commandLine(words, io.platform), io.platform),
        )
        .join(" && ");
      if (hosts === undefined) {
        say(
          `could not check which tokens stay in ${where}: ${unreachable}${deleting === undefined ? "" : `; to delete any, run: ${deleting}`}`,
        );
        return;
      }
      say(
        `the tokens for ${hosts.join(", ")} stay in ${where}${deleting === undefined ? "" : `; to delete them, run: ${deleting}`}`,
      );
    },

    async import(given, flags) {
      const options = await follow(given);
      const [{ importCredentials }, { locationsOf, refuseRootInOthersHome }] = await Promise.all([
        import("../commands/import.ts"),
        import("../commands/install.ts"),
      ]);
      refuseRootInOthersHome(io);
      const locations = locationsOf(io);
      const report = await importCredentials(await openStore(options), locations, flags);
      if (report.hosts.length === 0) {
        say(
          `nothing to import: no hosts in ${locations.credentialsFiles.join(" or ")}, no credentials blocks in the CLI config files`,
        );
        return;
      }
      const into = storeTitle(options.backend, io.platform);
      const would = flags.dryRun ? "would be " : "";
      const plan = flags.dryRun ? "(dry run, nothing changed) " : "";
      for (const { outcome, host, file, reason } of report.hosts) {
        const name = printable(host);
        if (outcome === "failed") say(`${plan}failed: ${name} (stays in ${file}): ${reason ?? ""}`);
        else if (outcome === "kept") say(`${plan}kept: ${name} in ${file}: ${reason ?? ""}`);
        else if (outcome === "replaced")
          say(
            `${plan}${would}replaced: the credentials for ${name} in ${into} by those from ${file}`,
          );
        else say(`${plan}${would}${outcome}: ${name} from ${file} into ${into}`);
      }
      for (const { file, change } of report.files) {
        say(
          change === "removed"
            ? `${plan}${file} ${flags.dryRun ? "would be" : "was"} deleted: nothing is left in it`
            : `${plan}${file} ${flags.dryRun ? "would be" : "was"} rewritten without the hosts moved`,
        );
      }
      const { stacksHostnameNote } = await import("../terraform/stacks-hostname.ts");
      const stacks = report.lastCredentialsFileHosts
        .map((host) => stacksHostnameNote(host, io.env))
        .find((line) => line !== undefined);
      if (stacks !== undefined) say(`note: ${stacks}`);
      const failures = report.hosts.filter((host) => host.outcome === "failed").length;
      if (failures > 0)
        throw new CliError(`${failures} of ${report.hosts.length} hosts could not be imported`);
    },

    async list(given, { json }) {
      const options = await follow(given);
      const hosts = await (await openStore(options)).list();
      if (json) say(JSON.stringify(hosts));
      // Only to a person, and on stderr: stdout stays the list a script reads, empty when
      // there is none.
      else if (hosts.length === 0) {
        if (io.stdoutIsTTY === true)
          note(
            `no credentials stored in ${storeTitle(options.backend, io.platform)} (service "${options.service}")`,
          );
      } else for (const host of hosts) say(host);
    },

    async doctor(given, { offline }) {
      // doctor's whole report is on stdout: so is the block it follows.
      const options = await follow(given, say);
      const { runDoctor } = await import("../commands/doctor.ts");
      // Without a way to the network (tests in-process), the token check is left out.
      const tokens = httpsGet && { offline, get: httpsGet };
      const checks = await runDoctor(
        io,
        version,
        options,
        helperArgs(options),
        (deadline) => openStore(options, deadline),
        tokens,
      );
      for (const check of checks) {
        say(
          `${check.status === "ok" ? "ok  " : check.status === "warn" ? "warn" : "FAIL"}  ${check.title}`,
        );
        for (const line of check.details) say(`      ${line}`);
        if (check.fix !== undefined && check.status !== "ok") say(`      fix: ${check.fix}`);
      }
      const failed = checks.filter((check) => check.status === "fail").length;
      if (failed > 0)
        throw new CliError(`doctor: ${failed} check${failed === 1 ? "" : "s"} failed`);
    },
  };
}

/** The `args` of the credentials_helper block that selects the same store as these options. */
export function helperArgs(options: GlobalOptions): string[] {
  return [
    ...(options.backend === DEFAULT_BACKEND ? [] : ["--backend", options.backend]),
    ...(options.service === DEFAULT_SERVICE ? [] : ["--service", options.service]),
  ];
}

/**
 * The lines of an install or uninstall plan, each tied to the step it reports (or to none:
 * what stays as it is). `apply` prints, in the plan's order, only the lines of steps that
 * were carried out, once they were: after a failure, the error stands beside what happened.
 */
function stepReport() {
  const lines: { text: string; step?: string | object }[] = [];
  // A link is reported as a fresh object: it is known by its path.
  const key = (step: AppliedStep) =>
    typeof step === "object" && "link" in step ? `link:${step.link}` : step;
  const print = (say: (line: string) => void, done: (step: string | object) => boolean) => {
    for (const { text, step } of lines) if (step === undefined || done(step)) say(text);
  };
  return {
    line(text: string, step?: AppliedStep) {
      lines.push({ text, ...(step === undefined ? {} : { step: key(step) }) });
    },
    print,
    apply(say: (line: string) => void, run: (applied: (step: AppliedStep) => void) => void) {
      const applied = new Set<string | object>();
      try {
        run((step) => applied.add(key(step)));
      } finally {
        print(say, (step) => applied.has(step));
      }
    },
  };
}
