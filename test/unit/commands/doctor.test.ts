import { fixFor, renderFix } from "../../../src/fixes.ts";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { runDoctor } from "../../../src/commands/doctor.ts";
import type { Check } from "../../../src/commands/doctor.ts";
import type { Machine } from "../../../src/system/io.ts";
import { DEFAULT_SERVICE } from "../../../src/commands/options.ts";
import type { GlobalOptions } from "../../../src/commands/options.ts";
import { CliError } from "../../../src/errors.ts";
import type { CredentialStore } from "../../../src/protocol/credential-store.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import { createTempHome } from "./temp-home.ts";
import type { TempHome } from "./temp-home.ts";

// platform "darwin": the Secret Service probe (dbus-send) is Linux-only, so it is skipped and
// nothing outside the temporary HOME is looked at. The installed helper is a shell script
// that prints a version, as the real one does for --version.

const VERSION = "0.0.0-test";
const EXEC_PATH = "/opt/tfck/terraform-credentials-keychain";
const SECRET = "SECRET-zzzz.atlasv1.9999";
/** The block install writes: both options that name the store. */
const BLOCK =
  'credentials_helper "keychain" {\n  args = ["--backend", "keychain", "--service", "terraform-credentials"]\n}\n';
const DEFAULT_OPTIONS: GlobalOptions = { service: DEFAULT_SERVICE, backend: "keychain" };
/** The fixes name the installed helper by its full path: the plugin directory is not on PATH. */
const importFix = (helper: string) =>
  `run "${helper} import" (${fixFor("credentials-in-files").effect})`;
const shadowFix = (box: Sandbox) => importFix(box.plugin);
const STACKS_NOTE =
  "terraform stacks (Terraform 1.16+) finds its host only in credentials.tfrc.json or a variable: set TF_STACKS_HOSTNAME=tfe.example.com where you run it, or it uses app.terraform.io";
const NO_SHADOW: Check = {
  status: "ok",
  title: "no host is shadowed by TF_TOKEN_* variables or plaintext credentials",
  details: [],
};
const configFix = (box: Sandbox) =>
  `run "${box.plugin} install", or add: credentials_helper "keychain" {}`;

interface Sandbox extends TempHome {
  readonly machine: Machine;
  readonly plugin: string;
  readonly terraformrc: string;
  readonly credentialsFile: string;
  /** Writes the installed helper: a script printing `version`. */
  installHelper(version?: string, file?: string): void;
  /** The same sandbox seen from another platform. */
  withPlatform(platform: Machine["platform"]): Sandbox;
}

function sandbox(t: TestContext, env: Record<string, string> = {}): Sandbox {
  const temp = createTempHome(t, "tfck-doctor-");
  const plugin = temp.inHome(".terraform.d", "plugins", "terraform-credentials-keychain");
  return {
    ...temp,
    machine: {
      env,
      platform: "darwin",
      arch: "arm64",
      homedir: temp.home,
      execPath: EXEC_PATH,
      isSea: true,
    },
    plugin,
    terraformrc: temp.inHome(".terraformrc"),
    credentialsFile: temp.inHome(".terraform.d", "credentials.tfrc.json"),
    installHelper(version = VERSION, file = plugin) {
      temp.write(file, `#!/bin/sh\necho ${version}\n`, 0o755);
    },
    withPlatform(platform) {
      return { ...this, machine: { ...this.machine, platform } };
    },
  };
}

function doctor(
  box: Sandbox,
  store: CredentialStore = createMemoryStore(),
  options: GlobalOptions = DEFAULT_OPTIONS,
  helperArgs: readonly string[] = [],
): Promise<Check[]> {
  return runDoctor(box.machine, VERSION, options, helperArgs, () => store);
}

/** A healthy set-up: helper installed at this version, the block in ~/.terraformrc. */
function healthy(t: TestContext, env: Record<string, string> = {}): Sandbox {
  const box = sandbox(t, env);
  box.installHelper();
  box.write(box.terraformrc, BLOCK, 0o600);
  return box;
}

function installedOk(box: Sandbox): Check {
  return { status: "ok", title: `installed: ${box.plugin} (version ${VERSION})`, details: [] };
}

function configOk(file: string, tools = "Terraform and OpenTofu"): Check {
  return {
    status: "ok",
    title: `CLI config ${file} (${tools}) has the credentials_helper block`,
    details: [],
  };
}

// What the macOS Keychain's probe says of it (the sandbox's platform is darwin).
const KEYCHAIN_PROBED = "the system keychain is built in";

const STORE_EMPTY: Check = {
  status: "ok",
  title: 'store --backend keychain (service "terraform-credentials"): reachable, 0 hosts stored',
  details: [KEYCHAIN_PROBED],
};

