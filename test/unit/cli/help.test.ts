/**
 * The help a person reads: short enough to read (the top level under 40 lines, each command
 * under 25), the options before the command described once, and an example block that is
 * the one `install` writes (issue 43, finding 9).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { run, type Dependencies } from "../../../src/cli/run.ts";
import { createFakeIo, type FakeIoOptions } from "../../support/fake-io.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import { createTempHome } from "../commands/temp-home.ts";

async function invoke(argv: readonly string[], ioOptions: FakeIoOptions = {}) {
  const io = createFakeIo(ioOptions);
  const store = createMemoryStore();
  const deps: Dependencies = {
    version: "0.0.0-test",
    openStore: () => store,
    protectSecrets: async () => {},
    runCommand: () => Promise.resolve({ kind: "exited", code: 0 }),
  };
  const code = await run(argv, io, deps);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const COMMANDS = [
  "get",
  "store",
  "forget",
  "help",
  "install",
  "uninstall",
  "import",
  "list",
  "doctor",
  "exec",
];
const GLOBAL_OPTIONS = ["--service <name>", "--backend <store>", "--timeout <seconds>"];
const lines = (text: string) => text.replace(/\n$/, "").split("\n");

describe("--help", () => {
  test("the top level is under 40 lines, and describes the options before the command", async () => {
    const { code, stdout } = await invoke(["--help"]);
    assert.equal(code, 0);
    assert.ok(lines(stdout).length < 40, `${lines(stdout).length} lines:\n${stdout}`);
    for (const option of GLOBAL_OPTIONS) assert.match(stdout, new RegExp(`^  ${option} `, "m"));
  });

  for (const command of COMMANDS) {
    test(`${command} --help is under 25 lines; the options before it only in its usage line`, async () => {
      const { code, stdout } = await invoke([command, "--help"]);
      assert.equal(code, 0);
      assert.ok(lines(stdout).length < 25, `${lines(stdout).length} lines:\n${stdout}`);
      const [usage = "", ...rest] = lines(stdout);
      if (command !== "help") {
        for (const option of GLOBAL_OPTIONS) assert.ok(usage.includes(`[${option}]`), usage);
      }
      // Described once, in the top level: not again here.
      for (const option of GLOBAL_OPTIONS)
        assert.ok(!rest.some((line) => line.startsWith(`  ${option}`)), stdout);
    });
  }

  test("import --help says the store follows the block too, not --backend alone", async () => {
    const { stdout } = await invoke(["import", "--help"]);
    assert.doesNotMatch(stdout, /the store --backend selects/);
    assert.match(stdout, /else the one\s+the args of the credentials_helper block in effect name/);
  });

  test("the example is the block install writes, in the top level and in install --help", async (t) => {
    const box = createTempHome(t, "tfck-help-");
    const executable = path.join(box.root, "dist", "terraform-credentials-keychain");
    box.write(executable, "#!/bin/sh\n", 0o755);
    const installed = await invoke(["--service", "work", "install"], {
      env: {},
      platform: "darwin",
      arch: "x64",
      homedir: box.home,
      execPath: executable,
      isSea: true,
    });
    assert.equal(installed.code, 0, installed.stderr);
    const written = box.text(box.inHome(".terraformrc")) ?? "";
    assert.match(written, /^credentials_helper "keychain" \{\n/);
    const example = lines(written)
      .map((line) => `  ${line}`)
      .join("\n");
    for (const argv of [["--help"], ["install", "--help"]]) {
      const { stdout } = await invoke(argv);
      assert.ok(stdout.includes(`"--service work install"`), stdout);
      assert.ok(stdout.includes(`:\n${example}\n`), `${argv.join(" ")}:\n${stdout}`);
    }
  });
});
