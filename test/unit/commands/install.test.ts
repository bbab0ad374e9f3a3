import assert from "node:assert/strict";
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import {
  applyInstall,
  install as installCommand,
  planInstall,
} from "../../../src/commands/install.ts";
import { DEFAULT_SERVICE } from "../../../src/commands/options.ts";
import { applyUninstall, planUninstall } from "../../../src/commands/uninstall.ts";
import { HELPER_BLOCK_NAME, locationsOf } from "../../../src/commands/cli-config-edits.ts";
import type { Machine } from "../../../src/system/io.ts";
import { CliError, ExitCode } from "../../../src/errors.ts";
import { smallDisk } from "../../support/small-disk.ts";
import { createTempHome } from "./temp-home.ts";
import type { TempHome } from "./temp-home.ts";

// Runs against a temporary HOME. The environment is built from scratch, never taken from
// process.env: the machine running the tests may set TF_CLI_CONFIG_FILE or XDG_* itself.

const BLOCK = 'credentials_helper "keychain" {}\n';
const WORK_BLOCK = 'credentials_helper "keychain" {\n  args = ["--service", "work"]\n}\n';
const OTHER_HELPER = 'credentials_helper "other" {\n  args = ["--profile", "x"]\n}\n';
/** Bytes that are not UTF-8, so a copy through a string would show. */
const EXECUTABLE = Buffer.concat([
  Buffer.from("#!/bin/sh\necho built\n"),
  Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a]),
]);
/** The hint when no user directory is on PATH, with the command that installs again, as printed. */
const noLinkHint = (installAgain: string) =>
  `to run it by name, put ~/.local/bin on PATH (in your shell's profile: export PATH="$HOME/.local/bin:$PATH"), open a new shell and run "${installAgain}": it links the helper there`;
const REFUSED_NOT_SEA = "install copies the built executable, and this is the sources";

interface Sandbox extends TempHome {
  readonly machine: Machine;
  readonly executable: string;
  readonly terraformrc: string;
  readonly tofurc: string;
  readonly plugin: string;
}

function sandbox(t: TestContext, overrides: Partial<Machine> = {}): Sandbox {
  const temp = createTempHome(t, "tfck-install-");
  const executable = path.join(temp.root, "dist", "terraform-credentials-keychain");
  temp.write(executable, EXECUTABLE, 0o755);
  return {
    ...temp,
    executable,
    machine: {
      env: {},
      platform: "linux",
      arch: "x64",
      homedir: temp.home,
      execPath: executable,
      isSea: true,
      ...overrides,
    },
    terraformrc: temp.inHome(".terraformrc"),
    tofurc: temp.inHome(".tofurc"),
    plugin: temp.inHome(".terraform.d", "plugins", "terraform-credentials-keychain"),
  };
}

function install(box: Sandbox, args: readonly string[] = [], force = false) {
  const plan = planInstall(box.machine, args, force);
  applyInstall(plan);
  return plan;
}

