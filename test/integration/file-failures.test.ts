/**
 * The built helper's file operations when the file system refuses them (an immutable file,
 * `chattr +i`, on a private tmpfs), and the directories it puts the helper in when other
 * users could write them.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { assertOneLineFailure } from "../support/protocol-suite.ts";
import { smallDisk } from "../support/small-disk.ts";
import { startPassSession, type PassSession } from "../support/pass-session.ts";

const ONLY_ON_LINUX = linuxOnly("the file failure suite");

/** `chattr +i` on `file`, on the test's own tmpfs: unmounting it takes the file away. */
function immutable(file: string): void {
  execFileSync("chattr", ["+i", file]);
}

/** A HOME on a private tmpfs big enough for a copy of the helper; undefined when skipped. */
function homeOnTmpfs(t: TestContext): string | undefined {
  const disk = smallDisk(t, 400 * 1024);
  if (disk === undefined) return undefined;
  const home = path.join(disk.dir, "home");
  mkdirSync(home, { mode: 0o700 });
  return home;
}

function helperIn(home: string, extraEnv: Record<string, string> = {}) {
  return (args: readonly string[], stdin?: string): Promise<HelperResult> =>
    runHelper(args, {
      env: {
        HOME: home,
        LANG: "C.UTF-8",
        PATH: `${path.join(home, ".local", "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        ...extraEnv,
      },
      timeoutMs: 60_000,
      ...(stdin === undefined ? {} : { stdin }),
    });
}

/** The installed executable's path, from install's "helper: PATH installed" line. */
function installedPath(stdout: string): string {
  const target = /^helper: (\S+) installed$/m.exec(stdout)?.[1];
  assert.ok(target !== undefined, `no "helper: ... installed" line in:\n${stdout}`);
  return target;
}

describe("a file the system refuses to change", { skip: ONLY_ON_LINUX }, () => {
  let session: PassSession;
  before(async () => {
    session = await startPassSession();
  });
  after(async () => {
    await session.close();
  });

  test("import of an immutable credentials.tfrc.json says which file and why, in one line", async (t) => {
    const home = homeOnTmpfs(t);
    if (home === undefined) return;
    const file = path.join(home, ".terraform.d", "credentials.tfrc.json");
    mkdirSync(path.dirname(file));
    writeFileSync(file, '{"credentials":{"app.example.com":{"token":"SECRET-import"}}}\n', {
      mode: 0o600,
    });
    immutable(file);
    // Terraform runs the helper here (block and executable), so import does move.
    writeFileSync(
      path.join(home, ".terraformrc"),
      'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}\n',
    );
    mkdirSync(path.join(home, ".terraform.d", "plugins"));
    writeFileSync(
      path.join(home, ".terraform.d", "plugins", "terraform-credentials-keychain"),
      "",
      {
        mode: 0o755,
      },
    );
    const helper = helperIn(home, {
      GNUPGHOME: session.env.GNUPGHOME ?? "",
      PASSWORD_STORE_DIR: session.storeDir,
    });
    const result = await helper(["--backend", "pass", "import"]);
    assertOneLineFailure(result);
    assert.equal(
      result.stderr,
      `could not remove ${file}: operation not permitted (EPERM); it is still there\n`,
    );
    assert.ok(existsSync(file));
  });

  test("uninstall of an immutable executable says so, and does not report it removed", async (t) => {
    const home = homeOnTmpfs(t);
    if (home === undefined) return;
    const helper = helperIn(home);
    const install = await helper(["install"]);
    assert.equal(install.code, 0, install.stderr);
    const target = installedPath(install.stdout);
    immutable(target);
    const result = await helper(["uninstall"]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `could not remove ${target}: operation not permitted (EPERM); it is still there\n`,
    );
    assert.doesNotMatch(result.stdout, /^helper: .* removed/m);
    // What did happen is said: the block went first.
    assert.match(result.stdout, /^config: .*removed/m);
    assert.ok(existsSync(target));
  });

  test("install that an immutable CLI config refuses reports nothing done and leaves no empty directory", async (t) => {
    const home = homeOnTmpfs(t);
    if (home === undefined) return;
    const config = path.join(home, ".terraformrc");
    writeFileSync(config, "");
    immutable(config);
    const helper = helperIn(home);
    const result = await helper(["install"]);
    assertOneLineFailure(result);
    assert.match(result.stderr, /^could not write .*\.terraformrc: operation not permitted/);
    assert.doesNotMatch(result.stdout, /installed|added/);
    // Only the config is left in HOME: no plugin directory, no ~/.local/bin, no temp file.
    assert.deepEqual(readdirSync(home), [".terraformrc"]);
  });
});

describe("directories other users could write", { skip: ONLY_ON_LINUX }, () => {
  let home: string;
  before(() => {
    home = mkdtempSync(path.join(os.tmpdir(), "tfck-exposed-"));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  test("install warns and doctor flags them, and the printed fixes clear both", async () => {
    const bin = path.join(home, ".local", "bin");
    const plugins = path.join(home, ".terraform.d");
    for (const dir of [bin, plugins]) {
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o777);
    }
    const helper = helperIn(home);
    const install = await helper(["install"]);
    assert.equal(install.code, 0, install.stderr);
    const warnings = install.stdout
      .split("\n")
      .filter((line) => /^warning: .* writable by/.test(line));
    assert.deepEqual(
      warnings.map(
        (line) => /^warning: (\S+) is writable by every user \(mode 0777\)/.exec(line)?.[1],
      ),
      [plugins, bin],
    );
    const doctor = await helper(["doctor"]);
    for (const dir of [plugins, bin]) {
      assert.match(
        doctor.stdout,
        new RegExp(
          `^warn +${dir} is writable by every user .*replace the helper.*\\n +fix: run "chmod go-w ${dir}"$`,
          "m",
        ),
      );
    }
    for (const line of warnings) {
      const fix = /; run "([^"]+)"$/.exec(line)?.[1];
      assert.ok(fix !== undefined, line);
      assert.equal(spawnSync("sh", ["-c", fix]).status, 0, fix);
    }
    const after = await helper(["doctor"]);
    assert.doesNotMatch(after.stdout, /writable by/);
  });
});
