// writeChannels on disk, with stand-in binaries: the files a tap, a bucket and npm publish read.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import type { ReleaseArchive } from "../../../scripts/channels.ts";
import { PROJECT_HOME } from "../../../scripts/project-home.ts";
import { writeChannels } from "../../../scripts/write-channels.ts";

const ROOT = path.join(import.meta.dirname, "../../..");

test("release writes a Scoop manifest, a formula and npm packages that name the archives' hashes", (t) => {
  const out = mkdtempSync(path.join(tmpdir(), "channels-"));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const archives: ReleaseArchive[] = [
    { target: "linux-x64", file: "tfck_9.8.7_linux-x64.tar.xz", sha256: "a".repeat(64) },
    { target: "win-x64", file: "tfck_9.8.7_win-x64.zip", sha256: "b".repeat(64) },
  ];
  const binaries = new Map(
    archives.map(({ target }) => {
      const file = path.join(out, `binary-${target}`);
      writeFileSync(file, `binary of ${target}`);
      return [target, file];
    }),
  );
  const log = console.log;
  console.log = () => undefined;
  try {
    writeChannels(path.join(out, "release"), {
      root: ROOT,
      version: "9.8.7",
      archives,
      binaryOf: ({ target }) => binaries.get(target)!,
      baseUrl: "https://example.test/dl",
    });
  } finally {
    console.log = log;
  }
  const release = path.join(out, "release");

  const manifest = JSON.parse(
    readFileSync(path.join(release, "scoop/terraform-credentials-keychain.json"), "utf8"),
  ) as { version: string; architecture: unknown };
  assert.equal(manifest.version, "9.8.7");
  assert.deepEqual(manifest.architecture, {
    "64bit": { url: "https://example.test/dl/tfck_9.8.7_win-x64.zip", hash: "b".repeat(64) },
  });

  const formula = readFileSync(
    path.join(release, "homebrew/terraform-credentials-keychain.rb"),
    "utf8",
  );
  assert.ok(
    formula.includes(
      `url "https://example.test/dl/tfck_9.8.7_linux-x64.tar.xz"\n      sha256 "${"a".repeat(64)}"`,
    ),
    formula,
  );

  const windows = path.join(release, "npm/terraform-credentials-keychain-win-x64");
  assert.equal(
    readFileSync(path.join(windows, "bin/terraform-credentials-keychain.exe"), "utf8"),
    "binary of win-x64",
  );
  const linuxBinary = path.join(
    release,
    "npm/terraform-credentials-keychain-linux-x64/bin/terraform-credentials-keychain",
  );
  assert.equal(statSync(linuxBinary).mode & 0o777, 0o755);
  const main = JSON.parse(
    readFileSync(path.join(release, "npm/terraform-credentials-keychain/package.json"), "utf8"),
  ) as { optionalDependencies: unknown; bin: Record<string, string> };
  assert.deepEqual(main.optionalDependencies, {
    "terraform-credentials-keychain-linux-x64": "9.8.7",
    "terraform-credentials-keychain-win-x64": "9.8.7",
  });
  const launcher = path.join(
    release,
    "npm/terraform-credentials-keychain",
    main.bin["terraform-credentials-keychain"]!,
  );
  assert.match(readFileSync(launcher, "utf8"), /^#!\/usr\/bin\/env node\n/);
  // Without its platform package (none is installed here), the launcher says where else to
  // get the helper: the homepage from the package's own package.json.
  const run = spawnSync(process.execPath, [launcher, "--version"], { encoding: "utf8" });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /is not installed/);
  assert.ok(
    run.stderr.includes(`other ways to install it: ${PROJECT_HOME.homepage}\n`),
    run.stderr,
  );
});
