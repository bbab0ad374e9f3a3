// import acts only where Terraform will follow (issue 42, cause 5): when the helper Terraform
// runs is not this one, or it runs none because the executable is not in its plugin
// directory, import refuses in one line with a fix and moves nothing. Through run() with a
// fake Io, in a real temporary HOME.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { run, type Dependencies } from "../../../src/cli/run.ts";
import type { GlobalOptions } from "../../../src/commands/options.ts";
import { createFakeIo } from "../../support/fake-io.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import { createTempHome } from "./temp-home.ts";

const SECRET = "SECRET-import.atlasv1.4242";
const OURS = 'credentials_helper "keychain" {}\n';
const OTHER = 'credentials_helper "other" {}\n';

function setUp(t: TestContext) {
  const box = createTempHome(t, "tfck-import-follows-");
  const rc = box.inHome(".terraformrc");
  const json = box.inHome(".terraform.d", "credentials.tfrc.json");
  const plugins = box.inHome(".terraform.d", "plugins");
  const jsonText = `${JSON.stringify({ credentials: { "a.example.com": { token: SECRET } } })}\n`;
  box.write(json, jsonText, 0o600);
  const store = createMemoryStore();
  const opened: GlobalOptions[] = [];
  const invoke = async (argv: readonly string[]) => {
    const io = createFakeIo({
      env: {},
      platform: "linux",
      arch: "x64",
      homedir: box.home,
      execPath: "/opt/tfck/terraform-credentials-keychain",
      isSea: true,
    });
    const deps: Dependencies = {
      version: "0.0.0-test",
      openStore(options) {
        opened.push(options);
        return store;
      },
      protectSecrets: async () => {},
      runCommand: () => Promise.resolve({ kind: "exited", code: 0 }),
    };
    const code = await run(argv, io, deps);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };
  /** Refused, in one line, with nothing stored and the file as it was. */
  const assertRefused = async (reason: RegExp) => {
    const outcome = await invoke(["import"]);
    assert.equal(outcome.code, 1, outcome.stdout);
    assert.equal(outcome.stdout, "");
    assert.match(outcome.stderr, /^import moves nothing: [^\n]*\n$/);
    assert.match(outcome.stderr, reason);
    assert.ok(!outcome.stderr.includes(SECRET));
    assert.equal(box.text(json), jsonText);
    assert.equal(store.entries.size, 0);
    assert.deepEqual(opened, [], "the store is not even opened");
  };
  return { box, rc, plugins, invoke, assertRefused, store };
}

describe(
  "import acts only where Terraform will follow",
  { skip: process.platform === "win32" && "POSIX paths" },
  () => {
    test("our block in a drop-in, no executable in the plugin directory: refused, with the install fix", async (t) => {
      const { box, assertRefused } = setUp(t);
      box.write(box.inHome(".terraform.d", "keychain.tfrc"), OURS, 0o600);
      await assertRefused(
        /Terraform runs no credentials helper: it finds no "terraform-credentials-keychain" for credentials_helper "keychain" \(.*keychain\.tfrc:1\) in .*plugins or .*plugins\/linux_amd64; run "\/opt\/tfck\/terraform-credentials-keychain install"/,
      );
    });

    test("another helper's block in ~/.terraformrc, ours in a drop-in: refused, Terraform picks at random", async (t) => {
      const { box, rc, plugins, assertRefused } = setUp(t);
      box.write(rc, OTHER, 0o600);
      box.write(box.inHome(".terraform.d", "keychain.tfrc"), OURS, 0o600);
      box.write(`${plugins}/terraform-credentials-keychain`, "", 0o755);
      await assertRefused(
        /merges 2 credentials_helper blocks and runs one at random each time: "other" \(.*\.terraformrc:1, no "terraform-credentials-other" found, so no helper at all\), "keychain" .*; remove every credentials_helper block but this helper's/,
      );
    });

    test("no block at all: refused", async (t) => {
      const { assertRefused } = setUp(t);
      await assertRefused(
        /Terraform runs no credentials helper: .*\.terraformrc and the files it merges set no credentials_helper; run "\/opt\/tfck\/terraform-credentials-keychain install"/,
      );
    });

    test("another helper that runs: refused, with install --force", async (t) => {
      const { box, rc, plugins, assertRefused } = setUp(t);
      box.write(rc, OTHER, 0o600);
      box.write(`${plugins}/terraform-credentials-other`, "", 0o755);
      await assertRefused(
        /Terraform runs the credentials helper "other" \(.*\), not this one; run "\/opt\/tfck\/terraform-credentials-keychain install --force"/,
      );
    });

    test("a label Terraform cannot match to a plugin (it lowercases their names): refused", async (t) => {
      const { box, rc, plugins, assertRefused } = setUp(t);
      box.write(rc, 'credentials_helper "Keychain" {}\n', 0o600);
      box.write(`${plugins}/terraform-credentials-keychain`, "", 0o755);
      await assertRefused(/lowercases plugin names, so a label must be lowercase/);
    });

    test("--keep copies all the same: the files are left as they are", async (t) => {
      const { invoke, store } = setUp(t);
      const outcome = await invoke(["import", "--keep"]);
      assert.equal(outcome.code, 0, outcome.stderr);
      assert.equal(store.entries.size, 1);
    });

    test("our block and its executable: it moves", async (t) => {
      const { box, rc, plugins, invoke, store } = setUp(t);
      box.write(rc, OURS, 0o600);
      box.write(`${plugins}/terraform-credentials-keychain`, "", 0o755);
      const outcome = await invoke(["import"]);
      assert.equal(outcome.code, 0, outcome.stderr);
      assert.match(outcome.stdout, /^moved: a\.example\.com from /);
      assert.equal(store.entries.size, 1);
    });
  },
);
