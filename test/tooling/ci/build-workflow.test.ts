/**
 * .github/workflows/build.yml, read as GitHub would: the runners each target is built and
 * tested on, the signing and its entitlements, and the one publishing job. action-validator
 * and actionlint (scripts/test.sh static) check its syntax; this checks what it promises.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { parse } from "yaml";
import { ROOT } from "../../../scripts/packages.ts";
import { TARGET_NAMES } from "../../../scripts/targets.ts";

interface Step {
  readonly name?: string;
  readonly shell?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly if?: string;
  readonly with?: Record<string, unknown>;
  readonly env?: Record<string, string>;
}
interface Job {
  readonly "runs-on": string;
  readonly needs?: string | readonly string[];
  readonly if?: string;
  readonly permissions?: Record<string, string>;
  readonly env?: Record<string, string>;
  readonly strategy?: { readonly matrix: { readonly include: readonly Record<string, string>[] } };
  readonly steps: readonly Step[];
}
interface Workflow {
  readonly on: { readonly push: { readonly tags: readonly string[] } };
  readonly jobs: Record<string, Job>;
}

const workflow = parse(
  readFileSync(path.join(ROOT, ".github/workflows/build.yml"), "utf8"),
) as Workflow;
const { jobs } = workflow;
const runnerOf = (job: Job): Record<string, string | undefined> =>
  Object.fromEntries(
    (job.strategy?.matrix.include ?? []).map((leg): [string, string | undefined] => [
      leg["target"] ?? "",
      leg["runner"],
    ]),
  );
const runOf = (job: Job) => job.steps.map((step) => step.run ?? "").join("\n");

describe("the build workflow", () => {
  test("darwin-arm64 runs on macos-15 and darwin-x64 on macos-15-intel, the last Intel image", () => {
    assert.deepEqual(runnerOf(jobs["macos"]!), {
      "darwin-arm64": "macos-15",
      "darwin-x64": "macos-15-intel",
    });
    assert.equal(jobs["macos"]!["runs-on"], "${{ matrix.runner }}");
  });

  test("win-x64 runs on windows-2025 and win-arm64 on windows-11-arm, once it is a target", () => {
    const windows = jobs["windows"]!;
    assert.deepEqual(runnerOf(windows), {
      "win-x64": "windows-2025",
      "win-arm64": "windows-11-arm",
    });
    // Every step after the notice waits for the target to exist in scripts/targets.ts.
    for (const step of windows.steps.slice(1)) {
      assert.equal(step.if, "contains(fromJSON(needs.linux.outputs.targets), matrix.target)");
    }
  });

  test("every darwin and Windows target has a job on its own OS, and no retired runner is used", () => {
    const native = { ...runnerOf(jobs["macos"]!), ...runnerOf(jobs["windows"]!) };
    for (const target of TARGET_NAMES.filter((name) => !name.startsWith("linux-"))) {
      assert.ok(native[target] !== undefined, `no runner for ${target}`);
    }
    const labels = Object.values(jobs).flatMap((job) =>
      job["runs-on"].startsWith("${{") ? Object.values(runnerOf(job)) : [job["runs-on"]],
    );
    for (const label of labels) {
      assert.doesNotMatch(
        label ?? "",
        /^(macos-1[0-4]|macos-latest|windows-2019|ubuntu-(18|20)\.04)/,
      );
    }
  });

  test("each darwin binary is signed with the entitlements and the hardened runtime, then verified and tested", () => {
    const macos = jobs["macos"]!;
    const sign = macos.steps.find((step) => step.name?.startsWith("Sign"))!.run!;
    assert.match(sign, /codesign --remove-signature "\$SIGNED"/);
    const signings = sign.match(/codesign --sign (?:[^\n\\]|\\\n)*/g) ?? [];
    assert.equal(signings.length, 2, "one with the identity, one ad hoc");
    for (const signing of signings) {
      assert.match(signing, /--options runtime/);
      assert.match(signing, /--entitlements packaging\/entitlements\.plist/);
    }
    assert.match(sign, /codesign --sign - /);
    assert.match(sign, /codesign --verify --strict --verbose=2 "\$SIGNED"/);
    const tests = macos.steps.find((step) => step.run?.includes("scripts/test.sh"))!;
    assert.equal(tests.env?.["TFCK_TEST_HELPER"], "${{ env.SIGNED }}");
    assert.match(tests.run!, /scripts\/test\.sh unit integration conformance$/);
    assert.ok(
      macos.steps.indexOf(tests) > macos.steps.findIndex((step) => step.name?.startsWith("Sign")),
    );
    assert.match(runOf(macos), /cp "\$SIGNED" LICENSE/, "the signed binary is archived");
    assert.match(
      runOf(macos),
      /npx tsx scripts\/archive-readme\.ts "release\/\$d\/README\.md"/,
      "the archive's README gets the project's home, as scripts/release.ts writes it",
    );
  });

  test("Windows tests the binary of the released archive with the unit, integration and conformance suites", () => {
    const windows = jobs["windows"]!;
    const tests = windows.steps.find((step) => step.run?.includes("scripts/test.sh"))!;
    assert.match(tests.run!, /scripts\/test\.sh unit integration conformance$/);
    assert.match(
      tests.env?.["TFCK_TEST_HELPER"] ?? "",
      /tested\/terraform-credentials-keychain\.exe$/,
    );
    assert.deepEqual(windows.needs, "linux");
  });

  test("the macOS and Windows jobs run e2e with terraform 1.11.4, after trusting one fixture CA for the run", () => {
    const trusts = {
      macos:
        /sudo security add-trusted-cert -d -r trustRoot \\\n\s*-k \/Library\/Keychains\/System\.keychain "\$ca_dir\/ca\.pem"/,
      windows:
        /Import-Certificate -FilePath "\$env:TFCK_TEST_FIXTURE_CA\/ca\.pem" `\n\s*-CertStoreLocation Cert:\\LocalMachine\\Root/,
    };
    for (const [name, trust] of Object.entries(trusts)) {
      const steps = jobs[name]!.steps;
      const at = (found: (step: Step) => boolean, what: string): number => {
        const index = steps.findIndex(found);
        assert.notEqual(index, -1, `${name}: no step ${what}`);
        return index;
      };
      const setup = at((step) => step.uses === "hashicorp/setup-terraform@v3", "sets terraform up");
      assert.deepEqual(steps[setup]!.with, {
        terraform_version: "1.11.4",
        terraform_wrapper: false,
      });
      const ca = at(
        (step) => step.run?.includes("npx tsx scripts/fixture-ca.ts") === true,
        "makes the CA",
      );
      assert.match(steps[ca]!.run!, /echo "TFCK_TEST_FIXTURE_CA=[^"]+" >> "\$GITHUB_ENV"/);
      const trusted = at((step) => trust.test(step.run ?? ""), "trusts the CA");
      const e2e = at((step) => step.run === "bash scripts/test.sh e2e", "runs the e2e suite");
      const suites = steps.find((step) => step.run?.includes("unit integration conformance"))!;
      assert.equal(steps[e2e]!.env?.["TFCK_TEST_HELPER"], suites.env?.["TFCK_TEST_HELPER"]);
      assert.ok(setup < e2e && ca <= trusted && trusted < e2e, `${name}: steps out of order`);
    }
  });

  test("only the workflow trusts a fixture CA in a system store: no script a developer runs does", () => {
    const trusting = /add-trusted-cert|Import-Certificate|certutil|LocalMachine\\Root/;
    for (const dir of ["scripts", "test/e2e", "test/support", ".ci"]) {
      for (const file of readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })) {
        const full = path.join(ROOT, dir, file);
        if (!statSync(full).isFile()) continue;
        assert.doesNotMatch(readFileSync(full, "utf8"), trusting, path.join(dir, file));
      }
    }
  });

  test("e2e runs the oldest Terraform in the linux job, and the newest 1.x and OpenTofu in a matrix", () => {
    const setup = jobs["linux"]!.steps.find((step) =>
      step.uses?.startsWith("hashicorp/setup-terraform"),
    )!;
    assert.equal(setup.with?.["terraform_version"], "1.11.4");
    const readme = readFileSync(path.join(ROOT, "docs/platforms.md"), "utf8");
    assert.match(readme, /Terraform 1\.11 \(the oldest supported\)/);
    assert.deepEqual(jobs["e2e"]!.strategy?.matrix.include, [
      { tool: "terraform", version: "<2.0.0" },
      { tool: "tofu", version: "latest" },
    ]);
    assert.ok(jobs["e2e"]!.steps.some((step) => step.uses?.startsWith("opentofu/setup-opentofu@")));
  });

  test("WSL on the Windows runner: the archive's Windows helper installed, conformance and e2e against --backend wincred inside", () => {
    const wsl = jobs["wsl"]!;
    assert.equal(wsl["runs-on"], "windows-2025");
    assert.equal(wsl.needs, "linux");
    assert.ok(wsl.steps.some((step) => step.uses?.startsWith("Vampire/setup-wsl@")));
    const download = wsl.steps.find((step) => step.uses?.startsWith("actions/download-artifact@"));
    assert.equal(download?.with?.["name"], "archive-linux-windows");
    assert.match(runOf(wsl), /\*_win-x64\.zip[^]*terraform-credentials-keychain\.exe install/);
    const inWsl = wsl.steps.filter((step) => step.shell === "wsl-bash {0}").map((step) => step.run);
    const tests = inWsl.find((run) => run?.includes("--test"));
    assert.match(tests ?? "", /TFCK_TEST_REAL_WSL=1/);
    assert.match(tests ?? "", /TFCK_TEST_HELPER=.*tested\/terraform-credentials-keychain/);
    assert.match(
      tests ?? "",
      /test\/conformance\/wsl-wincred\.test\.ts test\/e2e\/terraform-wincred\.test\.ts/,
    );
  });

  test("one publishing job, after every other job, only on a v* tag", () => {
    assert.deepEqual(workflow.on.push.tags, ["v*"]);
    const publishers = Object.entries(jobs).filter(([, job]) => runOf(job).includes("publish"));
    assert.deepEqual(
      publishers.map(([name]) => name),
      ["publish"],
    );
    const publish = jobs["publish"]!;
    assert.deepEqual(
      [...(publish.needs as readonly string[])].sort(),
      Object.keys(jobs)
        .filter((name) => name !== "publish")
        .sort(),
    );
    assert.equal(publish.if, "startsWith(github.ref, 'refs/tags/v')");
    assert.equal(publish.permissions?.["id-token"], "write", "npm provenance needs the OIDC token");
  });

  test("each publishing step runs only when its secret exists, and npm publishes with provenance", () => {
    const publish = jobs["publish"]!;
    for (const [step, secret] of [
      ["npm packages", "NPM_TOKEN"],
      ["Homebrew tap", "HOMEBREW_TAP_TOKEN"],
      ["Scoop bucket", "SCOOP_BUCKET_TOKEN"],
    ] as const) {
      const found = publish.steps.find((one) => one.name?.startsWith(step));
      assert.ok(found, step);
      assert.equal(found.if, `env.${secret} != ''`);
      assert.equal(publish.env?.[secret], `\${{ secrets.${secret} }}`);
    }
    const npm = publish.steps.find((one) => one.name?.startsWith("npm packages"))!.run!;
    for (const line of npm.split("\n").filter((one) => one.includes("npm publish"))) {
      assert.match(line, /--provenance/);
    }
    assert.match(
      runOf(publish),
      /scripts\/gather-release\.ts --dir release --tag "\$GITHUB_REF_NAME"/,
    );
  });
});

describe("packaging/entitlements.plist", () => {
  const plist = readFileSync(path.join(ROOT, "packaging/entitlements.plist"), "utf8");
  const withoutComments = plist.replace(/<!--[\s\S]*?-->/g, "");

  test("grants exactly JIT, unsigned executable memory and loading the unsigned addon", () => {
    const keys = [...withoutComments.matchAll(/<key>([^<]+)<\/key>\s*<(\w+)\/>/g)].map((match) => [
      match[1],
      match[2],
    ]);
    assert.deepEqual(keys, [
      ["com.apple.security.cs.allow-jit", "true"],
      ["com.apple.security.cs.allow-unsigned-executable-memory", "true"],
      ["com.apple.security.cs.disable-library-validation", "true"],
    ]);
    assert.equal(withoutComments.match(/<key>/g)?.length, keys.length, "every key is a true");
  });

  test("is one well-formed dict in a plist", () => {
    assert.match(
      withoutComments,
      /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<!DOCTYPE plist [^>]+>\n\s*<plist version="1\.0">\n<dict>\n[\s\S]*<\/dict>\n<\/plist>\n$/,
    );
  });
});
