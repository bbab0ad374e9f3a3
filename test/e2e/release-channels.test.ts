// What a user without a clone or Node gets: `npm run release` for linux-x64 (once, into a
// temp dir), then a fresh HOME installs the helper from the release archive, and another
// from the npm packages published to a private Verdaccio, and terraform logs in through it.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, open, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { TestContext } from "node:test";
import { startKeyringSession } from "../support/keyring-session.ts";
import { newToken } from "./support/fixture-server.ts";
import {
  addNetworkMirror,
  assertTokenSentEverywhere,
  describeRun,
  runProgram,
  startHarness,
} from "./support/helper-harness.ts";
import type { Harness } from "./support/helper-harness.ts";
import { findTerraform, skipWithoutTerraform } from "./support/terraform.ts";
import { startRegistry } from "./support/verdaccio.ts";

const ROOT = join(import.meta.dirname, "../..");
const PROGRAM = "terraform-credentials-keychain";
const VERSION = (
  JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;
const terraform = await findTerraform();
const onLinuxX64 = process.platform === "linux" && process.arch === "x64";
/** A keyring session, an install and terraform login + init; npm publishes ~100 MB. */
const TEST_TIMEOUT_MS = 300_000;

let release = "";
before(
  async () => {
    if (terraform === undefined || !onLinuxX64) return;
    release = await mkdtemp(join(tmpdir(), "release-"));
    // The real release script, for the one target this machine runs.
    execFileSync(
      "npx",
      ["tsx", "scripts/release.ts", "--target", "linux-x64", "--out", release, "--quick"],
      {
        cwd: ROOT,
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
  },
  { timeout: 600_000 },
);
after(async () => {
  if (release !== "") await rm(release, { recursive: true, force: true });
});

function rubyRuns(): boolean {
  try {
    execFileSync("ruby", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

async function harnessWithoutInstall(t: TestContext, token: string): Promise<Harness | undefined> {
  if (terraform === undefined) {
    skipWithoutTerraform(t);
    return undefined;
  }
  if (!onLinuxX64) {
    t.skip("the release test runs the linux-x64 archive: it needs a linux-x64 machine");
    return undefined;
  }
  return startHarness(t, {
    terraform,
    token,
    startSession: () => startKeyringSession(),
    install: false,
  });
}

/** The installed plugin is the native executable (ELF), and terraform logs in and inits through it. */
async function assertLoginAndInitThroughPlugin(harness: Harness, token: string): Promise<void> {
  const file = await open(harness.helperPath);
  const magic = Buffer.alloc(4);
  await file.read(magic, 0, 4, 0);
  await file.close();
  assert.deepEqual([...magic], [0x7f, 0x45, 0x4c, 0x46], "the plugin is an ELF executable");
  assert.ok(((await stat(harness.helperPath)).mode & 0o111) !== 0, "the plugin is executable");

  const version = await harness.helper(["--version"]);
  assert.equal(version.exitCode, 0, describeRun(version));
  assert.match(
    version.stdout,
    new RegExp(`^${VERSION.replace(/\./g, "\\.")} \\(linux-x64, (Node|Bun) \\d`),
  );

  await addNetworkMirror(harness.terraformrc, harness.server.mirrorUrl);
  const login = await harness.login(token);
  assert.equal(login.exitCode, 0, describeRun(login));
  assert.match(login.stdout, /store the token in the configured "keychain" credentials helper/);
  const { result } = await harness.init();
  assert.equal(result.exitCode, 0, describeRun(result));
  assertTokenSentEverywhere(harness);
  await assert.rejects(stat(harness.credentialsFile), "no plaintext credentials file");
}

test(
  "the linux-x64 archive verifies with sha256sum -c, installs itself, can be deleted, and the README's commands then run by name",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await harnessWithoutInstall(t, token);
    if (harness === undefined) return;
    const archive = `${PROGRAM}_${VERSION}_linux-x64.tar.xz`;

    const checked = execFileSync("sha256sum", ["-c", "SHA256SUMS"], {
      cwd: release,
      encoding: "utf8",
    });
    assert.equal(checked, `${archive}: OK\n`);

    // The Homebrew formula written beside it names this archive with the same hash.
    const digest = (await readFile(join(release, "SHA256SUMS"), "utf8")).split(" ")[0]!;
    const formula = await readFile(join(release, "homebrew", `${PROGRAM}.rb`), "utf8");
    assert.ok(formula.includes(`/${archive}"\n      sha256 "${digest}"`), formula);
    if (rubyRuns()) {
      const formulaFile = join(release, "homebrew", `${PROGRAM}.rb`);
      assert.equal(execFileSync("ruby", ["-c", formulaFile], { encoding: "utf8" }), "Syntax OK\n");
    }

    const extracted = await mkdtemp(join(tmpdir(), "extracted-"));
    t.after(() => rm(extracted, { recursive: true, force: true }));
    execFileSync("tar", ["-xJf", join(release, archive), "-C", extracted]);
    assert.deepEqual((await readdir(extracted)).sort(), ["LICENSE", "README.md", PROGRAM]);
    assert.match(await readFile(join(extracted, "LICENSE"), "utf8"), /^MIT License/);

    // A fresh HOME whose PATH has ~/.local/bin, as most distributions give a user.
    const localBin = join(harness.home, ".local", "bin");
    const env = harness.env({
      extra: { PATH: `${localBin}:${harness.env().PATH ?? "/usr/bin:/bin"}` },
    });
    const installed = await runProgram(join(extracted, PROGRAM), ["install"], {
      env,
      cwd: extracted,
    });
    assert.equal(installed.exitCode, 0, describeRun(installed));
    await rm(extracted, { recursive: true, force: true });

    await assertLoginAndInitThroughPlugin(harness, token);

    // The README's commands, by name, with the extracted copy gone.
    const byName = (args: readonly string[], cwd = harness.home) =>
      runProgram(PROGRAM, args, { env, cwd });
    const doctor = await byName(["doctor"]);
    assert.equal(doctor.exitCode, 0, describeRun(doctor));
    assert.ok(doctor.stdout.includes(`has credentials for ${harness.server.host}`), doctor.stdout);
    const list = await byName(["list"]);
    assert.equal(list.stdout, `${harness.server.host}\n`, describeRun(list));
    const exec = await byName(
      ["exec", "--", terraform ?? "terraform", "init"],
      await harness.configDir(),
    );
    assert.equal(exec.exitCode, 0, describeRun(exec));
  },
);

test(
  "npm packages from a private registry: npm install -g runs the launcher, npx ... install copies the native binary",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await harnessWithoutInstall(t, token);
    if (harness === undefined) return;
    const registry = await startRegistry();
    t.after(() => registry.close());

    const npmrc = join(harness.sandbox, "npmrc");
    await writeFile(npmrc, `${registry.authLine}\n`, { mode: 0o600 });
    const prefix = join(harness.sandbox, "npm-global");
    const npmEnv = {
      ...harness.env(),
      npm_config_registry: registry.url,
      npm_config_userconfig: npmrc,
      npm_config_cache: join(harness.sandbox, "npm-cache"),
      npm_config_prefix: prefix,
      npm_config_update_notifier: "false",
      npm_config_audit: "false",
      npm_config_fund: "false",
      // The harness points proxies at a dead port; the registry is on loopback.
      NO_PROXY: "127.0.0.1",
      npm_config_noproxy: "127.0.0.1",
    };
    const npm = (args: readonly string[]) =>
      runProgram("npm", args, { env: npmEnv, cwd: harness.home, timeoutMs: 240_000 });

    // The platform package first: the main one names it as an optional dependency.
    for (const name of [`${PROGRAM}-linux-x64`, PROGRAM]) {
      const published = await npm(["publish", join(release, "npm", name)]);
      assert.equal(published.exitCode, 0, describeRun(published));
    }

    const globalInstall = await npm(["install", "-g", "--prefix", prefix, PROGRAM]);
    assert.equal(globalInstall.exitCode, 0, describeRun(globalInstall));
    const launched = await runProgram(join(prefix, "bin", PROGRAM), ["--version"], {
      env: npmEnv,
      cwd: harness.home,
    });
    assert.equal(launched.exitCode, 0, describeRun(launched));
    assert.match(launched.stdout, /\(linux-x64, (Node|Bun) /);
    // The launcher passes the native binary's exit status and stderr through.
    const refused = await runProgram(join(prefix, "bin", PROGRAM), ["get", "not a host"], {
      env: npmEnv,
      cwd: harness.home,
    });
    assert.notEqual(refused.exitCode, 0, describeRun(refused));
    assert.equal(refused.stdout, "");
    assert.notEqual(refused.stderr, "");

    const installed = await runProgram("npx", ["--yes", PROGRAM, "install"], {
      env: npmEnv,
      cwd: harness.home,
      timeoutMs: 240_000,
    });
    assert.equal(installed.exitCode, 0, describeRun(installed));
    // The plugin is the platform package's native binary, not the Node launcher.
    const native = await readFile(
      join(
        prefix,
        "lib/node_modules",
        PROGRAM,
        "node_modules",
        `${PROGRAM}-linux-x64`,
        "bin",
        PROGRAM,
      ),
    );
    assert.ok((await readFile(harness.helperPath)).equals(native));

    await assertLoginAndInitThroughPlugin(harness, token);
  },
);
