import { CliError } from "../errors.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import { printable } from "../quote.ts";
import { commandLine, profileVariable, storeName, withVariable } from "./command-line.ts";
import type { CredentialStore } from "../stores/credential-store.ts";
import type { Io } from "./io.ts";
import { DEFAULT_SERVICE, timeoutSeconds, type GlobalOptions } from "./options.ts";
import type { HumanHandlers } from "./program.ts";
import type { HttpsGet } from "../system/https-get.ts";

/**
 * The commands for people. Each loads its module only when it runs, so that the protocol
 * verbs, which Terraform runs over and over, never pay for them. Commands return data;
 * this file turns it into lines on stdout.
 */
export function humanHandlers(
  io: Io,
  version: string,
  openStore: (options: GlobalOptions) => CredentialStore | Promise<CredentialStore>,
  httpsGet?: HttpsGet,
): HumanHandlers {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const note = (line: string) => io.stderr.write(`${line}\n`);
  const follow = async (given: Partial<GlobalOptions>, tell = note) =>
    (await import("./followed-options.ts")).followedOptions(io, given, tell);
  return {
    async install(options, { force, dryRun }) {
      const { planInstall, applyInstall } = await import("../commands/install.ts");
      const plan = planInstall(io, helperArgs(options), force);
      const would = dryRun ? "would be " : "";
      const helperVerb = {
        installed: "installed",
        updated: "updated",
        unchanged: "already up to date",
      }[plan.helper.change];
      say(
        `helper: ${plan.helper.target} ${plan.helper.change === "unchanged" ? helperVerb : would + helperVerb}`,
      );
      for (const config of plan.configs) {
        const tools = config.tools.join(" and ");
        say(
          config.change === "unchanged"
            ? `config: ${config.file} (${tools}) already has the block`
            : `config: ${config.file} (${tools}): credentials_helper block ${would}${config.change}`,
        );
        if (config.linkTarget !== undefined && config.change !== "unchanged")
          say(
            `        ${config.file} is a symlink: its target ${config.linkTarget} ${would}edited`,
          );
      }
      const { link } = plan;
      if (link.kind === "link")
        say(
          link.change === "unchanged"
            ? `link: ${link.path} already leads to it`
            : `link: ${link.path} ${would}added, leading to it: PATH finds it by name`,
        );
      else if (link.kind === "taken")
        say(
          `note: ${link.path} is something else: left as it is, so the helper is not linked there`,
        );
      else if (link.kind === "none") say(`note: ${link.hint}`);
      for (const note of plan.notes ?? []) say(`note: ${note}`);
      if (dryRun) {
        say("the block:");
        for (const line of plan.block.trimEnd().split("\n")) say(`  ${line}`);
        say("dry run: nothing was changed");
        return;
      }
      applyInstall(plan);
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
        `next: "${inProfile(["terraform", "login", "HOST"])}" (or "${inProfile(["tofu", "login", "HOST"])}") stores the token in ${storeName(options.backend)};`,
      );
      say(`      "${next("import")}" moves tokens already in credentials.tfrc.json;`);
      say(`      "${next("doctor")}" checks the set-up`);
      // The keychain of a Linux machine with no Secret Service (a server, CI, SSH): install
      // works, and then every login would fail. Say so now, with the way out.
      if (options.backend === "keychain" && io.platform !== "darwin" && io.platform !== "win32") {
        const { probeSecretService } = await import("../stores/secret-service/probe.ts");
        const probe = await probeSecretService(io.env, 5);
        if (probe.status === "fail") {
          const pass = inProfile([
            helper,
            ...helperArgs({ ...options, backend: "pass" }),
            "install",
            "--force",
          ]);
          say(`warning: the keychain cannot be reached here: ${probe.summary}`);
          say(`      on a machine without a desktop session, store in pass instead: "${pass}"`);
        }
      }
    },

    async uninstall(given, { force, dryRun, forget }) {
      const options = await follow(given);
      const { planUninstall, applyUninstall } = await import("../commands/install.ts");
      const plan = planUninstall(io, force);
      const would = dryRun ? "would be " : "";
      const { target, present, keptFor } = plan.helper;
      say(
        !present
          ? `helper: ${target} not installed`
          : keptFor
            ? `helper: ${target} ${would}kept: ${keptFor.join(", ")} still names it ("uninstall --force" removes it anyway)`
            : `helper: ${target} ${would}removed`,
      );
      if (keptFor === undefined)
        for (const link of plan.links) say(`link: ${link} ${would}removed`);
      for (const config of plan.configs) {
        say(
          config.change === "removed"
            ? config.text === "" && config.linkTarget === undefined
              ? `config: ${config.file} ${would}removed: it held only the credentials_helper block`
              : `config: ${config.file}: credentials_helper block ${would}removed`
            : config.change === "absent"
              ? `config: ${config.file} does not exist: nothing to remove`
              : `config: ${config.file} has no credentials_helper "keychain" block`,
        );
        if (config.linkTarget !== undefined && config.change === "removed")
          say(
            `        ${config.file} is a symlink: its target ${config.linkTarget} ${would}edited`,
          );
      }
      // The hosts still stored, read before anything goes; a store that cannot be reached
      // soon only leaves them unnamed.
      let store: CredentialStore | undefined;
      let hosts: readonly string[] | undefined;
      try {
        store = await openStore({ ...options, timeout: Math.min(options.timeout ?? 5, 5) });
        hosts = await store.list();
      } catch {
        hosts = undefined;
      }
      const where = `${storeName(options.backend)} (service "${options.service}")`;
      if (dryRun) {
        if (forget && hosts !== undefined)
          for (const host of hosts) say(`forget: ${host} would be deleted from ${where}`);
        say("dry run: nothing was changed");
        return;
      }
      applyUninstall(plan);
      if (forget && store !== undefined && hosts !== undefined) {
        for (const host of hosts) {
          await store.forget(normalizeHostname(host));
          say(`forgot: ${host} deleted from ${where}`);
        }
        return;
      }
      if (hosts !== undefined && hosts.length === 0) {
        say(`no tokens are stored in ${where}`);
        return;
      }
      // Name a command that still runs now: the executable that ran this, unless it was the
      // file just removed.
      const { executableRemains } = await import("../commands/command-link.ts");
      const survivor =
        io.isSea && executableRemains(io.execPath)
          ? commandLine([io.execPath, ...helperArgs(options), "uninstall", "--forget"], io.platform)
          : undefined;
      const named = hosts === undefined ? "the tokens" : `the tokens for ${hosts.join(", ")}`;
      say(
        survivor === undefined
          ? `${named} stay in ${where}; "uninstall --forget" deletes them with the rest (the executable that would run it is gone: use the one you installed from)`
          : `${named} stay in ${where}; "${survivor}" deletes them`,
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
        say(`nothing to import: no hosts in ${locations.credentialsFiles.join(" or ")}`);
        return;
      }
      const into = storeName(options.backend);
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
            `no credentials stored in ${storeName(options.backend)} (service "${options.service}")`,
          );
      } else for (const host of hosts) say(host);
    },

    async doctor(given, { offline }) {
      // doctor's whole report is on stdout: so is the block it follows.
      const options = await follow(given, say);
      const { runDoctor } = await import("../commands/doctor.ts");
      // Without a way to the network (tests in-process), the token check is left out.
      const tokens = httpsGet && {
        offline,
        get: httpsGet,
        timeoutSeconds: timeoutSeconds(options, io.env),
      };
      const checks = await runDoctor(
        io,
        version,
        options,
        helperArgs(options),
        () => openStore(options),
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
    ...(options.backend === "keychain" ? [] : ["--backend", options.backend]),
    ...(options.service === DEFAULT_SERVICE ? [] : ["--service", options.service]),
  ];
}
