import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import {
  archiveReadme,
  countOf,
  homebrewFormula,
  mainPackageJson,
  platformPackageJson,
  scoopManifest,
} from "../../../scripts/channels.ts";
import type { ReleaseArchive } from "../../../scripts/channels.ts";
import { ROOT } from "../../../scripts/packages.ts";
import { PROJECT_HOME, projectHome } from "../../../scripts/project-home.ts";
import { TARGET_NAMES } from "../../../scripts/targets.ts";

const BASE = "https://example.test/v1.2.3";
const archives: ReleaseArchive[] = TARGET_NAMES.map((target, index) => ({
  target,
  file: `terraform-credentials-keychain_1.2.3_${target}.${target.startsWith("win-") ? "zip" : "tar.xz"}`,
  sha256: String(index).repeat(64),
}));

function hasRuby(): boolean {
  try {
    execFileSync("ruby", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("Homebrew formula", () => {
  const formula = homebrewFormula("1.2.3", archives, BASE);

  test("each macOS and Linux archive sits under its OS and CPU block with its own hash", () => {
    for (const [os, arch, target] of [
      ["on_macos", "on_arm", "darwin-arm64"],
      ["on_macos", "on_intel", "darwin-x64"],
      ["on_linux", "on_arm", "linux-arm64"],
      ["on_linux", "on_intel", "linux-x64"],
    ] as const) {
      const archive = archives.find((one) => one.target === target)!;
      const block = new RegExp(
        `  ${os} do\\n(?:    .*\\n)*?    ${arch} do\\n      url "${BASE}/${archive.file}"\\n      sha256 "${archive.sha256}"\\n    end`,
      );
      assert.match(formula, block, `${target}:\n${formula}`);
    }
    assert.ok(!formula.includes("_win-x64.zip"), formula);
    assert.match(formula, /^ {2}version "1\.2\.3"$/m);
  });

  test("with only some archives, only their blocks are written", () => {
    const linux = homebrewFormula(
      "1.2.3",
      archives.filter((one) => one.target === "linux-x64"),
      BASE,
    );
    assert.ok(linux.includes("on_linux") && !linux.includes("on_macos"), linux);
    assert.throws(() => homebrewFormula("1.2.3", [], BASE), /no macOS or Linux archive/);
  });

  test("ruby -c parses it", (t) => {
    if (!hasRuby()) {
      t.skip("ruby not installed (apt-get install ruby)");
      return;
    }
    const dir = mkdtempSync(path.join(tmpdir(), "formula-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "terraform-credentials-keychain.rb");
    writeFileSync(file, formula);
    assert.equal(execFileSync("ruby", ["-c", file], { encoding: "utf8" }).trim(), "Syntax OK");
  });
});

describe("Scoop manifest", () => {
  test("names the win-x64 and win-arm64 zips and their hashes, and the .exe", () => {
    const manifest = JSON.parse(JSON.stringify(scoopManifest("1.2.3", archives, BASE))) as {
      version: string;
      architecture: Record<string, { url: string; hash: string }>;
      bin: string;
    };
    const x64 = archives.find((one) => one.target === "win-x64")!;
    const arm64 = archives.find((one) => one.target === "win-arm64")!;
    assert.equal(manifest.version, "1.2.3");
    assert.deepEqual(manifest.architecture, {
      "64bit": { url: `${BASE}/${x64.file}`, hash: x64.sha256 },
      arm64: { url: `${BASE}/${arm64.file}`, hash: arm64.sha256 },
    });
    assert.equal(manifest.bin, "terraform-credentials-keychain.exe");
  });

  test("leaves arm64 out of a release without the win-arm64 archive", () => {
    const x64Only = archives.filter((one) => one.target !== "win-arm64");
    const manifest = scoopManifest("1.2.3", x64Only, BASE) as { architecture: object };
    assert.deepEqual(Object.keys(manifest.architecture), ["64bit"]);
  });

  test("refuses a release without the win-x64 archive", () => {
    assert.throws(() => scoopManifest("1.2.3", archives.slice(0, 2), BASE), /no win-x64 archive/);
  });
});

describe("npm packages", () => {
  test("the main package's bin is the launcher, with each platform as an exact optional dependency", () => {
    const main = mainPackageJson("1.2.3", ["linux-x64", "win-x64"]) as Record<string, unknown>;
    assert.deepEqual(main["bin"], { "terraform-credentials-keychain": "bin/launcher.cjs" });
    assert.deepEqual(main["optionalDependencies"], {
      "terraform-credentials-keychain-linux-x64": "1.2.3",
      "terraform-credentials-keychain-win-x64": "1.2.3",
    });
  });

  test("a platform package is limited to its OS and CPU, in npm's names", () => {
    const windows = platformPackageJson("1.2.3", "win-x64") as Record<string, unknown>;
    assert.deepEqual([windows["os"], windows["cpu"]], [["win32"], ["x64"]]);
    assert.deepEqual(windows["files"], ["bin/terraform-credentials-keychain.exe", "LICENSE"]);
    assert.equal(windows["libc"], undefined);
    const linux = platformPackageJson("1.2.3", "linux-arm64") as Record<string, unknown>;
    assert.deepEqual([linux["os"], linux["cpu"], linux["libc"]], [["linux"], ["arm64"], ["glibc"]]);
    const mac = platformPackageJson("1.2.3", "darwin-arm64") as Record<string, unknown>;
    assert.deepEqual(
      [mac["name"], mac["os"], mac["cpu"]],
      ["terraform-credentials-keychain-darwin-arm64", ["darwin"], ["arm64"]],
    );
  });

  test("every package carries package.json's repository, homepage and bugs, for provenance", () => {
    const own = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      repository: unknown;
      homepage: unknown;
      bugs: unknown;
    };
    for (const json of [
      mainPackageJson("1.2.3", ["linux-x64"]),
      platformPackageJson("1.2.3", "darwin-x64"),
    ] as Record<string, unknown>[]) {
      assert.deepEqual(
        [json["repository"], json["homepage"], json["bugs"]],
        [own.repository, own.homepage, own.bugs],
      );
    }
  });
});

describe("release URLs", () => {
  test("the default download location is the tag's GitHub release in package.json's repository", () => {
    const formula = homebrewFormula("1.2.3", archives);
    assert.match(
      formula,
      /url "https:\/\/github\.com\/terraform-credentials-keychain\/terraform-credentials-keychain\/releases\/download\/v1\.2\.3\/terraform-credentials-keychain_1\.2\.3_darwin-arm64\.tar\.xz"/,
    );
  });
});

describe("the archive's README", () => {
  const template = readFileSync(path.join(ROOT, "packaging/archive-README.md"), "utf8");

  test("names the version and package.json's homepage, releases and bugs, and no placeholder", () => {
    const readme = archiveReadme(template, "1.2.3");
    assert.match(readme, /^# terraform-credentials-keychain 1\.2\.3$/m);
    for (const url of [
      PROJECT_HOME.homepage,
      `${PROJECT_HOME.repositoryUrl}/releases`,
      PROJECT_HOME.bugs,
    ]) {
      assert.ok(readme.includes(url), url);
    }
    assert.doesNotMatch(readme, /\{\{/);
  });

  test("follows another home", () => {
    const home = projectHome({
      repository: { type: "git", url: "git+https://github.com/acme/helper.git" },
      homepage: "https://github.com/acme/helper#readme",
      bugs: { url: "https://github.com/acme/helper/issues" },
    });
    const readme = archiveReadme("{{homepage}} {{releases}} {{bugs}}", "1.2.3", home);
    assert.equal(
      readme,
      "https://github.com/acme/helper#readme https://github.com/acme/helper/releases https://github.com/acme/helper/issues",
    );
  });

  test("refuses an unknown placeholder", () => {
    assert.throws(
      () => archiveReadme("see {{website}}", "1.2.3"),
      /unknown placeholder \{\{website\}\}/,
    );
  });
});

describe("counts in messages", () => {
  test("1 archive, 2 archives", () => {
    assert.equal(countOf(1, "archive"), "1 archive");
    assert.equal(countOf(2, "archive"), "2 archives");
    assert.equal(countOf(0, "archive"), "0 archives");
  });
});
