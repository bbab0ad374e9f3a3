// The real `terraform` referees svchost's rules for host names and TF_TOKEN_ names, and
// Terraform's choice of credentials helper, as terraform/view.ts models them (issue 42,
// causes 4 and 5). Two questions need no network:
// - `terraform logout HOST` says whether a CLI config file names the host ("manually
//   configured"), else which helper it would ask ("from the configured "NAME" credentials
//   helper", which then runs a recording plugin's forget), else "No credentials";
// - `terraform init` of a module from HOST asks the credentials source for HOST before its
//   first request (svchost disco.discover), so a recording plugin that is not asked for HOST
//   shows that a TF_TOKEN_ variable answered instead.
// Each case asks the view the same question and compares.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { viewsOf } from "../../src/commands/read-view.ts";
import { requireBuiltHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession } from "../support/pass-session.ts";
import { describeRun, runProgram } from "./support/helper-harness.ts";
import { normalizeHostname } from "../../src/protocol/hostname.ts";
import { hostIn, sends, type TerraformView } from "../../src/terraform/view.ts";
import {
  findTerraform,
  runTerraform,
  skipWithoutTerraform,
  terraformEnv,
} from "./support/terraform.ts";

const terraform = await findTerraform();
/** CI drives these files with OpenTofu too (TFCK_TEST_TERRAFORM=tofu): its view is the referee's. */
const TOOL = process.env.TFCK_TEST_TERRAFORM === "tofu" ? "OpenTofu" : "Terraform";
const ARCH_DIR = `${process.platform}_${process.arch === "x64" ? "amd64" : process.arch}`;

/** A HOME laid out as `files` says (paths under HOME; "plugin:NAME" writes a recording plugin). */
interface Layout {
  readonly files: Readonly<Record<string, string>>;
  readonly env?: Readonly<Record<string, string>>;
}

const OURS = 'credentials_helper "keychain" {}\n';
const OTHER = 'credentials_helper "other" {}\n';
const PLUGIN = "plugin";
/** A link to the built helper. */
const HELPER = "helper";
const plugins = ".terraform.d/plugins";
const withOurs = (rc: string): Layout => ({
  files: { ".terraformrc": `${OURS}${rc}`, [`${plugins}/terraform-credentials-keychain`]: PLUGIN },
});
const token = (label: string) => `credentials ${JSON.stringify(label)} {\n  token = "t"\n}\n`;

