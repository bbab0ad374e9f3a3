// Issue 35's findings 2-7, 10 and 11, each as a person meets it: through run() with a fake
// Io, a temporary HOME laid out as Terraform reads it (see test/e2e/terraform-view.test.ts,
// where the real terraform says which token it sends), and a memory store.
import assert from "node:assert/strict";
import { linkSync, statSync } from "node:fs";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { run } from "../../../src/cli/run.ts";
import type { Dependencies } from "../../../src/cli/run.ts";
import type { GlobalOptions } from "../../../src/commands/options.ts";
import { createFakeIo } from "../../support/fake-io.ts";
import type { FakeIoOptions } from "../../support/fake-io.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import type { MemoryStore } from "../../support/memory-store.ts";
import { createTempHome } from "./temp-home.ts";
import { fakeTerraformDir } from "../../support/fake-terraform.ts";

const OLD = "SECRET-oooo.atlasv1.0001";
const NEW = "SECRET-nnnn.atlasv1.0002";
const BLOCK = 'credentials_helper "keychain" {}\n';
const HOST = "tfe.example.com";

/** The token the store holds for HOST. */
function tokenIn(store: MemoryStore): unknown {
  return (JSON.parse(store.entries.get(HOST) ?? "{}") as { token?: unknown }).token;
}

/** A HOME with the helper installed; `env` is given the path of a file in it. */
function setUp(
  t: TestContext,
  env: (inHome: (name: string) => string) => Record<string, string> = () => ({}),
) {
  const box = createTempHome(t, "tfck-findings-");
  const rc = box.inHome(".terraformrc");
  const json = box.inHome(".terraform.d", "credentials.tfrc.json");
  const plugin = box.inHome(".terraform.d", "plugins", "terraform-credentials-keychain");
  box.write(plugin, "#!/bin/sh\necho 0.0.0-test\n", 0o755);
  const ioOptions: FakeIoOptions = {
    env: env((name) => box.inHome(name)),
    // darwin: doctor's store probe needs no daemon there; the paths are POSIX alike.
    platform: "darwin",
    arch: "arm64",
    // A typed get follows the block in effect (as every call with no store on its line).
    stdinIsTTY: true,
    homedir: box.home,
    execPath: "/opt/tfck/terraform-credentials-keychain",
    isSea: true,
  };
  const store = createMemoryStore();
  const opened: GlobalOptions[] = [];
  const invoke = async (argv: readonly string[], with_: MemoryStore = store) => {
    const io = createFakeIo(ioOptions);
    const deps: Dependencies = {
      version: "0.0.0-test",
      openStore(options) {
        opened.push(options);
        return with_;
      },
      protectSecrets: async () => {},
      runCommand: () => Promise.resolve({ kind: "exited", code: 0 }),
    };
    const code = await run(argv, io, deps);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };
  const credentials = (entries: Record<string, Record<string, string>>) =>
    `${JSON.stringify({ credentials: entries }, null, 2)}\n`;
  return { box, rc, json, store, opened, invoke, credentials };
}

