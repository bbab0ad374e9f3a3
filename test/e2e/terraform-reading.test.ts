// The real terraform judges the reader of CLI config files (terraform/cli-config-file.ts)
// on every case of test/support/cli-config-cases.ts, through the view (terraform/view.ts):
// - `terraform version` with the case as TF_CLI_CONFIG_FILE prints its diagnostic when it
//   drops the file (the view's `dropped`, word for word once file text is elided), or
//   crashes (the view's `panic`);
// - `terraform logout` of the case's host says the credentials are "manually configured"
//   exactly when the view has credentials for it;
// - `terraform logout` of another host runs the helper the view names, with its args (a
//   recording helper in the plugin directory), or none when the view has none.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { after, describe, test } from "node:test";
import { normalizeHostname } from "../../src/protocol/hostname.ts";
import { withoutFileText } from "../../src/terraform/cli-config-file.ts";
import { helperInEffect, hostIn, terraformViews } from "../../src/terraform/view.ts";
import { CASES } from "../support/cli-config-cases.ts";
import { findTerraform, runTerraform, skipWithoutTerraform } from "./support/terraform.ts";

const terraform = await findTerraform();
const HOST = "a.example.com";
const OTHER = "other.example.com";
// logout never reaches the network: for a host it has no credentials for, it asks the helper.
const TIMEOUT_MS = 120_000;

describe("the real terraform judges the reader of CLI config files", { concurrency: 2 }, () => {
  if (terraform === undefined || process.env["TFCK_TEST_TERRAFORM"] === "tofu") {
    test("terraform is on PATH", (t) => {
      if (terraform === undefined) skipWithoutTerraform(t);
      else t.skip("OpenTofu reads with its own HCL fork; this table is Terraform's");
    });
    return;
  }
  const root = mkdtempSync(path.join(tmpdir(), "tfck-reading-"));
  after(() => {
    rmSync(root, { recursive: true, force: true });
  });

  for (const [index, { name, text }] of CASES.entries()) {
    test(name, async () => {
      const home = path.join(root, String(index));
      const plugins = path.join(home, ".terraform.d", "plugins");
      mkdirSync(plugins, { recursive: true });
      const file = path.join(home, "case.tfrc");
      writeFileSync(file, text);
      const calls = path.join(home, "calls");
      // A helper of every label the cases use, recording how Terraform runs it.
      const helper = path.join(plugins, "terraform-credentials-keychain");
      writeFileSync(helper, `#!/bin/sh\nprintf '%s\\n' "$@" > '${calls}'\nexit 0\n`);
      chmodSync(helper, 0o755);
      const env = {
        PATH: process.env["PATH"] ?? "",
        HOME: home,
        TF_CLI_CONFIG_FILE: file,
        CHECKPOINT_DISABLE: "1",
      };
      const run = (...args: string[]) =>
        runTerraform(terraform, args, { cwd: home, env, timeoutMs: TIMEOUT_MS });

      const view = terraformViews({
        env,
        platform: "linux",
        arch: "x64",
        homedir: home,
        files: {
          exists: (each) => each === file,
          list: () => undefined,
          read: (each) => (each === file ? readFileSync(each, "utf8") : undefined),
        },
      }).Terraform;
      const [read] = view.files;
      assert.ok(read);

      const version = await run("version");
      const said = stripVTControlCharacters(`${version.stdout}${version.stderr}`);
      const crashed = said.includes("TERRAFORM CRASH");
      assert.equal(view.panic !== undefined, crashed, `panic: ${view.panic ?? "none"}\n${said}`);
      if (crashed) return;
      const diagnostic = /Error: (Error parsing [\s\S]*?)\n│\s*\n/.exec(said)?.[1];
      const dropped = diagnostic?.replaceAll(/\n│ /g, " ");
      assert.equal(
        read.dropped,
        dropped === undefined
          ? undefined
          : withoutFileText(dropped.replace(/^Error parsing [^:]*: /, "")).replace(
              /^/,
              `Error parsing ${file}: `,
            ),
        said,
      );
      if (dropped !== undefined) return;

      const logout = await run("logout", HOST);
      const manual = /manually configured/.test(logout.stdout + logout.stderr);
      assert.equal(
        manual,
        hostIn(view, normalizeHostname(HOST))?.files !== undefined,
        logout.stderr,
      );

      rmSync(calls, { force: true });
      await run("logout", OTHER);
      let argv: string[] | undefined;
      try {
        argv = readFileSync(calls, "utf8").trimEnd().split("\n");
      } catch {
        argv = undefined;
      }
      const ours = helperInEffect({ Terraform: view, OpenTofu: view }, "keychain");
      assert.deepEqual(
        argv,
        ours === undefined ? undefined : [...(ours.args ?? []), "forget", OTHER],
      );
    });
  }
});
