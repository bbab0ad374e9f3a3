/**
 * `npm run setup` (scripts/setup.sh) over a CLI config that already has another block: the
 * refusal names the file and that block's args, comes before the build, and the hint it
 * prints keeps every option the person gave, run as printed. npm itself is a stand-in that runs the script (npm ci and the
 * build are not what is tested; the built executable in dist/ is used as it is).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { test, type TestContext } from "node:test";
import { requireBuiltHelper } from "../support/helper-process.ts";
import { PATIENCE_MS, TEST_PATIENCE_MS } from "../support/timing.ts";

const REPO = path.resolve(import.meta.dirname, "../..");

/** A HOME whose CLI config holds `block`, and a shell whose npm runs setup.sh in this repo. */
function sandbox(t: TestContext, block: string) {
  requireBuiltHelper();
  const root = mkdtempSync(path.join(os.tmpdir(), "tfck-setup-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, "home");
  const bin = path.join(root, "bin");
  mkdirSync(home);
  mkdirSync(bin);
  const npm = path.join(bin, "npm");
  const built = path.join(root, "built");
  // npm ci does nothing, and the build only leaves a mark; "npm run setup -- ARGS" runs the
  // script, as npm would.
  writeFileSync(
    npm,
    `#!/bin/sh
case "$1" in
  ci) exit 0 ;;
  run) shift; [ "$1" = --silent ] && shift
    case "$1" in
      build) touch ${JSON.stringify(built)}; exit 0 ;;
      setup) shift; [ "$1" = -- ] && shift; exec bash ${JSON.stringify(path.join(REPO, "scripts", "setup.sh"))} "$@" ;;
    esac ;;
esac
exit 1
`,
  );
  chmodSync(npm, 0o755);
  const terraformrc = path.join(home, ".terraformrc");
  writeFileSync(terraformrc, block);
  const env = {
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    LANG: "C.UTF-8",
    // No keychain, no pass: install only warns about them.
    DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/bus",
  };
  const sh = (line: string) =>
    spawnSync("sh", ["-c", line], { env, cwd: REPO, encoding: "utf8", timeout: PATIENCE_MS });
  return { terraformrc, sh, built: () => existsSync(built) };
}

/** The command setup's refusal offers. */
function hintOf(stderr: string): string | undefined {
  return /^npm run setup: nothing was changed; to replace it: (.*)$/m.exec(stderr)?.[1];
}

const LINUX_ONLY = {
  skip: process.platform !== "linux" && "Linux only",
  timeout: TEST_PATIENCE_MS,
};

test(
  "setup -- --backend pass over a keychain block: the refusal names file and args, the hint keeps --backend pass and works",
  LINUX_ONLY,
  (t) => {
    const { terraformrc, sh, built } = sandbox(t, 'credentials_helper "keychain" {}\n');
    const refused = sh("npm run setup -- --backend pass");
    assert.equal(refused.status, 1, refused.stderr);
    assert.equal(built(), false, "refused before the build");
    assert.ok(
      refused.stderr.includes(
        `the CLI config ${terraformrc} already sets credentials_helper "keychain"\n`,
      ),
      refused.stderr,
    );
    const hint = hintOf(refused.stderr);
    assert.equal(hint, "npm run setup -- --backend pass --force");
    assert.equal(readFileSync(terraformrc, "utf8"), 'credentials_helper "keychain" {}\n');

    const replaced = sh(hint);
    assert.equal(replaced.status, 0, replaced.stderr);
    assert.equal(built(), true);
    assert.equal(
      readFileSync(terraformrc, "utf8"),
      'credentials_helper "keychain" {\n  args = ["--backend", "pass", "--service", "terraform-credentials"]\n}\n',
    );
  },
);

test(
  "setup with no options over a pass block keeps pass (an upgrade); another store takes its name and --force",
  LINUX_ONLY,
  (t) => {
    const block = 'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}\n';
    const { terraformrc, sh } = sandbox(t, block);
    const again = sh("npm run setup");
    assert.equal(again.status, 0, again.stderr);
    const pass =
      'credentials_helper "keychain" {\n  args = ["--backend", "pass", "--service", "terraform-credentials"]\n}\n';
    assert.equal(readFileSync(terraformrc, "utf8"), pass);

    const refused = sh("npm run setup -- --backend keychain");
    assert.equal(refused.status, 1, refused.stderr);
    const hint = hintOf(refused.stderr);
    assert.equal(hint, "npm run setup -- --backend keychain --force");
    assert.equal(readFileSync(terraformrc, "utf8"), pass);

    const replaced = sh(hint);
    assert.equal(replaced.status, 0, replaced.stderr);
    assert.equal(
      readFileSync(terraformrc, "utf8"),
      'credentials_helper "keychain" {\n  args = ["--backend", "keychain", "--service", "terraform-credentials"]\n}\n',
    );
  },
);
