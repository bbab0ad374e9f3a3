// The installed helper driven by the real terraform, with this OS's own keychain: a real
// gnome-keyring in a private D-Bus session on Linux, a temporary Keychain made the default on
// macOS, Credential Manager itself on Windows (CI only). Every test has its own HOME, fixture
// server and CLI config, built from scratch (never the ambient environment or /root).
import assert from "node:assert/strict";
import { access, appendFile, chmod, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import type { TestContext } from "node:test";
import { forgetEveryHost, nativeSandbox } from "../support/keychain-backends.ts";
import { startKeyringSession } from "../support/keyring-session.ts";
import { startTemporaryKeychain } from "../support/macos-keychain-session.ts";
import { newToken } from "./support/fixture-server.ts";
import {
  addNetworkMirror,
  assertGet,
  assertInitDenied,
  assertTokenSentEverywhere,
  describeRun,
  filesContaining,
  HELPER_FILE_NAME,
  regularFiles,
  requestsOf,
  startHarness,
} from "./support/helper-harness.ts";
import type { Harness, HarnessOptions, PrivateSession } from "./support/helper-harness.ts";
import { findTerraform, skipWithoutTerraform } from "./support/terraform.ts";
import { TEST_PATIENCE_MS } from "../support/timing.ts";

const terraform = await findTerraform();
/** Per test: a keyring session, an install (copies ~130 MB) and a few terraform runs. */
const TEST_TIMEOUT_MS = TEST_PATIENCE_MS;
/** Windows has no mode bits: Node reports 0o666, or 0o444 for a read-only file. */
const MODE_BITS = process.platform !== "win32";

/**
 * Credential Manager cannot be started privately, and these tests use the default service:
 * on Windows they run on CI's throwaway runners only, never against a developer's own entries.
 */
const windowsOffCi =
  process.platform === "win32" && process.env["CI"] !== "true"
    ? "SKIP: on Windows these tests write Credential Manager's entries under the default service: they run under CI=true only"
    : undefined;

/** This OS's keychain for one test, with a private HOME. */
function startKeychainSession(): Promise<PrivateSession> {
  if (process.platform === "darwin") return startTemporaryKeychain();
  if (process.platform !== "win32") return startKeyringSession();
  const sandbox = nativeSandbox();
  return Promise.resolve({
    env: sandbox.env,
    home: sandbox.home,
    close: async () => {
      await forgetEveryHost([], sandbox.env);
      sandbox.remove();
    },
  });
}

/** A keychain session with the helper installed, or undefined (skipped) without terraform. */
async function keychainHarness(
  t: TestContext,
  token: string,
  options: Partial<Pick<HarnessOptions, "install" | "installArgs">> = {},
): Promise<Harness | undefined> {
  if (windowsOffCi !== undefined) {
    t.skip(windowsOffCi);
    return undefined;
  }
  if (terraform === undefined) {
    skipWithoutTerraform(t);
    return undefined;
  }
  return startHarness(t, { terraform, token, startSession: startKeychainSession, ...options });
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

test(
  "terraform init uses the stored token for modules and the mirror, and gets 401 once it is forgotten",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await keychainHarness(t, token);
    if (harness === undefined) return;
    const { host } = harness.server;

    const stored = await harness.helper(["store", host], JSON.stringify({ token }));
    assert.equal(stored.exitCode, 0, describeRun(stored));
    assert.equal(stored.stdout, "");

    const { result, dir } = await harness.init();
    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(harness);
    const moduleMain = await readFile(join(dir, ".terraform/modules/hello/main.tf"), "utf8");
    assert.ok(moduleMain.includes(harness.server.module.outputValue), moduleMain);
    const lock = await readFile(join(dir, ".terraform.lock.hcl"), "utf8");
    assert.ok(lock.includes(harness.server.provider.hashes.h1), lock);

    const forgotten = await harness.helper(["forget", host]);
    assert.equal(forgotten.exitCode, 0, describeRun(forgotten));
    await assertGet(harness, {});

    await assertInitDenied(harness);
  },
);

test(
  "terraform login stores the pasted token in the keychain only, and logout forgets it",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await keychainHarness(t, token);
    if (harness === undefined) return;

    const login = await harness.login(token);
    assert.equal(login.exitCode, 0, describeRun(login));
    assert.match(login.stdout, /store the token in the configured "keychain" credentials helper/);
    assert.match(login.stdout, /Retrieved token for user tester/);
    await assertGet(harness, { token });

    // No plaintext anywhere: not in credentials.tfrc.json (Terraform's or OpenTofu's), not in
    // any file under HOME or the XDG dirs beside it, and not in gnome-keyring's own files.
    assert.equal(await exists(harness.credentialsFile), false, "credentials.tfrc.json was written");
    const xdgConfig = harness.env()["XDG_CONFIG_HOME"] ?? "";
    const tofuCredentials = join(xdgConfig, "opentofu", "credentials.tfrc.json");
    assert.equal(await exists(tofuCredentials), false, "OpenTofu's credentials file was written");
    if (process.platform === "linux") {
      const keyrings = join(harness.env()["XDG_DATA_HOME"] ?? "", "keyrings");
      const keyringFiles = await regularFiles(keyrings);
      assert.ok(
        keyringFiles.some((file) => file.endsWith("login.keyring")),
        `the keyring was never written to disk: ${keyringFiles.join(", ")}`,
      );
      assert.deepEqual(await filesContaining(keyrings, token), []);
    }
    assert.deepEqual(await filesContaining(harness.sandbox, token), []);

    const { result } = await harness.init();
    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(harness);

    const logout = await harness.terraform(["logout", "-no-color", harness.server.host]);
    assert.equal(logout.exitCode, 0, describeRun(logout));
    await assertGet(harness, {});
    assert.equal(
      await exists(harness.credentialsFile),
      false,
      "logout wrote credentials.tfrc.json",
    );
    await assertInitDenied(harness);
  },
);

