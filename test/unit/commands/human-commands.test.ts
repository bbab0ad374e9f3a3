import { fixFor } from "../../../src/fixes.ts";
import assert from "node:assert/strict";
import { existsSync, readlinkSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import type { GlobalOptions } from "../../../src/commands/options.ts";
import { run } from "../../../src/cli/run.ts";
import type { Dependencies } from "../../../src/cli/run.ts";
import { CliError } from "../../../src/errors.ts";
import { createFakeIo } from "../../support/fake-io.ts";
import type { FakeIoOptions } from "../../support/fake-io.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import type { MemoryStore } from "../../support/memory-store.ts";
import { createTempHome, type TempHome } from "./temp-home.ts";

// The commands for people, rendered through run() with a fake Io: stdout, stderr and the
// exit code are asserted exactly.

const VERSION = "0.0.0-test";
const SECRET = "SECRET-hhhh.atlasv1.4444";
/** The block install writes: both options that name the store, so Terraform's calls read no file. */
const BLOCK =
  'credentials_helper "keychain" {\n  args = ["--backend", "keychain", "--service", "terraform-credentials"]\n}\n';
/** A block an earlier version wrote: it names no store, so a call with no options reads it. */
const EMPTY_BLOCK = 'credentials_helper "keychain" {}\n';
/** The note when no user directory is on PATH, with the command that installs again, as printed. */
const noLinkNote = (installAgain: string) =>
  `note: to run it by name, put ~/.local/bin on PATH (in your shell's profile: export PATH="$HOME/.local/bin:$PATH"), open a new shell and run "${installAgain}": it links the helper there`;

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `argv` with `store` behind every service; records the options it was opened with. */
async function invoke(
  argv: readonly string[],
  store: MemoryStore,
  ioOptions: FakeIoOptions = {},
  opened: GlobalOptions[] = [],
): Promise<Outcome> {
  const io = createFakeIo(ioOptions);
  const deps: Dependencies = {
    version: VERSION,
    openStore(options) {
      opened.push(options);
      return store;
    },
    protectSecrets: async () => {},
    runCommand: () => Promise.resolve({ kind: "exited", code: 0 }),
  };
  const code = await run(argv, io, deps);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

describe("list", () => {
  const twoHosts = () =>
    createMemoryStore({ "tfe.example.com": "{}", "app.terraform.io": `{"token":"${SECRET}"}` });

  test("prints one host per line, sorted, and never a token", async () => {
    assert.deepEqual(await invoke(["list"], twoHosts()), {
      code: 0,
      stdout: "app.terraform.io\ntfe.example.com\n",
      stderr: "",
    });
  });

  test("no hosts, at a terminal: nothing on stdout, and stderr says so", async () => {
    assert.deepEqual(await invoke(["list"], createMemoryStore(), { stdoutIsTTY: true }), {
      code: 0,
      stdout: "",
      stderr: 'no credentials stored in the keychain (service "terraform-credentials")\n',
    });
  });

  test("no hosts, into a pipe: nothing at all, for the script that reads it", async () => {
    assert.deepEqual(await invoke(["list"], createMemoryStore()), {
      code: 0,
      stdout: "",
      stderr: "",
    });
  });

  test("--json prints one JSON array", async () => {
    assert.deepEqual(await invoke(["list", "--json"], twoHosts()), {
      code: 0,
      stdout: '["app.terraform.io","tfe.example.com"]\n',
      stderr: "",
    });
  });

  test("--json with no hosts prints []", async () => {
    assert.deepEqual(await invoke(["list", "--json"], createMemoryStore()), {
      code: 0,
      stdout: "[]\n",
      stderr: "",
    });
  });

  test("--service before the verb selects the store", async () => {
    const opened: GlobalOptions[] = [];
    await invoke(["--service", "work", "list"], createMemoryStore(), {}, opened);
    assert.deepEqual(opened, [{ service: "work", backend: "keychain" }]);
  });

  test("a failing store: its message on stderr, exit 1, nothing on stdout", async () => {
    const store = createMemoryStore();
    store.failNext(new CliError("the keychain is locked: unlock it and try again"), "list");
    assert.deepEqual(await invoke(["list"], store), {
      code: 1,
      stdout: "",
      stderr: "the keychain is locked: unlock it and try again\n",
    });
  });
});

describe("install", { skip: process.platform === "win32" && "POSIX paths" }, () => {
  test("not a single executable: refused with how to build one, exit 1", async () => {
    const opened: GlobalOptions[] = [];
    const outcome = await invoke(["install"], createMemoryStore(), { isSea: false }, opened);
    assert.deepEqual(outcome, {
      code: 1,
      stdout: "",
      stderr:
        'install copies the built executable, and this is the sources; run "npm run build && dist/terraform-credentials-keychain install" (builds the executable and installs it)\n',
    });
    assert.deepEqual(opened, [], "the store is not opened");
  });

  function temp(t: TestContext) {
    const box = createTempHome(t, "tfck-human-");
    const executable = path.join(box.root, "dist", "terraform-credentials-keychain");
    box.write(executable, "#!/bin/sh\necho built\n", 0o755);
    // macOS: its keychain is always there, so install has no warning to add (on Linux,
    // install probes the Secret Service: see the test of that below).
    const ioOptions: FakeIoOptions = {
      env: {},
      platform: "darwin",
      arch: "x64",
      homedir: box.home,
      execPath: executable,
      isSea: true,
    };
    const target = box.inHome(".terraform.d", "plugins", "terraform-credentials-keychain");
    return { box, ioOptions, target, terraformrc: box.inHome(".terraformrc") };
  }

  test("Linux without a Secret Service: install warns, and suggests no store that does not work either", async (t) => {
    const { ioOptions } = temp(t);
    const outcome = await invoke(["install"], createMemoryStore(), {
      ...ioOptions,
      env: { PATH: "" },
      platform: "linux",
    });
    assert.equal(outcome.code, 0);
    assert.match(
      outcome.stdout,
      /^warning: the keychain cannot store tokens here yet: no D-Bus session bus.*\n {6}fix: run ".* --backend pass install --force" .*\n$/m,
    );
    assert.doesNotMatch(outcome.stdout, /instead/, "pass is not installed either");
  });

  test("--backend pass where pass is not installed: install warns, with doctor's fix", async (t) => {
    const { ioOptions } = temp(t);
    const outcome = await invoke(["--backend", "pass", "install"], createMemoryStore(), {
      ...ioOptions,
      env: { ...ioOptions.env, PATH: "" },
      platform: "linux",
    });
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.ok(
      outcome.stdout.endsWith(
        [
          "warning: pass cannot store tokens here yet: pass is not installed (not on PATH)",
          `      fix: ${fixFor("pass-missing").effect}`,
          "",
        ].join("\n"),
      ),
      outcome.stdout,
    );
  });

  test("not a single executable, --dry-run: the refusals a real run would meet, before any build", async (t) => {
    const { box, ioOptions, terraformrc } = temp(t);
    box.write(terraformrc, BLOCK);
    const outcome = await invoke(
      ["--backend", "pass", "install", "--dry-run"],
      createMemoryStore(),
      {
        ...ioOptions,
        isSea: false,
      },
    );
    assert.deepEqual(outcome, {
      code: 1,
      stdout: "",
      // From the sources the refusal names no command: npm run setup gives its own.
      stderr: `the CLI config ${terraformrc} already sets credentials_helper "keychain" with args ["--backend","keychain","--service","terraform-credentials"]\n`,
    });
  });

  test("--dry-run says what would be done and changes nothing", async (t) => {
    const { box, ioOptions, target, terraformrc } = temp(t);
    const outcome = await invoke(
      ["--service", "work", "install", "--dry-run"],
      createMemoryStore(),
      ioOptions,
    );
    assert.deepEqual(outcome, {
      code: 0,
      stdout: [
        `helper: ${target} would be installed`,
        `config: ${terraformrc} (Terraform and OpenTofu): credentials_helper block would be added`,
        noLinkNote(`${target} --backend keychain --service work install`),
        "the block:",
        '  credentials_helper "keychain" {',
        '    args = ["--backend", "keychain", "--service", "work"]',
        "  }",
        "dry run: nothing was changed",
        "",
      ].join("\n"),
      stderr: "",
    });
    assert.equal(existsSync(target), false);
    assert.equal(existsSync(terraformrc), false);
    assert.equal(box.text(terraformrc), undefined);
  });

  test("install reports each change and what to do next; again, that all is up to date", async (t) => {
    const { box, ioOptions, target, terraformrc } = temp(t);
    const next = [
      'next: "terraform login HOST" (or "tofu login HOST") stores the token in the keychain;',
      `      "${target} import" moves tokens already in credentials.tfrc.json or credentials blocks;`,
      `      "${target} doctor" checks the set-up`,
      "",
    ];
    assert.deepEqual(await invoke(["install"], createMemoryStore(), ioOptions), {
      code: 0,
      stdout: [
        `helper: ${target} installed`,
        `config: ${terraformrc} (Terraform and OpenTofu): credentials_helper block added`,
        noLinkNote(`${target} --backend keychain --service terraform-credentials install`),
        ...next,
      ].join("\n"),
      stderr: "",
    });
    assert.equal(box.text(terraformrc), BLOCK);

    assert.deepEqual(await invoke(["install"], createMemoryStore(), ioOptions), {
      code: 0,
      stdout: [
        `helper: ${target} already up to date`,
        `config: ${terraformrc} (Terraform and OpenTofu) already has the block`,
        noLinkNote(`${target} --backend keychain --service terraform-credentials install`),
        ...next,
      ].join("\n"),
      stderr: "",
    });
  });

  test("with ~/.local/bin on PATH: install links the helper there and the next steps use its name", async (t) => {
    const { box, ioOptions, target, terraformrc } = temp(t);
    const link = box.inHome(".local", "bin", "terraform-credentials-keychain");
    const onPath = { ...ioOptions, env: { PATH: `${box.inHome(".local", "bin")}:/usr/bin:/bin` } };
    const next = [
      'next: "terraform login HOST" (or "tofu login HOST") stores the token in the keychain;',
      '      "terraform-credentials-keychain import" moves tokens already in credentials.tfrc.json or credentials blocks;',
      '      "terraform-credentials-keychain doctor" checks the set-up',
      "",
    ];
    assert.deepEqual(await invoke(["install"], createMemoryStore(), onPath), {
      code: 0,
      stdout: [
        `helper: ${target} installed`,
        `config: ${terraformrc} (Terraform and OpenTofu): credentials_helper block added`,
        `link: ${link} added, leading to it: PATH finds it by name`,
        ...next,
      ].join("\n"),
      stderr: "",
    });
    assert.equal(readlinkSync(link), target);
    const again = await invoke(["install"], createMemoryStore(), onPath);
    assert.ok(again.stdout.includes(`link: ${link} already leads to it\n`), again.stdout);

    const uninstalled = await invoke(["uninstall"], createMemoryStore(), onPath);
    assert.ok(uninstalled.stdout.includes(`link: ${link} removed\n`), uninstalled.stdout);
    assert.equal(existsSync(link), false);
  });

  test("a profile's next steps carry its TF_CLI_CONFIG_FILE, so that login lands in it", async (t) => {
    const { box, ioOptions, target } = temp(t);
    const profile = box.inHome(".terraformrc-work");
    const outcome = await invoke(["--service", "work", "install"], createMemoryStore(), {
      ...ioOptions,
      env: { TF_CLI_CONFIG_FILE: profile },
    });
    const lines = outcome.stdout.split("\n");
    assert.ok(
      lines.includes(
        `next: "TF_CLI_CONFIG_FILE=${profile} terraform login HOST" (or "TF_CLI_CONFIG_FILE=${profile} tofu login HOST") stores the token in the keychain;`,
      ),
      outcome.stdout,
    );
    assert.ok(
      lines.includes(
        `      "TF_CLI_CONFIG_FILE=${profile} ${target} --service work doctor" checks the set-up`,
      ),
      outcome.stdout,
    );
  });

  test("a different helper: refused on stderr, exit 1, nothing on stdout", async (t) => {
    const { box, ioOptions, terraformrc } = temp(t);
    box.write(terraformrc, 'credentials_helper "other" {}\n');
    assert.deepEqual(await invoke(["install"], createMemoryStore(), ioOptions), {
      code: 1,
      stdout: "",
      stderr: `the CLI config ${terraformrc} already sets credentials_helper "other"; run "${ioOptions.execPath ?? ""} install --force" (replaces that block with this helper's)\n`,
    });
    assert.equal(box.text(terraformrc), 'credentials_helper "other" {}\n');
  });

  test("--force before install is read as install --force", async (t) => {
    const { box, ioOptions, terraformrc } = temp(t);
    box.write(terraformrc, 'credentials_helper "other" {}\n');
    const outcome = await invoke(
      ["--force", "install", "--dry-run"],
      createMemoryStore(),
      ioOptions,
    );
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.ok(
      outcome.stdout.includes(
        `config: ${terraformrc} (Terraform and OpenTofu): credentials_helper block would be replaced`,
      ),
      outcome.stdout,
    );
  });

  test("uninstall reports what it removed, and that no tokens are stored", async (t) => {
    const { box, ioOptions, target, terraformrc } = temp(t);
    box.write(terraformrc, "# mine\n", 0o600);
    await invoke(["install"], createMemoryStore(), ioOptions);
    assert.deepEqual(await invoke(["uninstall"], createMemoryStore(), ioOptions), {
      code: 0,
      stdout: [
        `helper: ${target} removed`,
        `config: ${terraformrc}: credentials_helper block removed`,
        'no tokens are stored in the keychain (service "terraform-credentials")',
        "",
      ].join("\n"),
      stderr: "",
    });
    assert.equal(box.text(terraformrc), "# mine\n");
  });

  test("uninstall says when it removed the whole file install made, and when there is none", async (t) => {
    const { ioOptions, target, terraformrc } = temp(t);
    await invoke(["install"], createMemoryStore(), ioOptions);
    const first = await invoke(["uninstall"], createMemoryStore(), ioOptions);
    assert.equal(
      first.stdout.split("\n")[1],
      `config: ${terraformrc} removed: it held only the credentials_helper block`,
    );
    const again = await invoke(["uninstall"], createMemoryStore(), ioOptions);
    assert.deepEqual(again.stdout.split("\n").slice(0, 2), [
      `helper: ${target} not installed`,
      `config: ${terraformrc} does not exist: nothing to remove`,
    ]);
  });

  test("uninstall names the hosts whose tokens stay, and the store's own command that deletes them", async (t) => {
    const { ioOptions } = temp(t);
    const store = createMemoryStore({
      "a.example.com": `{"token":"${SECRET}"}`,
      "b.example.com": "{}",
    });
    await invoke(["--service", "work", "install"], store, ioOptions);
    const outcome = await invoke(["uninstall"], store, ioOptions);
    assert.match(
      outcome.stdout,
      new RegExp(
        `\nthe tokens for a\\.example\\.com, b\\.example\\.com stay in the keychain \\(service "work"\\); to delete them, run: security delete-generic-password -s work -a a\\.example\\.com && security delete-generic-password -s work -a b\\.example\\.com\n$`,
      ),
    );
    assert.ok(!outcome.stdout.includes(SECRET));
    assert.equal(store.entries.size, 2);
  });

  test("uninstall --dry-run names the tokens that will stay, as the real run does", async (t) => {
    const { ioOptions } = temp(t);
    const store = createMemoryStore({ "a.example.com": `{"token":"${SECRET}"}` });
    await invoke(["--service", "work", "install"], store, ioOptions);
    const dry = await invoke(["uninstall", "--dry-run"], store, ioOptions);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout,
      /\nthe tokens for a\.example\.com would stay in the keychain \(service "work"\); to delete them, run: security delete-generic-password -s work -a a\.example\.com\ndry run: nothing was changed\n$/,
    );
    const outcome = await invoke(["uninstall"], store, ioOptions);
    assert.match(
      outcome.stdout,
      /\nthe tokens for a\.example\.com stay in the keychain \(service "work"\); to delete them, run: security delete-generic-password -s work -a a\.example\.com\n$/,
    );
  });

  test("a store that cannot be reached: uninstall says it could not check, and why", async (t) => {
    const { ioOptions } = temp(t);
    const store = createMemoryStore({ "a.example.com": "{}" });
    await invoke(["install"], store, ioOptions);
    store.failNext(new CliError("the keychain is locked"), "list");
    const outcome = await invoke(["uninstall"], store, ioOptions);
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.match(
      outcome.stdout,
      /\ncould not check which tokens stay in the keychain \(service "terraform-credentials"\): the keychain is locked\n$/,
    );
    assert.doesNotMatch(outcome.stdout, /the tokens (for .*)?stay in/);
  });

  test("uninstall --forget deletes the tokens as well, naming each host", async (t) => {
    const { ioOptions } = temp(t);
    const store = createMemoryStore({ "a.example.com": `{"token":"${SECRET}"}` });
    await invoke(["install"], store, ioOptions);
    const dry = await invoke(["uninstall", "--forget", "--dry-run"], store, ioOptions);
    assert.match(
      dry.stdout,
      /\nforget: a\.example\.com would be deleted from the keychain \(service "terraform-credentials"\)\ndry run: nothing was changed\n$/,
    );
    assert.equal(store.entries.size, 1);
    const outcome = await invoke(["uninstall", "--forget"], store, ioOptions);
    assert.match(
      outcome.stdout,
      /\nforgot: a\.example\.com deleted from the keychain \(service "terraform-credentials"\)\n$/,
    );
    assert.equal(store.entries.size, 0);
  });

  test("--backend pass --service work install: every next step carries the same options", async (t) => {
    const { ioOptions, target } = temp(t);
    const outcome = await invoke(
      ["--backend", "pass", "--service", "work", "install"],
      createMemoryStore(),
      ioOptions,
    );
    assert.equal(outcome.code, 0, outcome.stderr);
    const lines = outcome.stdout.split("\n");
    assert.ok(
      lines.some((line) => line.includes("stores the token in pass")),
      outcome.stdout,
    );
    assert.ok(
      lines.includes(
        `      "${target} --backend pass --service work import" moves tokens already in credentials.tfrc.json or credentials blocks;`,
      ),
      outcome.stdout,
    );
    assert.ok(
      lines.includes(`      "${target} --backend pass --service work doctor" checks the set-up`),
      outcome.stdout,
    );
  });

  test("with only OpenTofu's XDG tofurc, install edits it and says why Terraform is left out", async (t) => {
    const { box, ioOptions } = temp(t);
    const xdg = box.inHome(".config");
    const tofurc = path.join(xdg, "opentofu", "tofurc");
    box.write(tofurc, "# tofu\n", 0o600);
    const outcome = await invoke(["install"], createMemoryStore(), {
      ...ioOptions,
      env: { ...ioOptions.env, XDG_CONFIG_HOME: xdg },
    });
    assert.equal(outcome.code, 0, outcome.stderr);
    const lines = outcome.stdout.split("\n");
    assert.ok(
      lines.includes(`config: ${tofurc} (OpenTofu): credentials_helper block added`),
      outcome.stdout,
    );
    assert.ok(
      lines.some(
        (line) =>
          line.startsWith("note: Terraform not set up: ") && line.includes("TF_CLI_CONFIG_FILE="),
      ),
      outcome.stdout,
    );
  });

  test("uninstall of one profile says the executable is kept, and for which config", async (t) => {
    const { box, ioOptions, target } = temp(t);
    const work = box.inHome(".terraformrc-work");
    const personal = box.inHome(".terraformrc-personal");
    const as = (file: string) => ({
      ...ioOptions,
      env: { ...ioOptions.env, TF_CLI_CONFIG_FILE: file },
    });
    await invoke(["--service", "work", "install"], createMemoryStore(), as(work));
    await invoke(["--service", "personal", "install"], createMemoryStore(), as(personal));
    const outcome = await invoke(["--service", "work", "uninstall"], createMemoryStore(), as(work));
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.equal(
      outcome.stdout.split("\n")[0],
      `helper: ${target} kept: ${personal} still names it ("uninstall --force" removes it anyway)`,
    );
    assert.ok(existsSync(target));
  });

  test("--backend pass uninstall says the tokens stay in pass", async (t) => {
    const { ioOptions } = temp(t);
    await invoke(["--backend", "pass", "install"], createMemoryStore(), ioOptions);
    const outcome = await invoke(
      ["--backend", "pass", "uninstall"],
      createMemoryStore(),
      ioOptions,
    );
    assert.match(
      outcome.stdout,
      /\nno tokens are stored in pass \(service "terraform-credentials"\)\n$/,
    );
  });

  /** Terraform runs this helper in `box`: its block, and its executable in the plugin directory. */
  function installedIn(box: TempHome, block = EMPTY_BLOCK): void {
    box.write(box.inHome(".terraformrc"), block, 0o600);
    box.write(box.inHome(".terraform.d", "plugins", "terraform-credentials-keychain"), "", 0o755);
  }

  test("--backend pass import says it moved the tokens into pass", async (t) => {
    const { box, ioOptions } = temp(t);
    installedIn(box, 'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}\n');
    const file = box.inHome(".terraform.d", "credentials.tfrc.json");
    box.write(file, JSON.stringify({ credentials: { "a.example.com": { token: SECRET } } }), 0o600);
    const outcome = await invoke(["--backend", "pass", "import"], createMemoryStore(), ioOptions);
    assert.deepEqual(outcome, {
      code: 0,
      stdout: [
        `moved: a.example.com from ${file} into pass`,
        `${file} was deleted: nothing is left in it`,
        "note: terraform stacks (Terraform 1.16+) finds its host only in credentials.tfrc.json or a variable: set TF_STACKS_HOSTNAME=a.example.com where you run it, or it uses app.terraform.io",
        "",
      ].join("\n"),
      stderr: "",
    });
  });

  test("import reports each host and fails when one could not be imported", async (t) => {
    const { box, ioOptions } = temp(t);
    installedIn(box);
    const file = box.inHome(".terraform.d", "credentials.tfrc.json");
    box.write(
      file,
      JSON.stringify({
        credentials: { "App.Example.COM": { token: SECRET }, "bad host": { token: SECRET } },
      }),
      0o600,
    );
    const store = createMemoryStore();
    assert.deepEqual(await invoke(["import"], store, ioOptions), {
      code: 1,
      stdout: [
        `moved: App.Example.COM from ${file} into the keychain`,
        `failed: bad host (stays in ${file}): invalid hostname "bad host": contains whitespace`,
        `${file} was rewritten without the hosts moved`,
        "",
      ].join("\n"),
      stderr:
        "1 of 2 hosts were left where they are: Terraform takes their credentials from there, not from the helper\n",
    });
    assert.deepEqual([...store.entries.keys()], ["app.example.com"]);
  });
});

describe("doctor", { skip: process.platform === "win32" && "runs a shell script" }, () => {
  function temp(t: TestContext) {
    const box = createTempHome(t, "tfck-human-doctor-");
    const plugin = box.inHome(".terraform.d", "plugins", "terraform-credentials-keychain");
    box.write(plugin, `#!/bin/sh\necho ${VERSION}\n`, 0o755);
    const terraformrc = box.inHome(".terraformrc");
    box.write(terraformrc, BLOCK, 0o600);
    const ioOptions: FakeIoOptions = {
      env: {},
      platform: "darwin",
      arch: "arm64",
      homedir: box.home,
      execPath: "/opt/tfck/terraform-credentials-keychain",
      isSea: true,
    };
    return { box, plugin, terraformrc, ioOptions };
  }

  test("healthy: one ok line per check, details indented, exit 0", async (t) => {
    const { plugin, terraformrc, ioOptions } = temp(t);
    const store = createMemoryStore({ "app.terraform.io": `{"token":"${SECRET}"}` });
    assert.deepEqual(await invoke(["doctor"], store, ioOptions), {
      code: 0,
      stdout: [
        'ok    store --backend keychain (service "terraform-credentials"): reachable, 1 host stored',
        "      the system keychain is built in",
        "      has credentials for app.terraform.io",
        `ok    installed: ${plugin} (version ${VERSION})`,
        `ok    CLI config ${terraformrc} (Terraform and OpenTofu) has the credentials_helper block`,
        "ok    no host is shadowed by TF_TOKEN_* variables or plaintext credentials",
        "",
      ].join("\n"),
      stderr: "",
    });
  });

  test("a failed and a warned check: FAIL and warn lines with fixes, exit 1", async (t) => {
    const { plugin, terraformrc, ioOptions } = temp(t);
    const store = createMemoryStore();
    store.failNext(new CliError("the keychain is locked"), "list");
    const outcome = await invoke(["doctor"], store, {
      ...ioOptions,
      env: { TF_TOKEN_app_terraform_io: SECRET },
    });
    assert.deepEqual(outcome, {
      code: 1,
      stdout: [
        'FAIL  store --backend keychain (service "terraform-credentials"): not reachable',
        "      the keychain is locked",
        "warn  --backend pass does not work here either: pass is not installed (not on PATH)",
        `      fix: ${fixFor("pass-missing").effect}`,
        `ok    installed: ${plugin} (version ${VERSION})`,
        `ok    CLI config ${terraformrc} (Terraform and OpenTofu) has the credentials_helper block`,
        "warn  these hosts do not use the helper",
        "      app.terraform.io: the variable TF_TOKEN_app_terraform_io wins over the helper",
        `      fix: run "unset TF_TOKEN_app_terraform_io" (${fixFor("token-variables", { HELPER: plugin }).effect})`,
        "",
      ].join("\n"),
      stderr: "doctor: 1 check failed\n",
    });
    assert.ok(!outcome.stdout.includes(SECRET));
  });
});

describe(
  "commands for people follow the installed block",
  { skip: process.platform === "win32" && "POSIX paths" },
  () => {
    const PASS_WORK =
      'credentials_helper "keychain" {\n  args = ["--backend", "pass", "--service", "work"]\n}\n';

    function temp(t: TestContext, block = PASS_WORK) {
      const box = createTempHome(t, "tfck-follow-");
      const terraformrc = box.inHome(".terraformrc");
      box.write(terraformrc, block, 0o600);
      // Where Terraform finds it: import acts only then.
      box.write(box.inHome(".terraform.d", "plugins", "terraform-credentials-keychain"), "", 0o755);
      const ioOptions: FakeIoOptions = { env: {}, platform: "linux", homedir: box.home };
      return { box, terraformrc, ioOptions };
    }

    test("exec follows the block and prints nothing of its own when all goes well", async (t) => {
      const { ioOptions } = temp(t);
      const opened: GlobalOptions[] = [];
      const outcome = await invoke(["exec", "--", "true"], createMemoryStore(), ioOptions, opened);
      assert.deepEqual(opened, [{ service: "work", backend: "pass" }]);
      assert.deepEqual(outcome, { code: 0, stdout: "", stderr: "" });
    });

    for (const command of [["list"], ["import"]]) {
      test(`${command[0] ?? ""} with no options uses the block's --backend and --service and says so on stderr`, async (t) => {
        const { terraformrc, ioOptions } = temp(t);
        const opened: GlobalOptions[] = [];
        const outcome = await invoke(command, createMemoryStore(), ioOptions, opened);
        assert.deepEqual(opened, [{ service: "work", backend: "pass" }]);
        assert.ok(
          outcome.stderr.startsWith(
            `following the credentials_helper block in ${terraformrc}: --backend pass --service work\n`,
          ),
          outcome.stderr,
        );
      });
    }

    test("a line that names a store is taken as it is, the defaults filling in", async (t) => {
      const { ioOptions } = temp(t);
      const opened: GlobalOptions[] = [];
      await invoke(["--backend", "keychain", "list"], createMemoryStore(), ioOptions, opened);
      assert.deepEqual(opened, [{ service: "terraform-credentials", backend: "keychain" }]);
      opened.length = 0;
      const outcome = await invoke(
        ["--backend", "keychain", "--service", "terraform-credentials", "list"],
        createMemoryStore({ "a.example.com": "{}" }),
        ioOptions,
        opened,
      );
      assert.deepEqual(opened, [{ service: "terraform-credentials", backend: "keychain" }]);
      assert.equal(outcome.stderr, "", "nothing followed, nothing said");
    });

    test("a block without args: the defaults, and nothing said", async (t) => {
      const { ioOptions } = temp(t, EMPTY_BLOCK);
      const opened: GlobalOptions[] = [];
      const outcome = await invoke(
        ["list"],
        createMemoryStore({ "a.example.com": "{}" }),
        ioOptions,
        opened,
      );
      assert.deepEqual(opened, [{ service: "terraform-credentials", backend: "keychain" }]);
      assert.deepEqual([outcome.stdout, outcome.stderr], ["a.example.com\n", ""]);
    });

    test("the block's --timeout is followed too", async (t) => {
      const { ioOptions } = temp(
        t,
        'credentials_helper "keychain" {\n  args = ["--timeout", "7"]\n}\n',
      );
      const opened: GlobalOptions[] = [];
      await invoke(["list"], createMemoryStore(), ioOptions, opened);
      assert.deepEqual(opened, [
        { service: "terraform-credentials", backend: "keychain", timeout: 7 },
      ]);
    });

    test("TF_CLI_CONFIG_FILE chooses the block: a profile's", async (t) => {
      const { box, ioOptions } = temp(t);
      const profile = box.inHome(".terraformrc-personal");
      box.write(
        profile,
        'credentials_helper "keychain" {\n  args = ["--service", "personal"]\n}\n',
      );
      const opened: GlobalOptions[] = [];
      const outcome = await invoke(
        ["list"],
        createMemoryStore(),
        { ...ioOptions, env: { TF_CLI_CONFIG_FILE: profile } },
        opened,
      );
      assert.deepEqual(opened, [{ service: "personal", backend: "keychain" }]);
      assert.match(outcome.stderr, new RegExp(`block in ${profile}: --service personal\n`));
    });

    test("with only OpenTofu's XDG tofurc, its block is the one followed", async (t) => {
      const box = createTempHome(t, "tfck-follow-tofu-");
      const xdg = box.inHome(".config");
      box.write(path.join(xdg, "opentofu", "tofurc"), PASS_WORK, 0o600);
      const opened: GlobalOptions[] = [];
      await invoke(
        ["list"],
        createMemoryStore(),
        { env: { XDG_CONFIG_HOME: xdg }, platform: "linux", homedir: box.home },
        opened,
      );
      assert.deepEqual(opened, [{ service: "work", backend: "pass" }]);
    });

    test("args that are no options of ours: said on stderr, the defaults used", async (t) => {
      const { terraformrc, ioOptions } = temp(
        t,
        'credentials_helper "keychain" {\n  args = ["--verbose"]\n}\n',
      );
      const opened: GlobalOptions[] = [];
      const outcome = await invoke(["list"], createMemoryStore(), ioOptions, opened);
      assert.deepEqual(opened, [{ service: "terraform-credentials", backend: "keychain" }]);
      assert.match(
        outcome.stderr,
        new RegExp(`^the args of the credentials_helper block in ${terraformrc} are not options`),
      );
    });

    test("doctor says in its report which block it follows, and checks that store", async (t) => {
      const { terraformrc, ioOptions } = temp(t);
      const opened: GlobalOptions[] = [];
      const outcome = await invoke(["doctor"], createMemoryStore(), ioOptions, opened);
      const lines = outcome.stdout.split("\n");
      assert.equal(
        lines[0],
        `following the credentials_helper block in ${terraformrc}: --backend pass --service work`,
      );
      assert.ok(
        lines.some((line) => line.includes('store --backend pass (service "work")')),
        outcome.stdout,
      );
      assert.ok(!outcome.stdout.includes("--backend keychain (service"), outcome.stdout);
      assert.ok(!outcome.stdout.includes("runs the helper with args"), outcome.stdout);
    });

    test("uninstall names the store the block used", async (t) => {
      const { ioOptions } = temp(t);
      const outcome = await invoke(["uninstall"], createMemoryStore(), ioOptions);
      assert.equal(outcome.code, 0, outcome.stderr);
      assert.match(outcome.stdout, /stored in pass \(service "work"\)/);
    });

    test("a line that names a store uses it and the defaults, and not the block", async (t) => {
      const { ioOptions } = temp(t);
      const opened: GlobalOptions[] = [];
      await invoke(
        ["--service", "other", "get", "a.example.com"],
        createMemoryStore(),
        ioOptions,
        opened,
      );
      await invoke(
        ["--backend", "keychain", "forget", "a.example.com"],
        createMemoryStore(),
        ioOptions,
        opened,
      );
      assert.deepEqual(opened, [
        { service: "other", backend: "keychain" },
        { service: "terraform-credentials", backend: "keychain" },
      ]);
    });

    test("get, store and forget with no options follow it, silently", async (t) => {
      const { ioOptions } = temp(t);
      const person = ioOptions;
      const store = createMemoryStore();
      const opened: GlobalOptions[] = [];
      const outcomes = [
        await invoke(
          ["store", "a.example.com"],
          store,
          { ...person, stdin: '{"token":"t"}' },
          opened,
        ),
        await invoke(["get", "a.example.com"], store, person, opened),
        await invoke(["forget", "a.example.com"], store, person, opened),
      ];
      const work = { service: "work", backend: "pass" };
      assert.deepEqual(opened, [work, work, work]);
      assert.deepEqual(outcomes, [
        { code: 0, stdout: "", stderr: "" },
        { code: 0, stdout: '{"token":"t"}\n', stderr: "" },
        { code: 0, stdout: "", stderr: "" },
      ]);
    });
  },
);