describe("issue 35", { skip: process.platform === "win32" && "POSIX modes" }, () => {
  test("finding 2: a host in credentials.tfrc.json (sent) and ~/.terraformrc (another token) is refused, naming the copy; nothing changes", async (t) => {
    const { box, rc, json, store, invoke, credentials } = setUp(t);
    const rcText = `${BLOCK}\ncredentials "${HOST}" {\n  token = "${OLD}"\n}\n`;
    const jsonText = credentials({ [HOST]: { token: NEW } });
    box.write(rc, rcText, 0o600);
    box.write(json, jsonText, 0o600);
    const result = await invoke(["import"]);
    assert.notEqual(result.code, 0);
    assert.match(result.stdout, new RegExp(`\\(${rc}:3\\)`));
    assert.equal(box.text(rc), rcText);
    assert.equal(box.text(json), jsonText);
    assert.equal(store.entries.size, 0);
  });

  test("finding 2: a token block and a tokenless block for one host in one file: the token moves and both blocks go", async (t) => {
    const { box, rc, store, invoke } = setUp(t);
    box.write(
      rc,
      `${BLOCK}\ncredentials "${HOST}" {\n  token = "${NEW}"\n}\n\ncredentials "${HOST}" {\n  organization = "acme"\n}\n`,
      0o600,
    );
    const result = await invoke(["import"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(box.text(rc), BLOCK);
    assert.equal(tokenIn(store), NEW);
  });

  test("finding 3: a hard-linked ~/.terraformrc: no link keeps the token, mode and links stay", async (t) => {
    const { box, rc, store, invoke } = setUp(t);
    const dotfile = box.inHome("dotfiles", "terraformrc");
    box.write(dotfile, `${BLOCK}credentials "${HOST}" { token = "${NEW}" }\n`, 0o640);
    linkSync(dotfile, rc);
    const result = await invoke(["import"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(tokenIn(store), NEW);
    for (const file of [rc, dotfile]) {
      assert.equal(box.text(file), BLOCK, file);
      assert.equal(box.mode(file), 0o640, file);
    }
    assert.equal(statSync(rc).ino, statSync(dotfile).ino);
  });

  test("finding 4: the credentials_helper block of a drop-in is the one in effect: import and a typed get use its store", async (t) => {
    const { box, rc, json, opened, invoke, credentials } = setUp(t);
    box.write(rc, `credentials "other.example.com" { token = "${OLD}" }\n`, 0o600);
    box.write(
      box.inHome(".terraform.d", "keychain.tfrc"),
      'credentials_helper "keychain" {\n  args = ["--service", "other"]\n}\n',
      0o600,
    );
    box.write(json, credentials({ [HOST]: { token: NEW } }), 0o600);
    const imported = await invoke(["import"]);
    assert.equal(imported.code, 0, imported.stderr);
    const got = await invoke(["get", HOST]);
    assert.equal(got.code, 0, got.stderr);
    assert.deepEqual(
      opened.map((options) => options.service),
      ["other", "other"],
    );
  });

  test("finding 4: doctor finds the block in a drop-in, and does not call the CLI config missing", async (t) => {
    const { box, invoke } = setUp(t);
    const dropIn = box.inHome(".terraform.d", "keychain.tfrc");
    box.write(dropIn, BLOCK, 0o600);
    const result = await invoke(["doctor"]);
    assert.doesNotMatch(result.stdout, /does not exist|has no credentials_helper/);
    assert.match(result.stdout, new RegExp(`has the credentials_helper block \\(from ${dropIn}`));
  });

  test("finding 4: install refuses to write a block a drop-in's block would override; uninstall removes ours from the drop-in", async (t) => {
    const { box, rc, invoke } = setUp(t);
    const dropIn = box.inHome(".terraform.d", "keychain.tfrc");
    const text = 'credentials_helper "keychain" {\n  args = ["--service", "other"]\n}\n';
    box.write(dropIn, text, 0o600);
    const installed = await invoke(["install"]);
    assert.notEqual(installed.code, 0);
    assert.match(
      installed.stderr,
      new RegExp(`^${dropIn} sets credentials_helper "keychain" with args`),
    );
    assert.equal(box.text(rc), undefined);
    const removed = await invoke(["uninstall"]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(box.text(dropIn), undefined);
  });

  for (const variable of ["TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG"]) {
    test(`finding 5: with ${variable} set, credentials.tfrc.json and drop-ins are not read, and import leaves them alone`, async (t) => {
      const { box, json, store, invoke, credentials } = setUp(t, (inHome) => ({
        [variable]: inHome("profile.tfrc"),
      }));
      box.write(box.inHome("profile.tfrc"), BLOCK, 0o600);
      const jsonText = credentials({ [HOST]: { token: NEW } });
      box.write(json, jsonText, 0o600);
      const dropIn = box.inHome(".terraform.d", "team.tfrc");
      const dropInText = `credentials "b.example.com" { token = "${OLD}" }\n`;
      box.write(dropIn, dropInText, 0o600);
      const result = await invoke(["import"]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(box.text(json), jsonText);
      assert.equal(box.text(dropIn), dropInText);
      assert.equal(store.entries.size, 0);
    });
  }

  test("finding 6: TOKEN is not a token: reported, left alone, and import exits non-zero", async (t) => {
    const { box, rc, store, invoke } = setUp(t);
    const text = `${BLOCK}credentials "${HOST}" {\n  TOKEN = "${NEW}"\n}\n`;
    box.write(rc, text, 0o600);
    const result = await invoke(["import"]);
    assert.notEqual(result.code, 0);
    assert.match(result.stdout, /"TOKEN"/);
    assert.equal(box.text(rc), text);
    assert.equal(store.entries.size, 0);
  });

  test("finding 7: doctor under TERRAFORM_CONFIG does not call credentials.tfrc.json both unread and winning", async (t) => {
    const { box, json, invoke, credentials } = setUp(t, (inHome) => ({
      TERRAFORM_CONFIG: inHome("profile.tfrc"),
    }));
    box.write(box.inHome("profile.tfrc"), BLOCK, 0o600);
    box.write(json, credentials({ [HOST]: { token: NEW } }), 0o600);
    const result = await invoke(["doctor"]);
    assert.match(result.stdout, /credentials\.tfrc\.json is not read/);
    assert.doesNotMatch(result.stdout, new RegExp(`${HOST}.*wins over the helper`));
  });

  test("finding 10: a host left behind (the store holds another token) makes import exit non-zero after its summary", async (t) => {
    const { box, json, store, invoke, credentials } = setUp(t);
    box.write(box.inHome(".terraformrc"), BLOCK, 0o600);
    box.write(json, credentials({ [HOST]: { token: NEW } }), 0o600);
    await store.store(HOST as never, JSON.stringify({ token: OLD }));
    const result = await invoke(["import"]);
    assert.match(result.stdout, new RegExp(`kept: ${HOST.replaceAll(".", "\\.")}`));
    assert.notEqual(result.code, 0);
  });

  test("finding 11: the terraform stacks note names each stored host that needs it, once", async (t) => {
    // A Terraform with `terraform stacks` on PATH: only there does the note apply.
    const { box, invoke } = setUp(t, (inHome) => ({
      PATH: fakeTerraformDir(inHome("tools"), "1.16.0"),
    }));
    box.write(box.inHome(".terraformrc"), BLOCK, 0o600);
    const store = createMemoryStore({
      "a.example.com": "{}",
      "b.example.com": "{}",
      "app.terraform.io": "{}",
    });
    const result = await invoke(["doctor"], store);
    const note = result.stdout.split("\n").find((line) => line.includes("terraform stacks"));
    assert.ok(note, result.stdout);
    assert.match(note, /a\.example\.com/);
    assert.match(note, /b\.example\.com/);
  });
});
