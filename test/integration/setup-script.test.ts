/**
 * `npm run setup` (scripts/setup.sh) over a CLI config that already has another block: the
 * refusal names the file and that block's args, and the hint it prints keeps every option the
 * person gave, run as printed. npm itself is a stand-in that runs the script (npm ci and the
 * build are not what is tested; the built executable in dist/ is used as it is).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { requireBuiltHelper } from "../support/helper-process.ts";

const REPO = path.resolve(import.meta.dirname, "../..");

test(
  "setup -- --backend pass over a keychain block: the refusal names file and args, the hint keeps --backend pass and works",
  { skip: process.platform !== "linux" && "Linux only", timeout: 60_000 },
  (t) => {
    requireBuiltHelper();
    const root = mkdtempSync(path.join(os.tmpdir(), "tfck-setup-"));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const home = path.join(root, "home");
    const bin = path.join(root, "bin");
    mkdirSync(home);
    mkdirSync(bin);
    const npm = path.join(bin, "npm");
    // npm ci and the build do nothing; "npm run setup -- ARGS" runs the script, as npm would.
    writeFileSync(
      npm,
      `#!/bin/sh
case "$1" in
  ci) exit 0 ;;
  run) shift; [ "$1" = --silent ] && shift
    case "$1" in
      build) exit 0 ;;
      setup) shift; [ "$1" = -- ] && shift; exec bash ${JSON.stringify(path.join(REPO, "scripts", "setup.sh"))} "$@" ;;
    esac ;;
esac
exit 1
`,
    );
    chmodSync(npm, 0o755);
    const terraformrc = path.join(home, ".terraformrc");
    writeFileSync(terraformrc, 'credentials_helper "keychain" {}\n');
    const env = {
      PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: home,
      LANG: "C.UTF-8",
      // No keychain, no pass: install only warns about them.
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/bus",
    };
    const sh = (line: string) =>
      spawnSync("sh", ["-c", line], { env, cwd: REPO, encoding: "utf8", timeout: 60_000 });

    const refused = sh("npm run setup -- --backend pass");
    assert.equal(refused.status, 1, refused.stderr);
    assert.ok(
      refused.stderr.includes(
        `the CLI config ${terraformrc} already sets credentials_helper "keychain"; rerun with --force to replace it\n`,
      ),
      refused.stderr,
    );
    const hint = /^npm run setup: nothing was changed; to replace it: (.*)$/m.exec(
      refused.stderr,
    )?.[1];
    assert.equal(hint, "npm run setup -- --backend pass --force");
    assert.equal(readFileSync(terraformrc, "utf8"), 'credentials_helper "keychain" {}\n');

    const replaced = sh(hint);
    assert.equal(replaced.status, 0, replaced.stderr);
    assert.equal(
      readFileSync(terraformrc, "utf8"),
      'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}\n',
    );
  },
);