test(
  "install into a clean HOME is all terraform login needs, and the trace log shows terraform using the helper",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await keychainHarness(t, token, { install: false });
    if (harness === undefined) return;
    assert.equal(await exists(harness.terraformrc), false);
    assert.equal(await exists(harness.helperPath), false);

    const install = await harness.dist(["install"]);
    assert.equal(install.exitCode, 0, describeRun(install));
    assert.match(install.stdout, /credentials_helper block added/);
    // Both options that name the store: Terraform's calls carry them and read no file.
    assert.equal(
      await readFile(harness.terraformrc, "utf8"),
      'credentials_helper "keychain" {\n  args = ["--backend", "keychain", "--service", "terraform-credentials"]\n}\n',
    );
    if (MODE_BITS) {
      assert.equal((await stat(harness.terraformrc)).mode & 0o777, 0o600);
      const installed = await stat(harness.helperPath);
      assert.equal(installed.mode & 0o111, 0o111, "the installed helper is not executable");
    }
    const version = await harness.helper(["--version"]);
    assert.equal(version.exitCode, 0, describeRun(version));

    const login = await harness.login(token, { extra: { TF_LOG: "trace" } });
    assert.equal(login.exitCode, 0, describeRun(login));
    // Terraform logs the plugin directory it searched and the helper it found there: together
    // they are the installed path, $HOME/.terraform.d/plugins/terraform-credentials-keychain.
    // Go's %q quotes them; JSON.stringify writes the same for these paths.
    const { pluginDir } = harness;
    assert.equal(harness.helperPath, join(pluginDir, HELPER_FILE_NAME));
    assert.ok(
      login.stderr.includes(`checking for credentials in ${JSON.stringify(pluginDir)}`),
      `the trace log does not show terraform searching ${pluginDir}`,
    );
    assert.ok(
      login.stderr.includes(`found legacy credentials ${JSON.stringify(HELPER_FILE_NAME)}`),
      "the trace log does not show terraform finding the helper",
    );
    await assertGet(harness, { token });
    assert.equal(await exists(harness.credentialsFile), false);
  },
);

/** Writes `credentials.tfrc.json` as `terraform login` would, plus anything in `extra`. */
async function writeCredentialsFile(
  harness: Harness,
  hosts: Record<string, string>,
  mode: number,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const credentials = Object.fromEntries(
    Object.entries(hosts).map(([host, token]) => [host, { token }]),
  );
  const text = `${JSON.stringify({ ...extra, credentials }, null, 2)}\n`;
  await writeFile(harness.credentialsFile, text, { mode });
  await chmod(harness.credentialsFile, mode); // the umask may have narrowed it
  return text;
}

