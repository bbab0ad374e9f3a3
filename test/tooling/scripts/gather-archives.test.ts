import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { binaryName } from "../../../scripts/channels.ts";
import { archiveName, gatherRelease } from "../../../scripts/gather-archives.ts";
import { ROOT } from "../../../scripts/packages.ts";
import { TARGET_NAMES } from "../../../scripts/targets.ts";
import type { TargetName } from "../../../scripts/targets.ts";

const VERSION = "1.2.3";

/** A directory with one archive per target, as the build jobs upload them; its path. */
function archivesDir(targets: readonly TargetName[] = TARGET_NAMES): string {
  const dir = mkdtempSync(path.join(tmpdir(), "tfck-gather-test-"));
  for (const target of targets) {
    const staging = path.join(dir, `staging-${target}`);
    mkdirSync(staging);
    writeFileSync(path.join(staging, binaryName(target)), `binary of ${target}\n`);
    const archive = path.join(dir, archiveName(VERSION, target));
    if (archive.endsWith(".zip")) {
      execFileSync("zip", ["-q", archive, binaryName(target)], { cwd: staging });
    } else {
      execFileSync("tar", ["-cJf", archive, "-C", staging, binaryName(target)]);
    }
    rmSync(staging, { recursive: true });
  }
  return dir;
}

// The publishing job runs on Linux; Git Bash on Windows has no zip to make the archives.
describe("gathering a release from its archives", { skip: process.platform === "win32" }, () => {
  test("SHA256SUMS lists every archive once, and npm ships the binary from the archive", (t) => {
    const dir = archivesDir();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    gatherRelease({ root: ROOT, version: VERSION, dir, baseUrl: "https://example.test/v1.2.3" });
    const sums = readFileSync(path.join(dir, "SHA256SUMS"), "utf8").trimEnd().split("\n");
    assert.equal(sums.length, TARGET_NAMES.length);
    for (const target of TARGET_NAMES) {
      const file = archiveName(VERSION, target);
      const digest = createHash("sha256")
        .update(readFileSync(path.join(dir, file)))
        .digest("hex");
      assert.ok(sums.includes(`${digest}  ${file}`), `${file} in\n${sums.join("\n")}`);
      const shipped = path.join(
        dir,
        "npm",
        `terraform-credentials-keychain-${target}`,
        "bin",
        binaryName(target),
      );
      assert.equal(readFileSync(shipped, "utf8"), `binary of ${target}\n`);
    }
    const formula = readFileSync(
      path.join(dir, "homebrew/terraform-credentials-keychain.rb"),
      "utf8",
    );
    assert.match(
      formula,
      /url "https:\/\/example\.test\/v1\.2\.3\/terraform-credentials-keychain_1\.2\.3_darwin-x64\.tar\.xz"/,
    );
    assert.ok(existsSync(path.join(dir, "scoop/terraform-credentials-keychain.json")));
  });

  test("a missing target stops the release before anything is written", (t) => {
    const dir = archivesDir(TARGET_NAMES.filter((target) => target !== "darwin-x64"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    assert.throws(
      () => gatherRelease({ root: ROOT, version: VERSION, dir }),
      /no archive for darwin-x64/,
    );
    assert.equal(existsSync(path.join(dir, "SHA256SUMS")), false);
  });

  test("an archive of another version is refused", (t) => {
    const dir = archivesDir();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, "terraform-credentials-keychain_1.2.2_linux-x64.tar.xz"), "");
    assert.throws(
      () => gatherRelease({ root: ROOT, version: VERSION, dir }),
      /terraform-credentials-keychain_1\.2\.2_linux-x64\.tar\.xz: not an archive of terraform-credentials-keychain 1\.2\.3/,
    );
  });
});
