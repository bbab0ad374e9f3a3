// The installed helper with `--backend wincred`, driven by the real terraform in WSL: the
// tokens land in the Windows Credential Manager through the Windows helper, where Terraform
// on Windows finds them. On a WSL stand-in with Wine as the Windows side
// (test/support/wsl-stand-in.ts), or in a real WSL (the workflow's WSL job).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TestContext } from "node:test";
import { runHelper } from "../support/helper-process.ts";
import { startWslUnderTest, wslMissing, type WslUnderTest } from "../support/wsl-stand-in.ts";
import { newToken } from "./support/fixture-server.ts";
import {
  assertGet,
  assertInitDenied,
  assertTokenSentEverywhere,
  describeRun,
  startHarness,
} from "./support/helper-harness.ts";
import type { Harness } from "./support/helper-harness.ts";
import { findTerraform, skipWithoutTerraform } from "./support/terraform.ts";
import { PATIENCE_MS, TEST_PATIENCE_MS } from "../support/timing.ts";

const terraform = await findTerraform();
/** A Wine prefix, an install (copies ~130 MB) and a few terraform runs, each through Wine. */
const TEST_TIMEOUT_MS = TEST_PATIENCE_MS;
const WINCRED_ARGS = ["--backend", "wincred"] as const;
const missing = wslMissing();

async function wincredHarness(
  t: TestContext,
  token: string,
): Promise<{ harness: Harness; wsl: WslUnderTest } | undefined> {
  if (terraform === undefined) {
    skipWithoutTerraform(t);
    return undefined;
  }
  let wsl: WslUnderTest | undefined;
  const harness = await startHarness(t, {
    terraform,
    token,
    startSession: async () => (wsl = await startWslUnderTest()),
    installArgs: WINCRED_ARGS,
  });
  return wsl === undefined ? undefined : { harness, wsl };
}

test(
  "terraform login, init and logout in WSL work through Windows Credential Manager, which Windows shares",
  { timeout: TEST_TIMEOUT_MS, ...(missing === undefined ? {} : { skip: missing }) },
  async (t) => {
    const token = newToken();
    const started = await wincredHarness(t, token);
    if (started === undefined) return;
    const { harness, wsl } = started;
    const { host } = harness.server;
    const onWindows = (args: readonly string[]) =>
      runHelper(args, {
        env: wsl.windowsEnv,
        command: wsl.windowsHelperCommand(),
        timeoutMs: PATIENCE_MS,
      });

    const login = await harness.login(token);
    assert.equal(login.exitCode, 0, describeRun(login));
    await assertGet(harness, { token }, WINCRED_ARGS);
    // The entry is the Windows helper's: Terraform on Windows gets the same token.
    const windowsGet = await onWindows(["get", host]);
    assert.equal(windowsGet.stdout, `${JSON.stringify({ token })}\n`, windowsGet.stderr);

    const { result } = await harness.init();
    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(harness);

    const logout = await harness.terraform(["logout", "-no-color", host]);
    assert.equal(logout.exitCode, 0, describeRun(logout));
    await assertGet(harness, {}, WINCRED_ARGS);
    assert.equal((await onWindows(["get", host])).stdout, "{}\n");

    await assertInitDenied(harness);
  },
);