test(
  "import moves credentials.tfrc.json into the keychain and terraform init then works from it",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const otherToken = newToken();
    const harness = await keychainHarness(t, token);
    if (harness === undefined) return;
    const { host } = harness.server;
    await writeCredentialsFile(harness, { [host]: token, "app.example.com": otherToken }, 0o600);
    // The search below can find the token: it is in the plaintext file now.
    assert.deepEqual(await filesContaining(harness.sandbox, token), [harness.credentialsFile]);

    const imported = await harness.helper(["import"]);
    assert.equal(imported.exitCode, 0, describeRun(imported));
    assert.ok(imported.stdout.includes(`moved: ${host} from ${harness.credentialsFile}`));
    assert.ok(imported.stdout.includes(`moved: app.example.com from ${harness.credentialsFile}`));
    assert.ok(!imported.stdout.includes(token) && !imported.stderr.includes(token));
    await assertGet(harness, { token });
    await assertGet(harness, { token: otherToken }, [], "app.example.com");

    if (MODE_BITS && (await exists(harness.credentialsFile))) {
      assert.equal((await stat(harness.credentialsFile)).mode & 0o777, 0o600);
    }
    assert.deepEqual(await filesContaining(harness.sandbox, token), []);
    assert.deepEqual(await filesContaining(harness.sandbox, otherToken), []);

    const { result } = await harness.init();
    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(harness);
  },
);

test(
  "import moves a credentials block out of ~/.terraformrc and terraform init then works from the keychain",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await keychainHarness(t, token);
    if (harness === undefined) return;
    const { host } = harness.server;
    const before = await readFile(harness.terraformrc, "utf8");
    await appendFile(harness.terraformrc, `\ncredentials "${host}" {\n  token = "${token}"\n}\n`);

    const imported = await harness.helper(["import"]);
    assert.equal(imported.exitCode, 0, describeRun(imported));
    assert.ok(imported.stdout.includes(`moved: ${host} from ${harness.terraformrc}`));
    await assertGet(harness, { token });
    assert.equal(await readFile(harness.terraformrc, "utf8"), before, "only the block is gone");
    assert.deepEqual(await filesContaining(harness.sandbox, token), []);

    const { result } = await harness.init();
    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(harness);
  },
);

test(
  "import keeps other settings of credentials.tfrc.json and the file's mode",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await keychainHarness(t, token);
    if (harness === undefined) return;
    const { host } = harness.server;
    await writeCredentialsFile(harness, { [host]: token }, 0o640, { note: "kept" });

    const imported = await harness.helper(["import"]);
    assert.equal(imported.exitCode, 0, describeRun(imported));
    await assertGet(harness, { token });
    if (MODE_BITS) assert.equal((await stat(harness.credentialsFile)).mode & 0o777, 0o640);
    const left: unknown = JSON.parse(await readFile(harness.credentialsFile, "utf8"));
    assert.deepEqual(left, { note: "kept", credentials: {} });

    const { result } = await harness.init();
    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(harness);
  },
);

test(
  "import --keep copies the tokens and leaves credentials.tfrc.json as it was",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const otherToken = newToken();
    const harness = await keychainHarness(t, token);
    if (harness === undefined) return;
    const { host } = harness.server;
    const text = await writeCredentialsFile(
      harness,
      { [host]: token, "app.example.com": otherToken },
      0o600,
    );
    const before = await stat(harness.credentialsFile);

    const imported = await harness.helper(["import", "--keep"]);
    assert.equal(imported.exitCode, 0, describeRun(imported));
    assert.ok(imported.stdout.includes(`copied: ${host} from ${harness.credentialsFile}`));
    await assertGet(harness, { token });
    await assertGet(harness, { token: otherToken }, [], "app.example.com");

    const after = await stat(harness.credentialsFile);
    assert.equal(await readFile(harness.credentialsFile, "utf8"), text);
    if (MODE_BITS) assert.equal(after.mode & 0o7777, 0o600);
    assert.equal(after.ino, before.ino, "the file was replaced");
    assert.equal(after.mtimeMs, before.mtimeMs, "the file was rewritten");
  },
);