/** Every file under `dir`, relative, sorted: to prove nothing else was created. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

function assertRefusedOtherHelper(file: string, run: () => unknown): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof CliError);
    assert.equal(
      error.message,
      `the CLI config ${file} already sets credentials_helper "other" with args ["--profile","x"]`,
    );
    assert.deepEqual(error.fix, { situation: "install-over-other-helper" });
    return true;
  });
}

describe("install", { skip: process.platform === "win32" && "POSIX paths and modes" }, () => {
  test("the block is named keychain", () => {
    assert.equal(HELPER_BLOCK_NAME, "keychain");
  });

  test("fresh HOME: the plan copies the executable and adds the block to ~/.terraformrc for both tools", (t) => {
    const box = sandbox(t);
    const plan = planInstall(box.machine, [], false);
    assert.deepEqual(plan, {
      helper: { source: box.executable, target: box.plugin, change: "installed" },
      block: BLOCK,
      configs: [
        {
          file: box.terraformrc,
          tools: ["Terraform", "OpenTofu"],
          change: "added",
          text: BLOCK,
        },
      ],
      link: { kind: "none", hint: noLinkHint(`${box.plugin} install`) },
    });
    assert.deepEqual(filesUnder(box.home), [], "planning changes nothing");
  });

  test("fresh HOME: the config is created 0600 and the plugin copied 0755 with identical bytes", (t) => {
    const box = sandbox(t);
    install(box);
    assert.equal(box.text(box.terraformrc), BLOCK);
    assert.equal(box.mode(box.terraformrc), 0o600);
    assert.deepEqual(box.bytes(box.plugin), EXECUTABLE);
    assert.equal(box.mode(box.plugin), 0o755);
    assert.deepEqual(filesUnder(box.home), [
      ".terraform.d/plugins/terraform-credentials-keychain",
      ".terraformrc",
    ]);
  });

  test("installing twice: the second plan finds everything unchanged and touches nothing", (t) => {
    const box = sandbox(t);
    install(box);
    const pluginBefore = statSync(box.plugin);
    const configBefore = statSync(box.terraformrc);

    const plan = install(box);
    assert.deepEqual(plan.helper, {
      source: box.executable,
      target: box.plugin,
      change: "unchanged",
    });
    assert.deepEqual(plan.configs, [
      { file: box.terraformrc, tools: ["Terraform", "OpenTofu"], change: "unchanged" },
    ]);
    assert.equal(statSync(box.plugin).ino, pluginBefore.ino, "the plugin was not rewritten");
    assert.equal(statSync(box.terraformrc).ino, configBefore.ino, "the config was not rewritten");
    assert.equal(box.text(box.terraformrc), BLOCK);
  });

  test("a different executable replaces the installed one", (t) => {
    const box = sandbox(t);
    install(box);
    const newer = Buffer.concat([EXECUTABLE, Buffer.from("v2")]);
    box.write(box.executable, newer, 0o755);
    const plan = install(box);
    assert.equal(plan.helper.change, "updated");
    assert.deepEqual(box.bytes(box.plugin), newer);
    assert.equal(box.mode(box.plugin), 0o755);
  });

  test("an existing ~/.terraformrc keeps its content byte for byte and its mode", (t) => {
    const box = sandbox(t);
    const original =
      '# my settings\nplugin_cache_dir = "$HOME/.terraform.d/plugin-cache"\r\n\ndisable_checkpoint = true\n';
    box.write(box.terraformrc, original, 0o640);
    const plan = install(box);
    assert.deepEqual(plan.configs, [
      {
        file: box.terraformrc,
        tools: ["Terraform", "OpenTofu"],
        change: "added",
        text: `${original}\n${BLOCK}`,
      },
    ]);
    assert.equal(box.text(box.terraformrc), `${original}\n${BLOCK}`);
    assert.equal(box.mode(box.terraformrc), 0o640);
  });

  test("a symlinked ~/.terraformrc (a dotfile manager's) is edited in its target, and the link stays", (t) => {
    const box = sandbox(t);
    const target = path.join(box.root, "dotfiles", "terraformrc");
    box.write(target, "disable_checkpoint = true\n", 0o600);
    mkdirSync(path.dirname(box.terraformrc), { recursive: true });
    symlinkSync("../dotfiles/terraformrc", box.terraformrc);
    const plan = install(box);
    assert.equal(plan.configs[0]?.linkTarget, target);
    assert.ok(lstatSync(box.terraformrc).isSymbolicLink(), "the link is still a link");
    assert.equal(readlinkSync(box.terraformrc), "../dotfiles/terraformrc");
    assert.equal(box.text(target), `disable_checkpoint = true\n\n${BLOCK}`);
    const uninstall = planUninstall(box.machine);
    applyUninstall(uninstall);
    assert.ok(lstatSync(box.terraformrc).isSymbolicLink(), "uninstall keeps the link too");
    assert.equal(box.text(target), "disable_checkpoint = true\n");
  });

  test("a dangling symlinked ~/.terraformrc gets its target created, and the link stays", (t) => {
    const box = sandbox(t);
    const target = path.join(box.root, "dotfiles", "terraformrc");
    mkdirSync(path.dirname(box.terraformrc), { recursive: true });
    symlinkSync(target, box.terraformrc);
    const plan = install(box);
    assert.equal(plan.configs[0]?.linkTarget, target);
    assert.ok(lstatSync(box.terraformrc).isSymbolicLink(), "the link is still a link");
    assert.equal(box.text(target), BLOCK);
    assert.equal(box.mode(target), 0o600);
  });

  test("an existing ~/.terraformrc without a final line break gets one before the block", (t) => {
    const box = sandbox(t);
    box.write(box.terraformrc, "disable_checkpoint = true", 0o600);
    install(box);
    assert.equal(box.text(box.terraformrc), `disable_checkpoint = true\n\n${BLOCK}`);
  });

  test("a different credentials_helper is refused and nothing is touched", (t) => {
    const box = sandbox(t);
    const original = `disable_checkpoint = true\n\n${OTHER_HELPER}`;
    box.write(box.terraformrc, original, 0o644);
    assertRefusedOtherHelper(box.terraformrc, () => planInstall(box.machine, [], false));
    assert.equal(box.text(box.terraformrc), original);
    assert.equal(box.mode(box.terraformrc), 0o644);
    assert.equal(existsSync(box.plugin), false, "the plugin is not copied either");
  });

  test("with force a different credentials_helper is replaced in place", (t) => {
    const box = sandbox(t);
    box.write(box.terraformrc, `disable_checkpoint = true\n\n${OTHER_HELPER}# end\n`, 0o644);
    const plan = install(box, [], true);
    assert.equal(plan.configs[0]?.change, "replaced");
    assert.equal(box.text(box.terraformrc), `disable_checkpoint = true\n\n${BLOCK}# end\n`);
    assert.equal(box.mode(box.terraformrc), 0o644);
  });

  test("--service args are rendered into the block", (t) => {
    const box = sandbox(t);
    const plan = install(box, ["--service", "work"]);
    assert.equal(plan.block, WORK_BLOCK);
    assert.equal(box.text(box.terraformrc), WORK_BLOCK);
  });

  test("installing with other args over our own block needs force", (t) => {
    const box = sandbox(t);
    install(box);
    assert.throws(
      () => planInstall(box.machine, ["--service", "work"], false),
      (error: unknown) =>
        error instanceof CliError &&
        error.message ===
          `the CLI config ${box.terraformrc} already sets credentials_helper "keychain"`,
    );
    install(box, ["--service", "work"], true);
    assert.equal(box.text(box.terraformrc), WORK_BLOCK);
  });

  test("TF_CLI_CONFIG_FILE is the only config file edited, for both tools", (t) => {
    const box = sandbox(t);
    const chosen = path.join(box.root, "ci", "cli.tfrc");
    const box2 = { ...box, machine: { ...box.machine, env: { TF_CLI_CONFIG_FILE: chosen } } };
    box.write(box.tofurc, "# tofu\n", 0o600);
    const plan = install(box2);
    assert.deepEqual(plan.configs, [
      { file: chosen, tools: ["Terraform", "OpenTofu"], change: "added", text: BLOCK },
    ]);
    assert.equal(box.text(chosen), BLOCK);
    assert.equal(box.mode(chosen), 0o600);
    assert.equal(existsSync(box.terraformrc), false, "~/.terraformrc is not created");
    assert.equal(box.text(box.tofurc), "# tofu\n", "~/.tofurc is not touched");
    assert.deepEqual(box.bytes(box.plugin), EXECUTABLE, "the plugin still goes to HOME");
  });

  test("an empty TF_CLI_CONFIG_FILE is ignored", (t) => {
    const box = sandbox(t);
    const box2 = { ...box, machine: { ...box.machine, env: { TF_CLI_CONFIG_FILE: "" } } };
    const plan = install(box2);
    assert.deepEqual(
      plan.configs.map((config) => config.file),
      [box.terraformrc],
    );
  });

  test("~/.tofurc present: ~/.terraformrc is edited for Terraform and ~/.tofurc for OpenTofu", (t) => {
    const box = sandbox(t);
    box.write(box.tofurc, "# tofu settings\n", 0o640);
    const plan = install(box);
    assert.deepEqual(plan.configs, [
      { file: box.terraformrc, tools: ["Terraform"], change: "added", text: BLOCK },
      {
        file: box.tofurc,
        tools: ["OpenTofu"],
        change: "added",
        text: `# tofu settings\n\n${BLOCK}`,
      },
    ]);
    assert.equal(box.text(box.terraformrc), BLOCK);
    assert.equal(box.mode(box.terraformrc), 0o600);
    assert.equal(box.text(box.tofurc), `# tofu settings\n\n${BLOCK}`);
    assert.equal(box.mode(box.tofurc), 0o640);
  });

  test("~/.terraformrc and ~/.tofurc both present: each is edited once with its tool", (t) => {
    const box = sandbox(t);
    box.write(box.terraformrc, "# terraform\n", 0o600);
    box.write(box.tofurc, `# tofu\n${BLOCK}`, 0o600);
    const plan = install(box);
    assert.deepEqual(plan.configs, [
      {
        file: box.terraformrc,
        tools: ["Terraform"],
        change: "added",
        text: `# terraform\n\n${BLOCK}`,
      },
      { file: box.tofurc, tools: ["OpenTofu"], change: "unchanged" },
    ]);
    assert.equal(box.text(box.tofurc), `# tofu\n${BLOCK}`);
  });

  test("a different helper in ~/.tofurc alone is refused, and ~/.terraformrc is not created", (t) => {
    const box = sandbox(t);
    box.write(box.tofurc, OTHER_HELPER, 0o600);
    assertRefusedOtherHelper(box.tofurc, () => planInstall(box.machine, [], false));
    assert.equal(existsSync(box.terraformrc), false);
    assert.equal(box.text(box.tofurc), OTHER_HELPER);
  });

  test("XDG_CONFIG_HOME without any config file: ~/.terraformrc serves both tools", (t) => {
    const box = sandbox(t);
    const env = { XDG_CONFIG_HOME: path.join(box.root, "xdg-config") };
    const plan = install({ ...box, machine: { ...box.machine, env } });
    assert.deepEqual(plan.configs, [
      { file: box.terraformrc, tools: ["Terraform", "OpenTofu"], change: "added", text: BLOCK },
    ]);
    const after = locationsOf({ ...box.machine, env });
    assert.equal(after.tofuConfigFile, box.terraformrc, "OpenTofu now reads ~/.terraformrc");
  });

  test("an OpenTofu config in $XDG_CONFIG_HOME/opentofu/tofurc stays the file OpenTofu reads after install", (t) => {
    const box = sandbox(t);
    const xdg = path.join(box.root, "xdg-config");
    const tofuXdg = path.join(xdg, "opentofu", "tofurc");
    box.write(tofuXdg, "# my tofu settings\n", 0o600);
    const machine = { ...box.machine, env: { XDG_CONFIG_HOME: xdg } };
    assert.equal(locationsOf(machine).tofuConfigFile, tofuXdg, "before: OpenTofu reads tofurc");
    const plan = planInstall(machine, [], false);
    applyInstall(plan);
    assert.equal(box.text(tofuXdg), `# my tofu settings\n\n${BLOCK}`);
    assert.equal(locationsOf(machine).tofuConfigFile, tofuXdg, "after: still tofurc");
    // ~/.terraformrc would take OpenTofu over: it is not created, and install says so.
    assert.equal(existsSync(box.terraformrc), false);
    assert.deepEqual(
      plan.configs.map(({ file, tools }) => ({ file, tools })),
      [{ file: tofuXdg, tools: ["OpenTofu"] }],
    );
    assert.deepEqual(plan.notes, [
      `Terraform not set up: creating ${box.terraformrc} would make OpenTofu stop reading ${tofuXdg}; for Terraform set TF_CLI_CONFIG_FILE=${tofuXdg}`,
    ]);
  });

  test("a credentials_helper in ~/.terraform.d/*.tfrc is refused, with or without force", (t) => {
    const box = sandbox(t);
    const extra = box.inHome(".terraform.d", "extra.tfrc");
    box.write(extra, 'credentials_helper "other" {}\n', 0o600);
    for (const force of [false, true]) {
      assert.throws(
        () => planInstall(box.machine, [], force),
        new CliError(
          `${extra} sets credentials_helper "other", and Terraform reads that file too: with a second helper it refuses its CLI config and runs either; remove that block from ${extra} and install again`,
        ),
      );
    }
    assert.equal(existsSync(box.terraformrc), false);
  });

  test("uninstall keeps the executable while a ~/.terraform.d/*.tfrc.json still names it", (t) => {
    const box = sandbox(t);
    install(box);
    const extra = box.inHome(".terraform.d", "team.tfrc.json");
    box.write(extra, JSON.stringify({ credentials_helper: { keychain: {} } }), 0o600);
    const plan = planUninstall(box.machine);
    assert.deepEqual(plan.helper.keptFor, [extra]);
  });

  test("as root in another user's HOME (sudo -E): refused, nothing created", (t) => {
    const box = sandbox(t);
    if (process.getuid?.() !== 0) {
      t.skip("needs root to give HOME to another user");
      return;
    }
    chownSync(box.home, 65534, 65534);
    const message = `this runs as root, but HOME (${box.home}) belongs to user id 65534: what it wrote there would belong to root, and that user's Terraform could not use it; run it as that user, without sudo`;
    assert.throws(() => planInstall({ ...box.machine, uid: 0 }, [], false), new CliError(message));
    assert.throws(() => planUninstall({ ...box.machine, uid: 0 }), new CliError(message));
    assert.deepEqual(filesUnder(box.home), []);
    // The same user, or root in root's own HOME, goes ahead.
    assert.doesNotThrow(() => planInstall({ ...box.machine, uid: 65534 }, [], false));
  });

  test("a CLI config that is a device is refused, and stays a device", (t) => {
    const box = sandbox(t);
    const device = path.join(box.root, "null");
    const made = spawnSync("mknod", [device, "c", "1", "3"], { encoding: "utf8" });
    if (made.status !== 0) {
      t.skip(`mknod is not permitted here (${made.stderr.trim()})`);
      return;
    }
    const machine = { ...box.machine, env: { TF_CLI_CONFIG_FILE: device } };
    assert.throws(() => install({ ...box, machine }), /is a character device, not a regular file/);
    assert.ok(lstatSync(device).isCharacterDevice());
    assert.equal(existsSync(box.plugin), false);
  });

  test("not a single executable: refused with how to build one, nothing touched", async (t) => {
    const box = sandbox(t, { isSea: false });
    const options = { service: DEFAULT_SERVICE, backend: "keychain" } as const;
    await assert.rejects(
      installCommand(box.machine, options, { force: false, dryRun: false }),
      (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.equal(error.message, REFUSED_NOT_SEA);
        assert.deepEqual(error.fix, { situation: "install-from-source" });
        assert.equal(error.exitCode, ExitCode.Failure);
        return true;
      },
    );
    assert.deepEqual(filesUnder(box.home), []);
  });

  // What a nearly full disk did before: ~/.terraformrc cut to 8 KB with its credentials
  // block gone, and a partial executable reported as installed.
  for (const [what, free] of [
    ["the config", 4 * 1024],
    ["the executable", 40 * 1024],
  ] as const) {
    test(`a disk too full for ${what}: one line naming the file, and every file as it was`, (t) => {
      const disk = smallDisk(t, 512);
      if (disk === undefined) return;
      const home = path.join(disk.dir, "home");
      const terraformrc = path.join(home, ".terraformrc");
      const config = `credentials "app.terraform.io" {\n  token = "KEEP"\n}\n${"# x\n".repeat(6000)}`;
      mkdirSync(home);
      writeFileSync(terraformrc, config, { mode: 0o600 });
      const box = sandbox(t);
      // The executable lives off the small disk; only its copy has to fit on it.
      writeFileSync(box.executable, Buffer.alloc(96 * 1024, 7));
      const plan = planInstall({ ...box.machine, homedir: home }, [], false);
      disk.fill(free);
      assert.throws(
        () => applyInstall(plan),
        (error: unknown) =>
          error instanceof CliError &&
          /^could not write \S+: no space left on the device \(ENOSPC\); it was left as it was$/.test(
            error.message,
          ),
      );
      assert.equal(readFileSync(terraformrc, "utf8"), config);
      assert.deepEqual(filesUnder(home), [".terraformrc"], "no plugin, no temp file");
    });
  }

  test("an immutable ~/.terraformrc: the error names it, not a temp file, and no plugin is left", (t) => {
    const disk = smallDisk(t, 512);
    if (disk === undefined) return;
    const box = sandbox(t);
    const home = path.join(disk.dir, "home");
    const terraformrc = path.join(home, ".terraformrc");
    mkdirSync(home);
    writeFileSync(terraformrc, "# mine\n");
    const plan = planInstall({ ...box.machine, homedir: home }, [], false);
    const immutable = spawnSync("chattr", ["+i", terraformrc], { encoding: "utf8" });
    if (immutable.status !== 0) {
      t.skip(`chattr +i is not possible here (${immutable.stderr.trim()})`);
      return;
    }
    t.after(() => spawnSync("chattr", ["-i", terraformrc]));
    assert.throws(
      () => applyInstall(plan),
      new CliError(
        `could not write ${terraformrc}: operation not permitted (EPERM); it was left as it was`,
      ),
    );
    assert.equal(readFileSync(terraformrc, "utf8"), "# mine\n");
    assert.deepEqual(filesUnder(home), [".terraformrc"]);
  });
});

describe("uninstall", { skip: process.platform === "win32" && "POSIX paths and modes" }, () => {
  test("restores the original text and mode of ~/.terraformrc and removes the plugin", (t) => {
    const box = sandbox(t);
    const original = '# mine\r\nplugin_cache_dir = "/var/cache/terraform"\n';
    box.write(box.terraformrc, original, 0o640);
    install(box);

    const plan = planUninstall(box.machine);
    assert.deepEqual(plan, {
      helper: { target: box.plugin, present: true },
      configs: [
        {
          file: box.terraformrc,
          tools: ["Terraform", "OpenTofu"],
          change: "removed",
          text: original,
        },
      ],
      links: [],
    });
    applyUninstall(plan);
    assert.equal(box.text(box.terraformrc), original);
    assert.equal(box.mode(box.terraformrc), 0o640);
    assert.equal(existsSync(box.plugin), false);
  });

  test("with ~/.tofurc: both files get their original text back", (t) => {
    const box = sandbox(t);
    box.write(box.terraformrc, "# terraform\n", 0o600);
    box.write(box.tofurc, "# tofu\n", 0o644);
    install(box, ["--service", "work"]);
    assert.equal(box.text(box.tofurc), `# tofu\n\n${WORK_BLOCK}`);

    const plan = planUninstall(box.machine);
    assert.deepEqual(
      plan.configs.map(({ file, tools, change }) => ({ file, tools, change })),
      [
        { file: box.terraformrc, tools: ["Terraform"], change: "removed" },
        { file: box.tofurc, tools: ["OpenTofu"], change: "removed" },
      ],
    );
    applyUninstall(plan);
    assert.equal(box.text(box.terraformrc), "# terraform\n");
    assert.equal(box.text(box.tofurc), "# tofu\n");
    assert.equal(box.mode(box.tofurc), 0o644);
    assert.equal(existsSync(box.plugin), false);
  });

  test("nothing installed: the plan changes nothing", (t) => {
    const box = sandbox(t);
    box.write(box.terraformrc, "# nothing of ours\n", 0o600);
    const plan = planUninstall(box.machine);
    assert.deepEqual(plan, {
      helper: { target: box.plugin, present: false },
      configs: [{ file: box.terraformrc, tools: ["Terraform", "OpenTofu"], change: "unchanged" }],
      links: [],
    });
    applyUninstall(plan);
    assert.equal(box.text(box.terraformrc), "# nothing of ours\n");
  });

  test("another helper's block is left alone", (t) => {
    const box = sandbox(t);
    box.write(box.terraformrc, OTHER_HELPER, 0o600);
    const plan = planUninstall(box.machine);
    assert.equal(plan.configs[0]?.change, "unchanged");
    applyUninstall(plan);
    assert.equal(box.text(box.terraformrc), OTHER_HELPER);
  });

  test("a missing config file is not created", (t) => {
    const box = sandbox(t);
    applyUninstall(planUninstall(box.machine));
    assert.deepEqual(filesUnder(box.home), []);
  });

  test("a ~/.terraformrc left empty is removed, so OpenTofu goes back to its XDG tofurc", (t) => {
    const box = sandbox(t);
    const xdg = path.join(box.root, "xdg-config");
    const machine = { ...box.machine, env: { XDG_CONFIG_HOME: xdg } };
    install({ ...box, machine });
    assert.equal(box.text(box.terraformrc), BLOCK);
    applyUninstall(planUninstall(machine));
    assert.equal(existsSync(box.terraformrc), false, "no 0-byte ~/.terraformrc left behind");
    assert.equal(locationsOf(machine).tofuConfigFile, path.join(xdg, "opentofu", "tofurc"));
  });

  test("two profiles: uninstalling one keeps the executable the other still names", (t) => {
    const box = sandbox(t);
    const work = box.inHome(".terraformrc-work");
    const personal = box.inHome(".terraformrc-personal");
    const as = (file: string) => ({ ...box.machine, env: { TF_CLI_CONFIG_FILE: file } });
    applyInstall(planInstall(as(work), ["--service", "work"], false));
    applyInstall(planInstall(as(personal), ["--service", "personal"], false));

    const plan = planUninstall(as(work));
    assert.deepEqual(plan.helper, { target: box.plugin, present: true, keptFor: [personal] });
    applyUninstall(plan);
    assert.equal(existsSync(box.plugin), true, "the other profile still works");
    assert.equal(box.text(work), undefined);

    const last = planUninstall(as(personal));
    assert.deepEqual(last.helper, { target: box.plugin, present: true });
    applyUninstall(last);
    assert.equal(existsSync(box.plugin), false);
  });

  test("with force the executable goes even when another config names it", (t) => {
    const box = sandbox(t);
    const personal = box.inHome(".terraformrc-personal");
    box.write(personal, WORK_BLOCK, 0o600);
    install(box);
    const plan = planUninstall(box.machine, true);
    assert.deepEqual(plan.helper, { target: box.plugin, present: true });
    applyUninstall(plan);
    assert.equal(existsSync(box.plugin), false);
    assert.equal(box.text(personal), WORK_BLOCK, "only the chosen config is edited");
  });

  test("uninstall works from a build that is not a single executable", (t) => {
    const box = sandbox(t);
    install(box);
    const plan = planUninstall({ ...box.machine, isSea: false });
    applyUninstall(plan);
    assert.equal(existsSync(box.plugin), false);
  });
});

describe("the command at hand", { skip: process.platform === "win32" && "POSIX symlinks" }, () => {
  const onPath = (box: Sandbox, ...dirs: string[]): Sandbox => ({
    ...box,
    machine: { ...box.machine, env: { PATH: [...dirs, "/usr/bin", "/bin"].join(":") } },
  });
  const localBin = (box: Sandbox) => box.inHome(".local", "bin");
  const linkIn = (dir: string) => path.join(dir, "terraform-credentials-keychain");

  test("~/.local/bin on PATH (not yet made): install makes it and links the helper there", (t) => {
    const box = sandbox(t);
    const withLocal = onPath(box, localBin(box));
    const plan = planInstall(withLocal.machine, [], false);
    assert.deepEqual(plan.link, { kind: "link", path: linkIn(localBin(box)), change: "added" });
    applyInstall(plan);
    assert.equal(lstatSync(linkIn(localBin(box))).isSymbolicLink(), true);
    assert.equal(readlinkSync(linkIn(localBin(box))), box.plugin);
    assert.deepEqual(readFileSync(linkIn(localBin(box))), EXECUTABLE);
    assert.deepEqual(planInstall(withLocal.machine, [], false).link, {
      kind: "link",
      path: linkIn(localBin(box)),
      change: "unchanged",
    });
  });

  test("~/bin on PATH and ~/.local/bin not: the link goes into ~/bin", (t) => {
    const base = sandbox(t);
    const box = onPath(base, base.inHome("bin"));
    assert.deepEqual(planInstall(box.machine, [], false).link, {
      kind: "link",
      path: linkIn(base.inHome("bin")),
      change: "added",
    });
  });

  test("no user directory on PATH: nothing is linked, and one line says how", (t) => {
    const box = onPath(sandbox(t));
    const plan = planInstall(box.machine, [], false);
    assert.deepEqual(plan.link, { kind: "none", hint: noLinkHint(`${box.plugin} install`) });
    applyInstall(plan);
    assert.equal(existsSync(localBin(box)), false);
  });

  test("a file of that name already there is someone else's: left alone", (t) => {
    const base = sandbox(t);
    const box = onPath(base, localBin(base));
    base.write(linkIn(localBin(base)), "#!/bin/sh\necho npm launcher\n", 0o755);
    const plan = planInstall(box.machine, [], false);
    assert.deepEqual(plan.link, { kind: "taken", path: linkIn(localBin(base)) });
    applyInstall(plan);
    assert.equal(base.text(linkIn(localBin(base))), "#!/bin/sh\necho npm launcher\n");
  });

  test("a dangling link of that name (a deleted copy) is replaced", (t) => {
    const base = sandbox(t);
    const box = onPath(base, localBin(base));
    mkdirSync(localBin(base), { recursive: true });
    symlinkSync(path.join(base.root, "gone"), linkIn(localBin(base)));
    install(box);
    assert.equal(readlinkSync(linkIn(localBin(base))), base.plugin);
  });

  test("uninstall removes the link it made, and only a link to the installed file", (t) => {
    const base = sandbox(t);
    const box = onPath(base, localBin(base));
    install(box);
    const other = base.inHome("bin", "terraform-credentials-keychain");
    mkdirSync(path.dirname(other), { recursive: true });
    symlinkSync(base.executable, other);
    // Whether or not the directory is still on PATH.
    const plan = planUninstall({ ...box.machine, env: {} });
    assert.deepEqual(plan.links, [linkIn(localBin(base))]);
    applyUninstall(plan);
    assert.equal(existsSync(linkIn(localBin(base))), false);
    assert.equal(lstatSync(other).isSymbolicLink(), true, "a link to another file stays");
    assert.equal(existsSync(base.plugin), false);
  });

  test("uninstall keeps the link with the executable when another profile still names it", (t) => {
    const base = sandbox(t);
    const box = onPath(base, localBin(base));
    const profile = (file: string) => ({
      ...box.machine,
      env: { ...box.machine.env, TF_CLI_CONFIG_FILE: file },
    });
    applyInstall(
      planInstall(profile(base.inHome(".terraformrc-work")), ["--service", "work"], false),
    );
    applyInstall(
      planInstall(profile(base.inHome(".terraformrc-home")), ["--service", "home"], false),
    );
    applyUninstall(planUninstall(profile(base.inHome(".terraformrc-work"))));
    assert.equal(existsSync(linkIn(localBin(base))), true);
    assert.equal(existsSync(base.plugin), true);
  });
});

describe("helperCommand", { skip: process.platform === "win32" && "POSIX symlinks" }, () => {
  test("by name when PATH finds the installed file first, else by its path", async (t) => {
    const { helperCommand } = await import("../../../src/commands/command-link.ts");
    const box = sandbox(t);
    const bin = box.inHome(".local", "bin");
    const machine = { ...box.machine, env: { PATH: `${bin}:/usr/bin` } };
    install(box);
    assert.equal(helperCommand(machine, box.plugin), box.plugin, "not linked yet");
    applyInstall(planInstall(machine, [], false));
    assert.equal(helperCommand(machine, box.plugin), "terraform-credentials-keychain");
    const earlier = path.join(box.root, "earlier");
    box.write(path.join(earlier, "terraform-credentials-keychain"), "#!/bin/sh\n", 0o755);
    const shadowed = { ...machine, env: { PATH: `${earlier}:${bin}` } };
    assert.equal(helperCommand(shadowed, box.plugin), box.plugin, "another file comes first");
  });

  test("Windows: by name when the plugin folder is on PATH, else a PowerShell line to add it", async () => {
    const { helperCommand, planCommandLink } =
      await import("../../../src/commands/command-link.ts");
    const target =
      "C:\\Users\\u\\AppData\\Roaming\\terraform.d\\plugins\\terraform-credentials-keychain.exe";
    const machine: Machine = {
      env: { Path: "C:\\Windows;c:\\users\\u\\appdata\\roaming\\terraform.d\\plugins" },
      platform: "win32",
      arch: "x64",
      homedir: "C:\\Users\\u",
      execPath: target,
      isSea: true,
    };
    assert.deepEqual(planCommandLink(machine, target, "install"), { kind: "on-path" });
    const off = { ...machine, env: { Path: "C:\\Windows" } };
    const plan = planCommandLink(off, target, "install");
    assert.ok(plan.kind === "none");
    assert.match(
      plan.hint,
      /\[Environment\]::SetEnvironmentVariable\('Path', \[Environment\]::GetEnvironmentVariable\('Path', 'User'\) \+ ';C:\\Users\\u\\AppData\\Roaming\\terraform\.d\\plugins', 'User'\)/,
    );
    assert.equal(helperCommand(off, target), target);
  });
});
