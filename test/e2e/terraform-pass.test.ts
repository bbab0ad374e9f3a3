// The installed helper with `--backend pass`, driven by the real terraform on a headless
// machine: a private GPG key and password store, and no D-Bus session bus at all.
import assert from "node:assert/strict";
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import type { TestContext } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession } from "../support/pass-session.ts";
import { newToken } from "./support/fixture-server.ts";
import {
  assertGet,
  assertInitDenied,
  assertTokenSentEverywhere,
  describeRun,
  filesContaining,
  regularFiles,
  startHarness,
} from "./support/helper-harness.ts";
import type { Harness } from "./support/helper-harness.ts";
import { findTerraform, skipWithoutTerraform } from "./support/terraform.ts";
import { TEST_PATIENCE_MS } from "../support/timing.ts";

const terraform = await findTerraform();
/** Per test: a GPG key, an install (copies ~130 MB) and a few terraform runs. */
const TEST_TIMEOUT_MS = TEST_PATIENCE_MS;
/** pass and gpg are Linux packages here: the macOS and Windows jobs test their own stores. */
const PASS_ONLY_ON_LINUX = linuxOnly("the pass store with a private GPG home");
const PASS_ARGS = ["--backend", "pass"] as const;

/** A pass session with `--backend pass install` done, or undefined (skipped) without terraform. */
async function passHarness(t: TestContext, token: string): Promise<Harness | undefined> {
  if (terraform === undefined) {
    skipWithoutTerraform(t);
    return undefined;
  }
  return startHarness(t, {
    terraform,
    token,
    startSession: () => startPassSession(),
    installArgs: PASS_ARGS,
  });
}

test(
  "terraform login, init and logout work through pass on a machine without a session bus",
  { timeout: TEST_TIMEOUT_MS, skip: PASS_ONLY_ON_LINUX },
  async (t) => {
    const token = newToken();
    const harness = await passHarness(t, token);
    if (harness === undefined) return;
    const { host } = harness.server;
    const env = harness.env();
    assert.equal("DBUS_SESSION_BUS_ADDRESS" in env, false, "the pass session has a bus");
    assert.equal("DISPLAY" in env, false);
    const storeDir = env["PASSWORD_STORE_DIR"] ?? "";
    assert.notEqual(storeDir, "");

    // install wrote the block with the backend as args, so terraform runs the helper with them.
    const config = await readFile(harness.terraformrc, "utf8");
    assert.ok(
      config.startsWith(
        'credentials_helper "keychain" {\n  args = ["--backend", "pass", "--service", "terraform-credentials"]\n}\n',
      ),
      config,
    );
    // Typed by hand without those args, get follows the block to pass (the Secret Service is
    // unreachable here), where nothing is stored yet.
    const typedGet = await harness.helper(["get", host]);
    assert.equal(typedGet.exitCode, 0, describeRun(typedGet));
    assert.equal(typedGet.stdout, "{}\n", describeRun(typedGet));
    // Given --backend keychain, get asks the keychain, which is not there.
    const keychainGet = await harness.helper(["--backend", "keychain", "get", host]);
    assert.notEqual(keychainGet.exitCode, 0, describeRun(keychainGet));
    assert.match(keychainGet.stderr, /D-Bus/);

    const login = await harness.login(token);
    assert.equal(login.exitCode, 0, describeRun(login));
    assert.match(login.stdout, /store the token in the configured "keychain" credentials helper/);
    await assertGet(harness, { token }, PASS_ARGS);
    const list = await harness.helper([...PASS_ARGS, "list"]);
    assert.equal(list.stdout, `${host}\n`, describeRun(list));
    await assert.rejects(access(harness.credentialsFile), { code: "ENOENT" });
    const entries = await regularFiles(join(storeDir, "terraform-credentials"));
    assert.equal(entries.length, 1, entries.join(", "));
    assert.ok(entries[0]?.endsWith(".gpg"), entries.join(", "));
    // Encrypted: the token is in no file of the HOME, the GPG home or the store.
    assert.deepEqual(await filesContaining(harness.sandbox, token), []);

    const { result } = await harness.init();
    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(harness);

    const logout = await harness.terraform(["logout", "-no-color", host]);
    assert.equal(logout.exitCode, 0, describeRun(logout));
    await assertGet(harness, {}, PASS_ARGS);
    const listAfter = await harness.helper([...PASS_ARGS, "list"]);
    assert.equal(listAfter.stdout, "", describeRun(listAfter));
    // pass also removes the emptied folders: no entry is left anywhere in the store.
    const left = (await regularFiles(storeDir)).filter((file) => file.endsWith(".gpg"));
    assert.deepEqual(left, []);

    await assertInitDenied(harness);
  },
);

test(
  "doctor --backend pass passes a healthy headless set-up",
  { timeout: TEST_TIMEOUT_MS, skip: PASS_ONLY_ON_LINUX },
  async (t) => {
    const token = newToken();
    const harness = await passHarness(t, token);
    if (harness === undefined) return;
    const stored = await harness.helper(
      [...PASS_ARGS, "store", harness.server.host],
      JSON.stringify({ token }),
    );
    assert.equal(stored.exitCode, 0, describeRun(stored));

    const doctor = await harness.helper([...PASS_ARGS, "doctor"]);
    assert.equal(doctor.exitCode, 0, describeRun(doctor));
    assert.doesNotMatch(doctor.stdout, /^FAIL/m);
    assert.ok(doctor.stdout.includes(`has credentials for ${harness.server.host}`), doctor.stdout);
    // The chosen store works: the keychain's lack of a session bus is no problem of this
    // set-up, so no line says it, and no ok line carries a failure (issue 36).
    assert.doesNotMatch(doctor.stdout, /D-Bus|not usable/);
    assert.ok(
      doctor.stdout
        .split("\n")
        .every((line) => !line.startsWith("warn") && !line.startsWith("FAIL")),
      doctor.stdout,
    );
  },
);