test(
  "two CLI configs with different --service args select different tokens through TF_CLI_CONFIG_FILE",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await keychainHarness(t, token, { install: false });
    if (harness === undefined) return;
    const { host } = harness.server;
    const work = join(harness.home, "work.tfrc");
    const personal = join(harness.home, "personal.tfrc");
    for (const [service, file] of [
      ["work", work],
      ["personal", personal],
    ] as const) {
      // install writes the block, with the options as args, to the file TF_CLI_CONFIG_FILE names.
      const install = await harness.dist(["--service", service, "install"], {
        cliConfigFile: file,
      });
      assert.equal(install.exitCode, 0, describeRun(install));
      assert.equal(
        await readFile(file, "utf8"),
        `credentials_helper "keychain" {\n  args = ["--backend", "keychain", "--service", "${service}"]\n}\n`,
      );
      await addNetworkMirror(file, harness.server.mirrorUrl);
    }
    assert.equal(await exists(harness.terraformrc), false, "install wrote ~/.terraformrc too");

    const workStore = await harness.helper(
      ["--service", "work", "store", host],
      JSON.stringify({ token }),
    );
    assert.equal(workStore.exitCode, 0, describeRun(workStore));
    const personalToken = newToken();
    const personalStore = await harness.helper(
      ["--service", "personal", "store", host],
      JSON.stringify({ token: personalToken }),
    );
    assert.equal(personalStore.exitCode, 0, describeRun(personalStore));
    await assertGet(harness, {}); // the default service holds neither

    const asWork = await harness.init({ cliConfigFile: work });
    assert.equal(asWork.result.exitCode, 0, describeRun(asWork.result));
    assertTokenSentEverywhere(harness);

    harness.server.clearRequests();
    const asPersonal = await harness.init({ cliConfigFile: personal });
    assert.equal(asPersonal.result.exitCode, 1, describeRun(asPersonal.result));
    assert.deepEqual(
      requestsOf(harness, "module-versions").map((seen) => [seen.auth, seen.status]),
      [["invalid", 401]],
    );

    // Logging in through the personal profile replaces only that profile's token.
    const login = await harness.login(token, { cliConfigFile: personal });
    assert.equal(login.exitCode, 0, describeRun(login));
    await assertGet(harness, { token }, ["--service", "personal"]);
    await assertGet(harness, { token }, ["--service", "work"]);
    harness.server.clearRequests();
    const again = await harness.init({ cliConfigFile: personal });
    assert.equal(again.result.exitCode, 0, describeRun(again.result));
    assertTokenSentEverywhere(harness);
  },
);

test(
  "doctor passes a healthy set-up, warns about a shadowed host, and fails without a CLI config",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const token = newToken();
    const harness = await keychainHarness(t, token);
    if (harness === undefined) return;
    const { host } = harness.server;
    const stored = await harness.helper(["store", host], JSON.stringify({ token }));
    assert.equal(stored.exitCode, 0, describeRun(stored));

    await t.test("a healthy set-up exits 0 with every check ok", async () => {
      const doctor = await harness.helper(["doctor"]);
      assert.equal(doctor.exitCode, 0, describeRun(doctor));
      const statuses = doctor.stdout
        .split("\n")
        .filter((line) => /^\S/.test(line))
        .map((line) => line.slice(0, 4));
      assert.ok(statuses.length >= 4, doctor.stdout);
      assert.deepEqual(
        statuses.filter((status) => status !== "ok  "),
        [],
        doctor.stdout,
      );
      assert.match(doctor.stdout, /reachable, 1 host stored/);
      assert.ok(doctor.stdout.includes(`has credentials for ${host}`), doctor.stdout);
      assert.ok(doctor.stdout.includes(`installed: ${harness.helperPath}`), doctor.stdout);
    });

    await t.test("a plaintext credentials file makes it warn about the shadowed host", async () => {
      await writeCredentialsFile(harness, { [host]: token }, 0o600);
      const doctor = await harness.helper(["doctor"]);
      assert.equal(doctor.exitCode, 0, describeRun(doctor));
      assert.match(doctor.stdout, /^warn {2}these hosts do not use the helper$/m);
      assert.ok(
        doctor.stdout.includes(
          `${host}: the token in ${harness.credentialsFile}:3 wins over the helper`,
        ),
        doctor.stdout,
      );
      assert.ok(!doctor.stdout.includes(token) && !doctor.stderr.includes(token));
      await rm(harness.credentialsFile);
    });

    await t.test("no CLI config makes it exit non-zero", async () => {
      await rm(harness.terraformrc);
      const doctor = await harness.helper(["doctor"]);
      assert.notEqual(doctor.exitCode, 0, describeRun(doctor));
      assert.ok(
        doctor.stdout.includes(
          `FAIL  CLI config ${harness.terraformrc} (Terraform) does not exist`,
        ),
        doctor.stdout,
      );
      assert.match(doctor.stderr, /doctor: \d+ checks? failed/);
    });
  },
);
