#!/usr/bin/env node
// The npm package's `bin`: runs the native binary from this platform's optional dependency
// (terraform-credentials-keychain-<os>-<arch>), passing arguments, stdio and the exit status.
// `install` then copies that native binary, so Terraform never starts Node for a `get`.
"use strict";
const { spawnSync } = require("node:child_process");

const os = { linux: "linux", darwin: "darwin", win32: "win" }[process.platform];
const platform = `${os ?? process.platform}-${process.arch}`;
const packageName = `terraform-credentials-keychain-${platform}`;
const file = `terraform-credentials-keychain${process.platform === "win32" ? ".exe" : ""}`;

// Where else to get it: package.json's homepage (the project's one home, written at release).
let home = "the project's README";
try {
  home = require("../package.json").homepage || home;
} catch {
  // No package.json beside bin/: keep the generic pointer.
}

let binary;
try {
  binary = require.resolve(`${packageName}/bin/${file}`);
} catch {
  process.stderr.write(
    `terraform-credentials-keychain: no binary for ${platform}: ${packageName} is not installed ` +
      "(npm skips optional dependencies with --omit=optional; or this platform has no build); " +
      `other ways to install it: ${home}\n`,
  );
  process.exit(1);
}

const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (result.error !== undefined) {
  process.stderr.write(
    `terraform-credentials-keychain: cannot run ${binary}: ${result.error.message}\n`,
  );
  process.exit(1);
}
if (result.signal !== null) process.kill(process.pid, result.signal);
process.exit(result.status ?? 1);
