import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { run, type Dependencies } from "../../../src/cli/run.ts";
import type { DoctorReport } from "../../../src/commands/doctor-report.ts";
import { createFakeIo } from "../../support/fake-io.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import { createTempHome } from "./temp-home.ts";

// `doctor --json`: the view as data on stdout (only JSON, never a token), from run() with a
// fake Io over a temporary HOME.

const FILE_TOKEN = "SECRET-file-aaaa.atlasv1.1111";
const VARIABLE_TOKEN = "SECRET-variable-bbbb.atlasv1.2222";
const JSON_TOKEN = "SECRET-json-cccc.atlasv1.3333";

describe("doctor --json", () => {
  test("says where each host's token comes from, the helper and the files, never a token", async (t) => {
    const temp = createTempHome(t, "tfck-doctor-json-");
    const rc = temp.inHome(".terraformrc");
    const credentials = temp.inHome(".terraform.d", "credentials.tfrc.json");
    temp.write(
      rc,
      [
        'credentials_helper "keychain" {',
        '  args = ["--service", "work"]',
        "}",
        'credentials "file.example.com" {',
        `  token = "${FILE_TOKEN}"`,
        "}",
        'credentials "tokenless.example.com" {',
        '  organization = "acme"',
        "}",
        'credentials "not a host" {',
        `  token = "${FILE_TOKEN}"`,
        "}",
        "",
      ].join("\n"),
      0o600,
    );
    temp.write(
      credentials,
      JSON.stringify({ credentials: { "JSON.example.com:443": { token: JSON_TOKEN } } }),
      0o600,
    );
    const plugin = temp.inHome(".terraform.d", "plugins", "terraform-credentials-keychain");
    temp.write(plugin, "#!/bin/sh\n", 0o755);
    const io = createFakeIo({
      homedir: temp.home,
      platform: "linux",
      env: { HOME: temp.home, TF_TOKEN_var_example_com: VARIABLE_TOKEN },
    });
    let opened = 0;
    const deps: Dependencies = {
      version: "0.0.0-test",
      openStore() {
        opened++;
        return createMemoryStore();
      },
      protectSecrets: async () => {},
    };
    const code = await run(["doctor", "--json"], io, deps);
    assert.equal(io.stderr.text, "");
    assert.equal(code, 0);
    assert.equal(opened, 0, "no store is opened");
    for (const token of [FILE_TOKEN, VARIABLE_TOKEN, JSON_TOKEN]) {
      assert.ok(!io.stdout.text.includes(token), "no token on stdout");
    }
    const report = JSON.parse(io.stdout.text) as DoctorReport;
    const terraform = report.tools.Terraform;
    assert.equal(terraform.mainFile, rc);
    assert.deepEqual(
      terraform.files.map(({ file, role, syntax, dropped }) => [file, role, syntax, dropped]),
      [
        [rc, "main", "native", null],
        [credentials, "drop-in", "json", null],
      ],
    );
    const helper = { name: "keychain", args: ["--service", "work"], file: rc, line: 1 };
    assert.deepEqual(terraform.helper, helper);
    assert.deepEqual(terraform.helperChoice, { kind: "runs", helper, plugin });
    assert.equal(terraform.panic, null);
    const hosts = terraform.hosts.map(({ why: _why, ...host }) => host);
    assert.deepEqual(hosts, [
      { host: "var.example.com", from: "variable", variable: "TF_TOKEN_var_example_com" },
      { host: "file.example.com", from: "file", file: rc, line: 4, label: "file.example.com" },
      {
        host: "tokenless.example.com",
        from: "nothing",
        file: rc,
        line: 7,
        label: "tokenless.example.com",
      },
      {
        host: "json.example.com",
        from: "file",
        file: credentials,
        line: 1,
        label: "JSON.example.com:443",
      },
    ]);
    assert.deepEqual(terraform.ignored, [{ file: rc, line: 10, label: "not a host" }]);
    assert.match(terraform.hosts[0]?.why ?? "", /TF_TOKEN_var_example_com/);
    assert.deepEqual(report.tools.OpenTofu.hosts, terraform.hosts, "OpenTofu reads the same");
  });

  test("a file the tool cannot read as Terraform does is reported with its reason", async (t) => {
    const temp = createTempHome(t, "tfck-doctor-json-");
    const rc = temp.inHome(".terraformrc");
    temp.write(rc, 'credentials "a.example.com" {\n  token = \n', 0o600);
    const io = createFakeIo({ homedir: temp.home, platform: "linux", env: { HOME: temp.home } });
    const code = await run(["doctor", "--json"], io, {
      version: "0.0.0-test",
      openStore: () => createMemoryStore(),
      protectSecrets: async () => {},
    });
    assert.equal(code, 0);
    const report = JSON.parse(io.stdout.text) as DoctorReport;
    const [file] = report.tools.Terraform.files;
    assert.ok(file !== undefined);
    assert.equal(file.file, rc);
    assert.match(file.dropped ?? "", /\.terraformrc/);
    assert.equal(report.tools.Terraform.helper, null);
  });
});
