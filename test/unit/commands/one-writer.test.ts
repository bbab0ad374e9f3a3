// Issue 42 cause 6 and issue 43 finding 2: install, uninstall and import write Terraform's
// files through one writer, which keeps hard links, mode and owner, and which never writes
// over a change another program made to the file meanwhile.
import assert from "node:assert/strict";
import fs, { chownSync, linkSync, mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { run } from "../../../src/cli/run.ts";
import type { Dependencies } from "../../../src/cli/run.ts";
import { createFakeIo } from "../../support/fake-io.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import type { MemoryStore } from "../../support/memory-store.ts";
import { createTempHome } from "./temp-home.ts";

const TOKEN = "SECRET-dddd.atlasv1.0001";
const LOGIN = "SECRET-llll.atlasv1.0002";
const HOST = "tfe.example.com";
const OTHER = "app.terraform.io";
const BLOCK = 'credentials_helper "keychain" {}\n';

function tokenIn(store: MemoryStore): unknown {
  return (JSON.parse(store.entries.get(HOST) ?? "{}") as { token?: unknown }).token;
}

function setUp(t: TestContext) {
  const box = createTempHome(t, "tfck-writer-");
  const rc = box.inHome(".terraformrc");
  const json = box.inHome(".terraform.d", "credentials.tfrc.json");
  const executable = path.join(box.root, "opt", "terraform-credentials-keychain");
  box.write(executable, "#!/bin/sh\necho 0.0.0-test\n", 0o755);
  // Installed where Terraform looks, so that import moves (it refuses where Terraform would
  // run no helper of ours).
  box.write(
    box.inHome(".terraform.d", "plugins", "terraform-credentials-keychain"),
    "#!/bin/sh\necho 0.0.0-test\n",
    0o755,
  );
  const store = createMemoryStore();
  const invoke = async (argv: readonly string[]) => {
    const io = createFakeIo({
      env: {},
      platform: "darwin",
      arch: "arm64",
      stdinIsTTY: true,
      homedir: box.home,
      execPath: executable,
      isSea: true,
    });
    const deps: Dependencies = {
      version: "0.0.0-test",
      openStore: () => store,
      protectSecrets: async () => {},
      runCommand: () => Promise.resolve({ kind: "exited", code: 0 }),
    };
    const code = await run(argv, io, deps);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };
  const credentials = (entries: Record<string, string>) =>
    `${JSON.stringify(
      {
        credentials: Object.fromEntries(
          Object.entries(entries).map(([host, token]) => [host, { token }]),
        ),
      },
      null,
      2,
    )}\n`;
  return { box, rc, json, store, invoke, credentials };
}

/** Both names are still one file: same inode, same text, same mode. */
function assertOneFile(a: string, b: string, mode: number): void {
  assert.equal(statSync(a).ino, statSync(b).ino, `${a} and ${b} are no longer one file`);
  assert.equal(statSync(a).nlink, 2);
  assert.equal(statSync(a).mode & 0o7777, mode);
}

/**
 * Runs `hook` once, synchronously, the first time the code under test opens a path that
 * `matches` (what `fs.openSync` was given), before the open itself: a program that writes
 * the file at exactly that moment. Restored when the test ends.
 */
function onOpen(
  t: TestContext,
  matches: (file: string, flags: unknown) => boolean,
  hook: () => void,
): { fired: () => boolean } {
  let fired = false;
  const original = fs.openSync;
  t.mock.method(fs, "openSync", (file: fs.PathLike, flags: fs.OpenMode, mode?: fs.Mode) => {
    if (!fired && matches(String(file), flags)) {
      fired = true;
      hook();
    }
    return original(file, flags, mode);
  });
  syncBuiltinESMExports();
  t.after(() => {
    t.mock.restoreAll();
    syncBuiltinESMExports();
  });
  return { fired: () => fired };
}

/** What `terraform login` does to credentials.tfrc.json: a new file renamed over it. */
function terraformLogin(file: string, text: string): void {
  const temp = `${file}.login-tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, file);
}

describe(
  "one writer for Terraform's files",
  { skip: process.platform === "win32" && "POSIX modes" },
  () => {
    test("install into a hard-linked ~/.terraformrc keeps the link and mode; import then leaves no token in either name", async (t) => {
      const { box, rc, store, invoke } = setUp(t);
      const dotfile = box.inHome("dotfiles", "terraformrc");
      box.write(dotfile, `credentials "${HOST}" {\n  token = "${TOKEN}"\n}\n`, 0o640);
      linkSync(dotfile, rc);
      const installed = await invoke(["install"]);
      assert.equal(installed.code, 0, installed.stderr);
      assertOneFile(rc, dotfile, 0o640);
      assert.match(box.text(dotfile) ?? "", /credentials_helper "keychain"/);
      const imported = await invoke(["import"]);
      assert.equal(imported.code, 0, imported.stderr);
      assert.equal(tokenIn(store), TOKEN);
      assertOneFile(rc, dotfile, 0o640);
      assert.doesNotMatch(box.text(dotfile) ?? "", /SECRET/);
      const removed = await invoke(["uninstall"]);
      assert.equal(removed.code, 0, removed.stderr);
      assertOneFile(rc, dotfile, 0o640);
      assert.doesNotMatch(box.text(dotfile) ?? "", /credentials_helper/);
    });

    test("import from a hard-linked credentials.tfrc.json keeps the link and mode", async (t) => {
      const { box, rc, json, store, invoke, credentials } = setUp(t);
      box.write(rc, BLOCK, 0o600);
      const dotfile = box.inHome("dotfiles", "credentials.tfrc.json");
      box.write(dotfile, credentials({ [HOST]: TOKEN }), 0o640);
      mkdirSync(path.dirname(json), { recursive: true });
      linkSync(dotfile, json);
      const imported = await invoke(["import"]);
      assert.equal(imported.code, 0, imported.stderr);
      assert.equal(tokenIn(store), TOKEN);
      assertOneFile(json, dotfile, 0o640);
      assert.doesNotMatch(box.text(dotfile) ?? "", /SECRET/);
    });

    test(
      "install keeps the owner of ~/.terraformrc (as root, a file of another user's)",
      { skip: process.getuid?.() !== 0 && "needs root to make a file of another owner" },
      async (t) => {
        const { box, rc, invoke } = setUp(t);
        box.write(rc, "disable_checkpoint = true\n", 0o640);
        chownSync(rc, 4242, 4343);
        const installed = await invoke(["install"]);
        assert.equal(installed.code, 0, installed.stderr);
        assert.match(box.text(rc) ?? "", /credentials_helper "keychain"/);
        assert.deepEqual([statSync(rc).uid, statSync(rc).gid, box.mode(rc)], [4242, 4343, 0o640]);
      },
    );

    // Issue 43 finding 2: a login that lands while import writes a hard-linked file is kept.
    for (const [moment, matches] of [
      [
        "while import stages its copy",
        (file: string, flags: unknown) =>
          flags === "wx" && file.includes(".credentials.tfrc.json."),
      ],
      [
        "just before import writes the file in place",
        (file: string, flags: unknown) =>
          flags === fs.constants.O_WRONLY && file.endsWith("credentials.tfrc.json"),
      ],
    ] as const) {
      test(`a terraform login that lands ${moment} in a hard-linked credentials.tfrc.json is kept`, async (t) => {
        const { box, rc, json, store, invoke, credentials } = setUp(t);
        box.write(rc, BLOCK, 0o600);
        const dotfile = box.inHome("dotfiles", "credentials.tfrc.json");
        box.write(dotfile, credentials({ [HOST]: TOKEN }), 0o600);
        mkdirSync(path.dirname(json), { recursive: true });
        mkdirSync(path.dirname(json), { recursive: true });
        linkSync(dotfile, json);
        const login = onOpen(t, matches, () =>
          terraformLogin(json, credentials({ [HOST]: TOKEN, [OTHER]: LOGIN })),
        );
        const imported = await invoke(["import"]);
        assert.ok(login.fired(), "the login ran during the import");
        assert.equal(imported.code, 0, imported.stderr);
        assert.equal(tokenIn(store), TOKEN);
        const after = JSON.parse(box.text(json) ?? "{}") as {
          credentials: Record<string, unknown>;
        };
        assert.deepEqual(after.credentials, { [OTHER]: { token: LOGIN } });
      });
    }
  },
);