// Checks are found by what they are about, not by position, except where the whole list
// is asserted.
function storeCheck(checks: readonly Check[]): Check {
  const found = checks.filter((check) => check.title.startsWith("store --backend "));
  assert.equal(found.length, 1, JSON.stringify(checks, null, 2));
  return found[0]!;
}

function installCheck(checks: readonly Check[], box: Sandbox): Check {
  const found = checks.filter((check) => check.title.includes(` ${box.plugin} `));
  assert.equal(found.length, 1, JSON.stringify(checks, null, 2));
  return found[0]!;
}

function configCheck(checks: readonly Check[], file: string): Check {
  const found = checks.filter((check) => check.title.startsWith(`CLI config ${file} (`));
  assert.equal(found.length, 1, JSON.stringify(checks, null, 2));
  return found[0]!;
}

function shadowCheck(checks: readonly Check[]): Check {
  const last = checks.at(-1);
  assert.ok(last);
  assert.match(last.title, /shadowed|do not use the helper/);
  return last;
}

function checkAbout(checks: readonly Check[], fragment: string): Check {
  const found = checks.find((check) => check.title.includes(fragment));
  assert.ok(found, `a check about ${fragment} in ${JSON.stringify(checks, null, 2)}`);
  return found;
}

describe("runDoctor", { skip: process.platform === "win32" && "runs a shell script" }, () => {
  test("healthy set-up: every check is ok, in order", async (t) => {
    const box = healthy(t);
    const store = createMemoryStore({
      "app.terraform.io": `{"token":"${SECRET}"}`,
      "tfe.example.com": "{}",
    });
    assert.deepEqual(await doctor(box, store), [
      {
        status: "ok",
        title:
          'store --backend keychain (service "terraform-credentials"): reachable, 2 hosts stored',
        details: [
          KEYCHAIN_PROBED,
          "has credentials for app.terraform.io",
          "has credentials for tfe.example.com",
          STACKS_NOTE,
        ],
      },
      installedOk(box),
      configOk(box.terraformrc),
      NO_SHADOW,
    ]);
    assert.deepEqual(store.calls, [["list"]], "only host names are read from the store");
  });

  describe("terraform stacks: a stored host it cannot find is named once", () => {
    const stored = () =>
      createMemoryStore({
        "app.terraform.io": "{}",
        "tfe.example.com": "{}",
        "z.example.com": "{}",
      });
    test("with no variable and no credentials.tfrc.json, every host other than app.terraform.io", async (t) => {
      // Finding 11: every host that needs it, once, not one of them at random.
      const details = storeCheck(await doctor(healthy(t), stored())).details;
      assert.deepEqual(details.slice(4), [
        STACKS_NOTE.replace(
          "TF_STACKS_HOSTNAME=tfe.example.com",
          "TF_STACKS_HOSTNAME to the host (tfe.example.com, z.example.com)",
        ),
      ]);
    });
    test("TF_STACKS_HOSTNAME or TF_CLOUD_HOSTNAME set: nothing to say", async (t) => {
      for (const name of ["TF_STACKS_HOSTNAME", "TF_CLOUD_HOSTNAME"]) {
        const details = storeCheck(
          await doctor(healthy(t, { [name]: "tfe.example.com" }), stored()),
        ).details;
        assert.equal(details.length, 4, name);
      }
    });
    test("a host credentials.tfrc.json names is found there: the next one is named", async (t) => {
      const box = healthy(t);
      box.write(box.credentialsFile, JSON.stringify({ credentials: { "TFE.example.com": {} } }));
      const details = storeCheck(await doctor(box, stored())).details;
      assert.deepEqual(details.slice(4), [STACKS_NOTE.replace("tfe.example.com", "z.example.com")]);
    });
    test("only app.terraform.io stored: nothing to say", async (t) => {
      const details = storeCheck(
        await doctor(healthy(t), createMemoryStore({ "app.terraform.io": "{}" })),
      ).details;
      assert.deepEqual(details, [KEYCHAIN_PROBED, "has credentials for app.terraform.io"]);
    });
  });

  test("one host stored is counted in the singular", async (t) => {
    const box = healthy(t);
    const checks = await doctor(box, createMemoryStore({ "a.example.com": "{}" }));
    assert.equal(
      storeCheck(checks).title,
      'store --backend keychain (service "terraform-credentials"): reachable, 1 host stored',
    );
  });

  test("the keychain check names the service of the options", async (t) => {
    const box = healthy(t);
    const checks = await doctor(box, createMemoryStore(), {
      service: "work",
      backend: "keychain",
    });
    assert.equal(
      storeCheck(checks).title,
      'store --backend keychain (service "work"): reachable, 0 hosts stored',
    );
  });

  test("missing helper: fail, with the install command of this executable", async (t) => {
    const box = sandbox(t);
    box.write(box.terraformrc, BLOCK);
    assert.deepEqual(await doctor(box), [
      STORE_EMPTY,
      {
        status: "fail",
        title: `not installed: ${box.plugin} is missing or does not run`,
        // As import says it (commands/why-helper-not-run.ts).
        details: [
          `Terraform runs no credentials helper: it finds no "terraform-credentials-keychain" for credentials_helper "keychain" (${box.terraformrc}:1) in ${path.dirname(box.plugin)} or ${path.join(path.dirname(box.plugin), "darwin_arm64")}`,
        ],
        fix: `run "${EXEC_PATH} install"`,
      },
      configOk(box.terraformrc),
      NO_SHADOW,
    ]);
  });

  test("a helper that does not run counts as not installed", async (t) => {
    const box = healthy(t);
    box.write(box.plugin, "#!/bin/sh\nexit 3\n", 0o755);
    assert.equal(checkAbout(await doctor(box), "not installed").status, "fail");
  });

  test("wrong version: warn, with how to replace it", async (t) => {
    const box = healthy(t);
    box.installHelper("0.0.0-old");
    const checks = await doctor(box);
    assert.deepEqual(installCheck(checks, box), {
      status: "warn",
      title: `installed ${box.plugin} is version 0.0.0-old, this one is ${VERSION}`,
      details: [],
      fix: `run "${EXEC_PATH} install" to replace it`,
    });
  });

  test("another copy in a plugin directory: warn and name it", async (t) => {
    const box = healthy(t);
    const copy = box.inHome(
      ".terraform.d",
      "plugins",
      "darwin_arm64",
      "terraform-credentials-keychain_v9.9.9",
    );
    box.installHelper("9.9.9", copy);
    const checks = await doctor(box);
    assert.deepEqual(installCheck(checks, box), {
      status: "warn",
      title: `installed: ${box.plugin} (version ${VERSION})`,
      details: [
        `another copy: ${copy} (Terraform uses the newest _vX.Y.Z suffix, else the first found)`,
      ],
    });
  });

  test("missing CLI config: fail for ~/.terraformrc, and for OpenTofu's file", async (t) => {
    const box = sandbox(t);
    box.installHelper();
    const checks = await doctor(box);
    assert.deepEqual(checkAbout(checks, box.terraformrc), {
      status: "fail",
      title: `CLI config ${box.terraformrc} (Terraform) does not exist`,
      details: [],
      fix: configFix(box),
    });
    const tofu = checkAbout(checks, "(OpenTofu) does not exist");
    assert.equal(tofu.status, "fail");
    assert.equal(tofu.fix, configFix(box));
  });

  test("only OpenTofu's XDG tofurc, as install left it: ~/.terraformrc's absence is a warning with the way for Terraform", async (t) => {
    const box = sandbox(t);
    const config = box.inHome(".config");
    const tofurc = path.join(config, "opentofu", "tofurc");
    box.write(tofurc, BLOCK, 0o600);
    box.installHelper();
    const machine = { ...box.machine, env: { XDG_CONFIG_HOME: config } };
    const checks = await runDoctor(machine, VERSION, DEFAULT_OPTIONS, [], () =>
      createMemoryStore(),
    );
    const terraform = checkAbout(checks, "Terraform is not set up");
    assert.equal(terraform.status, "warn");
    assert.equal(terraform.fix, `for Terraform, set TF_CLI_CONFIG_FILE=${tofurc}`);
    assert.equal(configCheck(checks, tofurc).status, "ok");
  });

  test("another helper in the config: fail, and the fix is install --force", async (t) => {
    const box = healthy(t);
    box.write(box.terraformrc, 'credentials_helper "other" {}\n');
    const checks = await doctor(box);
    assert.deepEqual(configCheck(checks, box.terraformrc), {
      status: "fail",
      title: `CLI config ${box.terraformrc} (Terraform and OpenTofu) has no credentials_helper "keychain" block`,
      details: [`${box.terraformrc}:1 names the helper "other" instead`],
      fix: `run "${box.plugin} install --force"`,
    });
  });

  test("a config without any helper: fail, and the fix is install", async (t) => {
    const box = healthy(t);
    box.write(box.terraformrc, "disable_checkpoint = true\n");
    assert.deepEqual(configCheck(await doctor(box), box.terraformrc), {
      status: "fail",
      title: `CLI config ${box.terraformrc} (Terraform and OpenTofu) has no credentials_helper "keychain" block`,
      details: [],
      fix: configFix(box),
    });
  });

  test("a config Terraform cannot parse: fail, ignored entirely, with Terraform's own message", async (t) => {
    const box = healthy(t);
    box.write(box.terraformrc, 'credentials_helper "keychain" {\n');
    const check = configCheck(await doctor(box), box.terraformrc);
    assert.equal(check.status, "fail");
    assert.equal(
      check.title,
      `CLI config ${box.terraformrc} (Terraform and OpenTofu) is ignored entirely: Terraform cannot read it, so nothing in it counts`,
    );
    assert.deepEqual(check.details, [
      `Terraform says: Error parsing ${box.terraformrc}: At 2:2: object expected closing RBRACE got: EOF`,
    ]);
  });

  test("args mismatch: warn, naming both sets of args", async (t) => {
    const box = healthy(t);
    box.write(
      box.terraformrc,
      'credentials_helper "keychain" {\n  args = ["--service", "work"]\n}\n',
    );
    assert.deepEqual(configCheck(await doctor(box), box.terraformrc), {
      status: "warn",
      title: `CLI config ${box.terraformrc} (Terraform and OpenTofu) runs the helper with args ["--service","work"]`,
      details: [
        "this check ran with the defaults (--backend keychain --service terraform-credentials): Terraform sees a different set of entries",
      ],
      fix: `run "${box.plugin} --service work doctor" to check what Terraform sees, or install again with the options you want`,
    });
  });

  test("the same args as the block: ok", async (t) => {
    const box = healthy(t);
    box.write(
      box.terraformrc,
      'credentials_helper "keychain" {\n  args = ["--service", "work"]\n}\n',
    );
    const checks = await doctor(
      box,
      createMemoryStore(),
      { service: "work", backend: "keychain" },
      ["--service", "work"],
    );
    assert.deepEqual(configCheck(checks, box.terraformrc), configOk(box.terraformrc));
  });

  test("~/.tofurc present: one check per file, each naming its tool", async (t) => {
    const box = healthy(t);
    const tofurc = box.inHome(".tofurc");
    box.write(tofurc, "# no helper here\n");
    const checks = await doctor(box);
    assert.deepEqual(
      [configCheck(checks, box.terraformrc), configCheck(checks, tofurc)],
      [
        configOk(box.terraformrc, "Terraform"),
        {
          status: "fail",
          title: `CLI config ${tofurc} (OpenTofu) has no credentials_helper "keychain" block`,
          details: [],
          fix: configFix(box),
        },
      ],
    );
  });

  test("TF_CLI_CONFIG_FILE: its file is checked for both tools, and the unread files are named", async (t) => {
    const box = sandbox(t);
    const chosen = path.join(box.root, "ci", "cli.tfrc");
    const withEnv = { ...box, machine: { ...box.machine, env: { TF_CLI_CONFIG_FILE: chosen } } };
    box.installHelper();
    box.write(chosen, BLOCK);
    assert.deepEqual(await doctor(withEnv), [
      STORE_EMPTY,
      installedOk(box),
      configOk(chosen),
      {
        status: "ok",
        title: `TF_CLI_CONFIG_FILE is set: ${chosen} is the CLI config file Terraform and OpenTofu read`,
        details: [
          `${box.terraformrc} is not read while it is set`,
          `${path.join(box.home, ".tofurc")} is not read while it is set`,
        ],
      },
      NO_SHADOW,
    ]);
  });

  test("TF_CLI_CONFIG_FILE pointing at ~/.terraformrc itself does not call that file unread", async (t) => {
    const box = healthy(t);
    const withEnv = {
      ...box,
      machine: { ...box.machine, env: { TF_CLI_CONFIG_FILE: box.terraformrc } },
    };
    const check = (await doctor(withEnv)).find((c) =>
      c.title.startsWith("TF_CLI_CONFIG_FILE is set"),
    );
    assert.ok(check);
    assert.equal(check.status, "ok");
    assert.ok(
      !check.details.some((line) => line.startsWith(`${box.terraformrc} `)),
      check.details.join("\n"),
    );
  });

  test("an empty TF_CLI_CONFIG_FILE gives no warning", async (t) => {
    const box = healthy(t, { TF_CLI_CONFIG_FILE: "" });
    assert.deepEqual(await doctor(box), [
      STORE_EMPTY,
      installedOk(box),
      configOk(box.terraformrc),
      NO_SHADOW,
    ]);
  });

  test("TF_TOKEN_* variables shadow the helper: hosts decoded, tokens never shown", async (t) => {
    const box = healthy(t, {
      TF_TOKEN_app_terraform_io: SECRET,
      TF_TOKEN_foo__bar_com: SECRET,
      TF_TOKEN_Tfe_Example_COM: SECRET,
      TF_TOKEN_xn____mnchen__3ya_de: SECRET,
      "TF_TOKEN_xn--caf-dma_fr": SECRET,
      TF_TOKENS: "not a token variable",
    });
    const checks = await doctor(box);
    assert.deepEqual(shadowCheck(checks), {
      status: "warn",
      title: "these hosts do not use the helper",
      details: [
        "app.terraform.io: the variable TF_TOKEN_app_terraform_io wins over the helper",
        "foo-bar.com: the variable TF_TOKEN_foo__bar_com wins over the helper",
        "tfe.example.com: the variable TF_TOKEN_Tfe_Example_COM wins over the helper",
        "xn--mnchen-3ya.de: the variable TF_TOKEN_xn____mnchen__3ya_de wins over the helper",
        "xn--caf-dma.fr: the variable TF_TOKEN_xn--caf-dma_fr wins over the helper",
      ],
      fix: `run "unset TF_TOKEN_app_terraform_io TF_TOKEN_foo__bar_com TF_TOKEN_Tfe_Example_COM TF_TOKEN_xn____mnchen__3ya_de TF_TOKEN_xn--caf-dma_fr" (${fixFor("token-variables", { HELPER: box.plugin }).effect})`,
    });
    assert.ok(!JSON.stringify(checks).includes(SECRET), "no token in any check");
  });

  test("an empty TF_TOKEN_* variable still shadows the helper", {}, async (t) => {
    const box = healthy(t, { TF_TOKEN_app_terraform_io: "" });
    assert.deepEqual(shadowCheck(await doctor(box)).details, [
      "app.terraform.io: the variable TF_TOKEN_app_terraform_io wins over the helper",
    ]);
  });

  test("credentials.tfrc.json shadows the helper for its hosts, token never shown", async (t) => {
    const box = healthy(t);
    box.write(
      box.credentialsFile,
      JSON.stringify({
        credentials: {
          "app.terraform.io": { token: SECRET },
          "tfe.example.com": { token: SECRET },
        },
      }),
      0o600,
    );
    const checks = await doctor(box);
    assert.deepEqual(shadowCheck(checks), {
      status: "warn",
      title: "these hosts do not use the helper",
      details: [
        `app.terraform.io: the token in ${box.credentialsFile}:1 wins over the helper`,
        `tfe.example.com: the token in ${box.credentialsFile}:1 wins over the helper`,
      ],
      fix: shadowFix(box),
    });
    assert.ok(!JSON.stringify(checks).includes(SECRET), "no token in any check");
  });

  test("finding 7: with TF_CLI_CONFIG_FILE or TERRAFORM_CONFIG set, credentials.tfrc.json and drop-ins are unread and shadow nothing", async (t) => {
    for (const variable of ["TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG"]) {
      const box = sandbox(t);
      const chosen = path.join(box.root, "cli.tfrc");
      const withEnv = { ...box, machine: { ...box.machine, env: { [variable]: chosen } } };
      box.installHelper();
      box.write(chosen, BLOCK);
      box.write(box.credentialsFile, JSON.stringify({ credentials: { "a.example.com": {} } }));
      const dropIn = box.inHome(".terraform.d", "team.tfrc");
      box.write(dropIn, 'credentials "b.example.com" { token = "x" }\n');
      const checks = await doctor(withEnv);
      assert.deepEqual(shadowCheck(checks), NO_SHADOW, variable);
      const unread = checks.find((check) => check.title.startsWith(`${variable} is set`));
      assert.ok(unread, variable);
      assert.deepEqual(
        unread.details.filter((line) => line.includes(".terraform.d")),
        [
          `${box.credentialsFile} is not read while it is set`,
          `${dropIn} is not read while it is set`,
        ],
        variable,
      );
    }
  });

  test("a credentials.tfrc.json Terraform drops is reported as dropped, without its content", async (t) => {
    const box = healthy(t);
    box.write(box.credentialsFile, `{"credentials": {"a.example.com": {"token": "${SECRET}" x`);
    const checks = await doctor(box);
    assert.deepEqual(checkAbout(checks, `ignore ${box.credentialsFile}`).details, [
      `Terraform says: Error parsing ${box.credentialsFile}: 1:${49 + SECRET.length}: illegal char`,
    ]);
    assert.ok(!JSON.stringify(checks).includes(SECRET));
  });

  test("a quoted boolean makes Terraform drop ~/.terraformrc: its block is not in place and its tokens shadow nothing (issue 42, cause 1)", async (t) => {
    const box = healthy(t);
    box.write(
      box.terraformrc,
      `disable_checkpoint = "true"\n${BLOCK}credentials "a.example.com" { token = "x" }\n`,
    );
    const checks = await doctor(box);
    const check = configCheck(checks, box.terraformrc);
    assert.equal(check.status, "fail");
    assert.deepEqual(check.details, [
      `Terraform says: Error parsing ${box.terraformrc}: At 1:22: root.disable_checkpoint: unknown type *ast.LiteralType`,
    ]);
    assert.equal(
      shadowCheck(checks).title,
      "no host is shadowed by TF_TOKEN_* variables or plaintext credentials",
    );
  });

  test("a credentials block with two labels makes Terraform crash on every command: doctor says so (issue 42, cause 3)", async (t) => {
    const box = healthy(t);
    box.write(box.credentialsFile, 'credentials "a.example.com" "b" {}\n');
    const check = checkAbout(
      await doctor(box),
      `crash on every command reading ${box.credentialsFile}`,
    );
    assert.equal(check.status, "fail");
    assert.deepEqual(check.details, [
      `Go panics: ${box.credentialsFile}:1: can't convert []map[string]interface {} to cty.Value`,
    ]);
  });

  test("a bare word where a token belongs is reported without the word", async (t) => {
    const box = healthy(t);
    box.write(
      box.credentialsFile,
      `credentials "a.example.com" { token = ${SECRET.replaceAll(/[^a-zA-Z0-9]/g, "")} }`,
    );
    const checks = await doctor(box);
    assert.match(
      checkAbout(checks, `ignore ${box.credentialsFile}`).details[0] ?? "",
      /Unknown token: 1:39 IDENT …$/,
    );
    assert.ok(!JSON.stringify(checks).includes(SECRET.replaceAll(/[^a-zA-Z0-9]/g, "")));
  });

  test("a block whose args name no store (an earlier install's {}): warn with what it costs and the install that fixes it", async (t) => {
    const box = healthy(t);
    box.write(box.terraformrc, 'credentials_helper "keychain" {}\n');
    const checks = await doctor(box);
    assert.deepEqual(configCheck(checks, box.terraformrc), {
      status: "warn",
      title: `CLI config ${box.terraformrc} (Terraform and OpenTofu) has the credentials_helper block, but its args name no store`,
      details: [
        "so each call Terraform makes reads the CLI config files to find the store: a file read and a parse more per call; install writes --backend and --service",
      ],
      fix: `run "${box.plugin} install"`,
    });
  });

  test('credentials "host" {} blocks shadow the helper, empty ones too, tokens never shown', async (t) => {
    const box = healthy(t);
    box.write(
      box.terraformrc,
      `${BLOCK}\ncredentials "app.terraform.io" {\n  token = "${SECRET}"\n}\n\ncredentials "empty.example.com" {}\n`,
    );
    const checks = await doctor(box);
    assert.deepEqual(configCheck(checks, box.terraformrc), configOk(box.terraformrc));
    assert.deepEqual(shadowCheck(checks), {
      status: "warn",
      title: "these hosts do not use the helper",
      details: [
        `app.terraform.io: the token in ${box.terraformrc}:5 wins over the helper`,
        `empty.example.com: an entry with no token in ${box.terraformrc}:9 (nothing is sent) wins over the helper`,
      ],
      // First what import moves (each removed only once stored), then what it cannot.
      fix: `${shadowFix(box)}; then ${fixFor("credentials-by-hand", { HELPER: box.plugin }).effect}`,
    });
    assert.ok(!JSON.stringify(checks).includes(SECRET));
  });

  test("a credentials_helper in ~/.terraform.d/*.tfrc: fail, naming the file Terraform merges", async (t) => {
    const box = healthy(t);
    const extra = box.inHome(".terraform.d", "extra.tfrc");
    box.write(extra, 'credentials_helper "other" {}\n', 0o600);
    const check = checkAbout(await doctor(box), extra);
    assert.equal(check.status, "fail");
    assert.equal(
      check.title,
      `${extra} sets credentials_helper "other" as well: Terraform refuses a CLI config with two ("No more than one credentials_helper block may be specified"); Terraform merges 2 credentials_helper blocks and runs one at random each time: "keychain" (${box.terraformrc}:1), "other" (${extra}:1, no "terraform-credentials-other" found, so no helper at all)`,
    );
    assert.equal(check.fix, `remove that credentials_helper block from ${extra}`);
  });

  test("a credentials block in ~/.terraform.d/*.tfrc.json shadows the helper", async (t) => {
    const box = healthy(t);
    const extra = box.inHome(".terraform.d", "team.tfrc.json");
    box.write(extra, JSON.stringify({ credentials: { "tfe.example.com": { token: SECRET } } }));
    const checks = await doctor(box);
    assert.equal(checkAbout(checks, extra).status, "ok");
    assert.deepEqual(shadowCheck(checks).details, [
      `tfe.example.com: the token in ${extra}:1 wins over the helper`,
    ]);
    assert.ok(!JSON.stringify(checks).includes(SECRET));
  });

  test("names from data are printed with their control characters escaped", async (t) => {
    const box = sandbox(t);
    box.installHelper();
    const chosen = path.join(box.root, "a\u001b[2Jb.tfrc");
    box.write(chosen, `${BLOCK}credentials "a.example.com" { token = "x" }\n`);
    const withEnv = { ...box, machine: { ...box.machine, env: { TF_CLI_CONFIG_FILE: chosen } } };
    const details = shadowCheck(await doctor(withEnv)).details.join("\n");
    assert.ok(!details.includes("\u001b"), details);
    assert.match(details, /\\u001b\[2J/);
  });

  test("every kind of shadowing is listed together: variables, file, blocks", async (t) => {
    const box = healthy(t, { TF_TOKEN_a_example_com: SECRET });
    box.write(box.credentialsFile, JSON.stringify({ credentials: { "b.example.com": {} } }));
    box.write(box.terraformrc, `${BLOCK}credentials "c.example.com" {}\n`);
    const { details } = shadowCheck(await doctor(box));
    assert.deepEqual(
      details.map((line) => line.split(":")[0]),
      // The variables, then the files in Terraform's merge order: ~/.terraformrc first.
      ["a.example.com", "c.example.com", "b.example.com"],
    );
  });

  test("a store whose list fails: fail with its message", async (t) => {
    const box = healthy(t);
    const store = createMemoryStore();
    store.failNext(new CliError("the keychain is locked"), "list");
    const checks = await doctor(box, store);
    assert.deepEqual(checks, [
      {
        status: "fail",
        title: 'store --backend keychain (service "terraform-credentials"): not reachable',
        details: ["the keychain is locked"],
      },
      {
        status: "warn",
        title: "--backend pass does not work here either: pass is not installed (not on PATH)",
        details: [],
        fix: fixFor("pass-missing").effect,
      },
      installedOk(box),
      configOk(box.terraformrc),
      NO_SHADOW,
    ]);
  });

  test("a store that cannot be opened: fail with its message, the other checks still run", async (t) => {
    const box = healthy(t);
    const checks = await runDoctor(box.machine, VERSION, DEFAULT_OPTIONS, [], () => {
      throw new CliError("no keychain backend on this machine");
    });
    assert.deepEqual(storeCheck(checks), {
      status: "fail",
      title: 'store --backend keychain (service "terraform-credentials"): not reachable',
      details: ["no keychain backend on this machine"],
    });
    assert.deepEqual(installCheck(checks, box), installedOk(box), "the other checks still run");
    assert.deepEqual(shadowCheck(checks), NO_SHADOW);
  });

  test("an asynchronously failing open is reported the same way", async (t) => {
    const box = healthy(t);
    const checks = await runDoctor(box.machine, VERSION, DEFAULT_OPTIONS, [], () =>
      Promise.reject(new CliError("dbus went away")),
    );
    assert.equal(storeCheck(checks).status, "fail");
    assert.deepEqual(storeCheck(checks).details, ["dbus went away"]);
  });

  test("--backend pass --service work: every fix runs as printed, with the same options", async (t) => {
    const box = sandbox(t);
    box.installHelper();
    box.write(box.terraformrc, 'credentials_helper "other" {}\n', 0o600);
    box.write(
      box.credentialsFile,
      JSON.stringify({ credentials: { "a.example.com": { token: SECRET } } }),
      0o600,
    );
    const checks = await doctor(box, createMemoryStore(), { service: "work", backend: "pass" }, [
      "--backend",
      "pass",
      "--service",
      "work",
    ]);
    assert.equal(
      configCheck(checks, box.terraformrc).fix,
      `run "${box.plugin} --backend pass --service work install --force"`,
    );
    assert.equal(shadowCheck(checks).fix, importFix(`${box.plugin} --backend pass --service work`));
  });

  test("before anything is set up, the suggested block and install carry the args", async (t) => {
    const box = sandbox(t);
    const checks = await doctor(
      box,
      createMemoryStore(),
      { service: DEFAULT_SERVICE, backend: "pass" },
      ["--backend", "pass"],
    );
    assert.equal(
      configCheck(checks, box.terraformrc).fix,
      `run "${EXEC_PATH} --backend pass install", or add: credentials_helper "keychain" { args = ["--backend", "pass"] }`,
    );
    assert.equal(installCheck(checks, box).fix, `run "${EXEC_PATH} --backend pass install"`);
  });

  test("no store works (Linux, no session bus, no pass): each store's failure once, with its fix, never under 'ok'", async (t) => {
    const box = healthy(t);
    const checks = await doctor(box.withPlatform("linux"));
    assert.deepEqual(checks.slice(0, 2), [
      {
        status: "fail",
        // The same words as a store call's error in the same state.
        title:
          'store --backend keychain (service "terraform-credentials"): no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no keychain here',
        details: [],
        fix: renderFix(fixFor("session-bus-missing", { HELPER: box.plugin, ARGS: "" })),
      },
      {
        status: "warn",
        title: "--backend pass does not work here either: pass is not installed (not on PATH)",
        details: [],
        fix: fixFor("pass-missing").effect,
      },
    ]);
    const text = JSON.stringify(checks);
    assert.equal(text.split("no D-Bus session bus").length, 2, "said once");
    assert.ok(
      checks.every(
        (check) => check.status !== "ok" || !/not usable|no D-Bus/.test(JSON.stringify(check)),
      ),
    );
  });

  test("~/.terraformrc hiding OpenTofu's XDG tofurc: warn, naming both files", async (t) => {
    const xdgRoot = (box: Sandbox) => path.join(box.root, "xdg-config");
    const box0 = healthy(t);
    const box = { ...box0, machine: { ...box0.machine, env: { XDG_CONFIG_HOME: xdgRoot(box0) } } };
    const tofurc = path.join(xdgRoot(box), "opentofu", "tofurc");
    box.write(tofurc, "# my tofu settings\n", 0o600);
    assert.deepEqual(checkAbout(await doctor(box), tofurc), {
      status: "warn",
      title: `OpenTofu does not read ${tofurc}: ${box.terraformrc} exists, and OpenTofu reads that instead`,
      details: [],
      fix: `merge ${tofurc} into ${box.terraformrc}, or remove ${box.terraformrc} and install again`,
    });
  });

  test("a profile whose helper was removed: the install fix keeps the block's args", async (t) => {
    const box0 = sandbox(t);
    const profile = box0.inHome(".terraformrc-personal");
    box0.write(
      profile,
      'credentials_helper "keychain" {\n  args = ["--service", "personal"]\n}\n',
      0o600,
    );
    const box = { ...box0, machine: { ...box0.machine, env: { TF_CLI_CONFIG_FILE: profile } } };
    const checks = await doctor(box);
    assert.equal(
      installCheck(checks, box).fix,
      `run "TF_CLI_CONFIG_FILE=${profile} ${EXEC_PATH} --service personal install"`,
    );
    assert.equal(
      configCheck(checks, profile).fix,
      `run "TF_CLI_CONFIG_FILE=${profile} ${EXEC_PATH} --service personal doctor" to check what Terraform sees, or install again with the options you want`,
    );
  });

  test("--backend pass without pass installed: fail with the fix, switching to the keychain that works, and the store is not opened", async (t) => {
    const box = healthy(t);
    const store = createMemoryStore();
    const checks = await doctor(box, store, { service: DEFAULT_SERVICE, backend: "pass" }, [
      "--backend",
      "pass",
    ]);
    assert.deepEqual(storeCheck(checks), {
      status: "fail",
      title:
        'store --backend pass (service "terraform-credentials"): pass is not installed (not on PATH)',
      details: [],
      fix: `${fixFor("pass-missing").effect}; or use the keychain: run "${box.plugin} --backend keychain install --force"`,
    });
    assert.deepEqual(store.calls, []);
  });
});

describe(
  "fixes run as printed",
  { skip: process.platform === "win32" && "runs a shell script" },
  () => {
    test("in a profile, the install fix carries its TF_CLI_CONFIG_FILE, so it does not write the default file", async (t) => {
      const box = sandbox(t);
      box.installHelper();
      const profile = box.inHome(".terraformrc-work");
      const checks = await doctor(
        { ...box, machine: { ...box.machine, env: { TF_CLI_CONFIG_FILE: profile } } },
        createMemoryStore(),
        { service: "work", backend: "keychain" },
        ["--service", "work"],
      );
      const config = checks.find((check) => check.title.startsWith(`CLI config ${profile}`));
      assert.equal(
        config?.fix,
        `run "TF_CLI_CONFIG_FILE=${profile} ${box.plugin} --service work install", or add: credentials_helper "keychain" { args = ["--service", "work"] }`,
      );
    });

    test("with the helper linked on PATH, fixes name it by name", async (t) => {
      const box = sandbox(t);
      box.installHelper();
      const bin = box.inHome(".local", "bin");
      mkdirSync(bin, { recursive: true });
      symlinkSync(box.plugin, path.join(bin, "terraform-credentials-keychain"));
      box.write(
        box.credentialsFile,
        JSON.stringify({ credentials: { "a.example.com": { token: "x" } } }),
        0o600,
      );
      const checks = await doctor({
        ...box,
        machine: { ...box.machine, env: { PATH: `${bin}:/usr/bin` } },
      });
      const shadow = checks.find((check) => check.title === "these hosts do not use the helper");
      assert.match(shadow?.fix ?? "", /^run "terraform-credentials-keychain import" \(/);
    });
  },
);