describe(
  "the real terraform referees svchost's names and the helper it runs",
  { concurrency: 2 },
  async () => {
    if (terraform === undefined) {
      test("terraform is on PATH", (t) => skipWithoutTerraform(t));
      return;
    }
    if (process.platform === "win32") {
      test("cases", { skip: "POSIX plugin scripts" }, () => {});
      return;
    }
    const root = mkdtempSync(path.join(tmpdir(), "tfck-svchost-"));
    after(() => rmSync(root, { recursive: true, force: true }));
    let homes = 0;

    /** A private HOME with `layout`; the log its recording plugins append `PATH VERB HOST` to. */
    const build = (layout: Layout) => {
      const home = path.join(root, `home-${String(homes++)}`);
      const log = path.join(home, "plugin.log");
      for (const [file, text] of Object.entries(layout.files)) {
        const target = path.join(home, file);
        if (text === "dir") {
          mkdirSync(target, { recursive: true });
          continue;
        }
        if (text === HELPER) {
          mkdirSync(path.dirname(target), { recursive: true });
          symlinkSync(requireBuiltHelper(), target);
          continue;
        }
        mkdirSync(path.dirname(target), { recursive: true });
        const script = `#!/bin/sh\necho "$0 $*" >> '${log}'\n[ "$1" = get ] && echo '{}'\nexit 0\n`;
        writeFileSync(target, text === PLUGIN ? script : text, {
          mode: text === PLUGIN ? 0o755 : 0o600,
        });
      }
      const env = terraformEnv({ home, extra: layout.env });
      const views = viewsOf({
        env,
        platform: process.platform,
        arch: process.arch,
        homedir: home,
        execPath: "",
        isSea: false,
      });
      const logged = () => {
        try {
          return readFileSync(log, "utf8");
        } catch {
          return "";
        }
      };
      return { home, env, view: views[TOOL], logged };
    };

    /** What `terraform logout HOST` does in a HOME: "configured", "none" or "helper NAME". */
    const logoutIn = async (built: ReturnType<typeof build>, host: string) => {
      const result = await runTerraform(terraform, ["logout", "-no-color", host], {
        cwd: built.home,
        env: built.env,
      });
      const output = result.stdout + result.stderr;
      const helper = /from the configured\s+"([^"]*)" credentials helper/.exec(output)?.[1];
      return /are manually configured/.test(output)
        ? "configured"
        : /No credentials for .* are stored/.test(output)
          ? "none"
          : helper !== undefined
            ? `helper ${helper}`
            : `unexpected: ${output}`;
    };

    /** `logoutIn` a new HOME laid out as `layout`. */
    const logout = async (layout: Layout, host: string) => {
      const built = build(layout);
      return { ...built, outcome: await logoutIn(built, host) };
    };

    /** What the view says `terraform logout HOST` does; several: Terraform picks at random. */
    const expected = (view: TerraformView, host: string): string[] => {
      const sent = sends(hostIn(view, normalizeHostname(host)));
      if (sent.from !== "helper" && sent.from !== "variable") return ["configured"];
      const chosen = view.helperChoice;
      switch (chosen.kind) {
        case "none":
        case "missing":
          return ["none"];
        case "runs":
          return [`helper ${chosen.helper.name}`];
        case "random":
          return chosen.outcomes.map(({ helper, plugin }) =>
            plugin === undefined ? "none" : `helper ${helper.name}`,
          );
      }
    };

    describe("host names in credentials labels (svchost ForComparison)", () => {
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        // [label, host given to logout, what terraform 1.11.4 does]
        ["xn--mnchen-3ya.de", "münchen.de", "helper keychain"], // refused: lowercase punycode
        ["XN--MNCHEN-3YA.DE", "münchen.de", "configured"],
        ["ｘｎ--mnchen-3ya.de", "münchen.de", "configured"],
        ["a.xn--mnchen-3ya.de", "a.münchen.de", "helper keychain"],
        ["example.com:+443", "example.com", "configured"], // strconv.Atoi
        ["example.com:+8443", "example.com:8443", "configured"],
        ["example.com:0443", "example.com", "configured"],
        ["example.com:-1", "example.com:-1", "configured"],
        ["MÜNCHEN.de:443", "münchen.de", "configured"],
      ];
      for (const [label, host, want] of cases) {
        test(`credentials ${JSON.stringify(label)}, logout ${host}: ${want}`, async () => {
          const { outcome, view, logged } = await logout(withOurs(token(label)), host);
          assert.equal(outcome, want, "terraform 1.11.4 does something else than this table says");
          assert.deepEqual(expected(view, host), [outcome], `the view of ${JSON.stringify(label)}`);
          if (outcome === "helper keychain") {
            assert.match(
              logged(),
              new RegExp(` forget ${normalizeHostname(host).replace(/\./g, "\\.")}\\n`),
            );
          }
        });
      }
    });

    describe("TF_TOKEN_ names (collectCredentialsFromEnv: ForDisplay, then ForComparison)", () => {
      const cases: ReadonlyArray<readonly [string, string, boolean]> = [
        // [variable, module host, whether the variable answers for it]
        ["TF_TOKEN_straße_de", "strasse.de", true], // transitional IDNA: ß is ss
        ["TF_TOKEN_STRASSE_DE", "strasse.de", true],
        ["TF_TOKEN_example_com:+443", "example.com", true], // strconv.Atoi
        ["TF_TOKEN_example_com:+8443", "example.com", false],
        ["TF_TOKEN_example_com:+8443", "example.com:8443", true],
        // Terraform 1.11.4 cannot discover a module host that is not ASCII (its discovery
        // puts the punycode form through ForComparison again, which refuses it), so the
        // punycode spellings of TF_TOKEN_ names are checked in the unit table only.
      ];
      for (const [variable, host, answers] of cases) {
        test(
          `${variable} ${answers ? "answers" : "does not answer"} for ${host}`,
          { timeout: 120_000 },
          async () => {
            const built = build({ ...withOurs(""), env: { [variable]: "t" } });
            const work = path.join(built.home, "work");
            mkdirSync(work);
            writeFileSync(
              path.join(work, "main.tf"),
              `module "m" {\n  source  = "${host}/acme/hello/null"\n  version = "1.0.0"\n}\n`,
            );
            const result = await runTerraform(terraform, ["init", "-input=false", "-no-color"], {
              cwd: work,
              env: built.env,
              timeoutMs: 90_000,
            });
            const comparison = normalizeHostname(host);
            // Discovery was reached: a helper not asked means that the variable answered.
            assert.match(
              result.stdout + result.stderr,
              new RegExp(
                `from\\s+${comparison.replace(/\./g, "\\.")}: failed to request discovery`,
              ),
            );
            const asked = built
              .logged()
              .split("\n")
              .includes(
                `${path.join(built.home, plugins, "terraform-credentials-keychain")} get ${comparison}`,
              );
            assert.equal(
              !asked,
              answers,
              `terraform ${asked ? "asked" : "did not ask"} the helper for ${comparison}:\n${built.logged()}`,
            );
            assert.equal(
              sends(hostIn(built.view, comparison)).from === "variable",
              answers,
              "the view",
            );
          },
        );
      }
    });

    describe("the helper Terraform runs (Config.CredentialsSource, plugin discovery)", () => {
      const cases: ReadonlyArray<readonly [string, Layout, readonly string[]]> = [
        [
          "our block in a drop-in, no executable in the plugin directory: none",
          { files: { ".terraformrc": "", ".terraform.d/keychain.tfrc": OURS } },
          ["none"],
        ],
        [
          "another label in ~/.terraformrc with no plugin, ours in a drop-in with one: none or ours, at random",
          {
            files: {
              ".terraformrc": OTHER,
              ".terraform.d/keychain.tfrc": OURS,
              [`${plugins}/terraform-credentials-keychain`]: PLUGIN,
            },
          },
          ["none", "helper keychain"],
        ],
        [
          "the plugin in the <os>_<arch> subdirectory: ours",
          {
            files: {
              ".terraformrc": OURS,
              [`${plugins}/${ARCH_DIR}/terraform-credentials-keychain`]: PLUGIN,
            },
          },
          ["helper keychain"],
        ],
        [
          "a label in another case: Terraform lowercases plugin names, so none",
          {
            files: {
              ".terraformrc": 'credentials_helper "Keychain" {}\n',
              [`${plugins}/terraform-credentials-keychain`]: PLUGIN,
            },
          },
          ["none"],
        ],
        [
          "a directory of the plugin's name: none",
          { files: { ".terraformrc": OURS, [`${plugins}/terraform-credentials-keychain`]: "dir" } },
          ["none"],
        ],
        [
          "a versioned plugin file: ours",
          {
            files: {
              ".terraformrc": OURS,
              [`${plugins}/terraform-credentials-keychain_v1.2.3_x5`]: PLUGIN,
            },
          },
          ["helper keychain"],
        ],
      ];
      for (const [name, layout, want] of cases) {
        test(name, { timeout: 120_000 }, async () => {
          // A Go map's order is random per run: several runs see both outcomes of two labels.
          const runs = want.length > 1 ? 8 : 1;
          for (let i = 0; i < runs; i++) {
            const { outcome, view } = await logout(layout, "a.example.com");
            assert.ok(
              want.includes(outcome),
              `terraform: ${outcome}; this table: ${want.join(" or ")}`,
            );
            assert.deepEqual(new Set(expected(view, "a.example.com")), new Set(want), "the view");
          }
        });
      }

      test("several versions: the newest runs (PluginMetaSet.Newest)", async () => {
        const { outcome, view, logged, home } = await logout(
          {
            files: {
              ".terraformrc": OURS,
              [`${plugins}/terraform-credentials-keychain`]: PLUGIN,
              [`${plugins}/terraform-credentials-keychain_v0.9.0`]: PLUGIN,
              [`${plugins}/terraform-credentials-keychain_v0.10.0`]: PLUGIN,
            },
          },
          "a.example.com",
        );
        assert.equal(outcome, "helper keychain");
        const ran = path.join(home, plugins, "terraform-credentials-keychain_v0.10.0");
        assert.ok(logged().startsWith(`${ran} forget`), logged());
        assert.ok(
          view.helperChoice.kind === "runs" && view.helperChoice.plugin === ran,
          "the view",
        );
      });
    });

    describe("import moves nothing where terraform would not ask this helper", () => {
      const elsewhere = linuxOnly("pass with a private GPG home");
      const PASS_BLOCK = 'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}\n';
      const cases: ReadonlyArray<readonly [string, Layout]> = [
        [
          "our block in a drop-in, no executable in the plugin directory",
          {
            files: {
              ".terraformrc": token("a.example.com"),
              ".terraform.d/keychain.tfrc": PASS_BLOCK,
            },
          },
        ],
        [
          "another label in ~/.terraformrc with no plugin, ours in a drop-in with the helper",
          {
            files: {
              ".terraformrc": `${OTHER}${token("a.example.com")}`,
              ".terraform.d/keychain.tfrc": PASS_BLOCK,
              [`${plugins}/terraform-credentials-keychain`]: HELPER,
            },
          },
        ],
      ];
      for (const [name, layout] of cases) {
        test(name, { skip: elsewhere, timeout: 120_000 }, async () => {
          const session = await startPassSession();
          try {
            const { GNUPGHOME = "", PASSWORD_STORE_DIR = "" } = session.env;
            const built = build({ ...layout, env: { GNUPGHOME, PASSWORD_STORE_DIR } });
            const rc = path.join(built.home, ".terraformrc");
            const bytes = readFileSync(rc, "utf8");
            assert.equal(await logoutIn(built, "a.example.com"), "configured");
            const imported = await runProgram(requireBuiltHelper(), ["import"], {
              cwd: built.home,
              env: built.env,
            });
            // What terraform does with the host is what it did: import moved nothing.
            assert.equal(
              await logoutIn(built, "a.example.com"),
              "configured",
              describeRun(imported),
            );
            assert.notEqual(imported.exitCode, 0, describeRun(imported));
            assert.match(imported.stderr, /(?:^|\n)import moves nothing: [^\n]*\n$/);
            assert.equal(readFileSync(rc, "utf8"), bytes);
          } finally {
            await session.close();
          }
        });
      }
    });
  },
);
