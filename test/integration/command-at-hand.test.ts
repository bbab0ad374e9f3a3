/**
 * After `install`, the commands for people run by name: the built executable, installed into
 * a fresh HOME whose ~/.local/bin is on PATH, links itself there; a shell then finds
 * `terraform-credentials-keychain` with the copy it was installed from deleted; it follows
 * the installed block (--backend pass); `uninstall` takes the link away. No keychain is
 * touched: pass points at an empty store, and nothing here stores a token.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { requireBuiltHelper } from "../support/helper-process.ts";

test(
  "install links the helper into ~/.local/bin; by name it runs, follows the block, and uninstall unlinks it",
  { skip: process.platform === "win32" && "POSIX symlinks" },
  (t) => {
    const root = mkdtempSync(path.join(os.tmpdir(), "tfck-at-hand-"));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const home = path.join(root, "home");
    mkdirSync(home);
    // A copy to install from, deleted afterwards, as the README's archive route does.
    const extracted = path.join(root, "extracted", "terraform-credentials-keychain");
    mkdirSync(path.dirname(extracted));
    copyFileSync(requireBuiltHelper(), extracted);
    const bin = path.join(home, ".local", "bin");
    // Built from scratch: never this machine's TF_CLI_CONFIG_FILE or HOME.
    const env = {
      HOME: home,
      PATH: `${bin}:/usr/bin:/bin`,
      PASSWORD_STORE_DIR: path.join(root, "no-store"),
      LANG: "C.UTF-8",
    };
    const sh = (script: string) => {
      const result = spawnSync("sh", ["-c", script], { env, cwd: root, encoding: "utf8" });
      return { code: result.status, stdout: result.stdout, stderr: result.stderr };
    };

    const installed = sh(`"${extracted}" --backend pass install`);
    assert.equal(installed.code, 0, installed.stderr);
    const link = path.join(bin, "terraform-credentials-keychain");
    assert.ok(installed.stdout.includes(`link: ${link} added`), installed.stdout);
    assert.ok(
      installed.stdout.includes('"terraform-credentials-keychain --backend pass doctor"'),
      installed.stdout,
    );
    rmSync(path.dirname(extracted), { recursive: true });

    const version = sh("terraform-credentials-keychain --version");
    assert.equal(version.code, 0, version.stderr);
    const plugin = path.join(home, ".terraform.d", "plugins", "terraform-credentials-keychain");
    assert.equal(sh("command -v terraform-credentials-keychain").stdout.trim(), link);

    const doctor = sh("terraform-credentials-keychain doctor");
    // install writes both options into the block, so that Terraform's calls name their store.
    assert.ok(
      doctor.stdout.startsWith(
        `following the credentials_helper block in ${path.join(home, ".terraformrc")}: --backend pass --service terraform-credentials\n`,
      ),
      doctor.stdout,
    );
    assert.ok(doctor.stdout.includes('store --backend pass (service "terraform-credentials")'));

    const uninstalled = sh("terraform-credentials-keychain uninstall");
    assert.equal(uninstalled.code, 0, uninstalled.stderr);
    assert.ok(uninstalled.stdout.includes(`link: ${link} removed`), uninstalled.stdout);
    assert.equal(existsSync(plugin), false);
    assert.throws(() => lstatSync(link), { code: "ENOENT" });
  },
);
