// `exec` with the real terraform and NO credentials_helper block: the tokens reach terraform
// only as TF_TOKEN_ variables. The fixture answers under hostnames without a port (which the
// variables need) through a CONNECT proxy, each name accepting only its own token.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { helperCommand, runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession } from "../support/pass-session.ts";
import { startConnectProxy } from "./support/connect-proxy.ts";
import { newToken, startFixtureServer } from "./support/fixture-server.ts";
import type { FixtureServer } from "./support/fixture-server.ts";
import {
  findTerraform,
  skipWithoutTerraform,
  makePrivateHome,
  runTerraform,
  terraformEnv,
  writeCliConfig,
} from "./support/terraform.ts";
import type { TerraformResult } from "./support/terraform.ts";
import { TEST_PATIENCE_MS } from "../support/timing.ts";

const terraform = await findTerraform();
const TEST_TIMEOUT_MS = TEST_PATIENCE_MS;
/** pass and gpg are Linux packages here: the macOS and Windows jobs test their own stores. */
const PASS_ONLY_ON_LINUX = linuxOnly("exec through pass with a private GPG home");

const HYPHEN_HOST = "my-registry.example";
/** Stored as typed in upper case; Terraform and the store both see it in lower case. */
const UPPER_HOST_AS_STORED = "REGISTRY.EXAMPLE.NET";
const UPPER_HOST = "registry.example.net";
const IDN_HOST_AS_STORED = "mirror.münchen.example";
const IDN_HOST = "mirror.xn--mnchen-3ya.example";

function describeRun(result: TerraformResult): string {
  return `exit ${String(result.exitCode)}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
}

function configuration(server: FixtureServer): string {
  const { module, provider } = server;
  const path = module.source.slice(server.host.length);
  const requirement = `{ source = "${provider.source}", version = "${provider.version}" }`;
  return [
    `terraform {\n  required_providers {\n    ${provider.type} = ${requirement}\n  }\n}\n`,
    `module "hyphen" {\n  source  = "${HYPHEN_HOST}${path}"\n  version = "${module.version}"\n}\n`,
    `module "upper" {\n  source  = "${UPPER_HOST}${path}"\n  version = "${module.version}"\n}\n`,
  ].join("\n");
}

test(
  "exec -- terraform init authenticates to a hyphenated, an upper-case and an IDN host without a credentials helper",
  { timeout: TEST_TIMEOUT_MS, skip: PASS_ONLY_ON_LINUX },
  async (t) => {
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    const tokens = {
      [HYPHEN_HOST]: newToken(),
      [UPPER_HOST]: newToken(),
      [IDN_HOST]: newToken(),
    };
    await using server = await startFixtureServer({ token: newToken(), tokensByHost: tokens });
    await using proxy = await startConnectProxy(server.port);
    await using home = await makePrivateHome();
    const session = await startPassSession();
    t.after(() => session.close());
    const workspace = await mkdtemp(join(tmpdir(), "tf-exec-"));
    t.after(() => rm(workspace, { recursive: true, force: true }));
    await writeFile(join(workspace, "main.tf"), configuration(server));
    const cliConfigFile = await writeCliConfig(join(home.path, "cli.tfrc"), {
      networkMirrorUrl: `https://${IDN_HOST}/providers/`,
    });

    for (const [host, token] of [
      [HYPHEN_HOST, tokens[HYPHEN_HOST]],
      [UPPER_HOST_AS_STORED, tokens[UPPER_HOST]],
      [IDN_HOST_AS_STORED, tokens[IDN_HOST]],
    ] as const) {
      const stored = await runHelper(["--backend", "pass", "store", host], {
        env: session.env,
        stdin: JSON.stringify({ token }),
      });
      assert.equal(stored.code, 0, stored.stderr);
    }

    const env = {
      ...terraformEnv({
        home: home.path,
        caFile: server.caFile,
        cliConfigFile,
        extra: { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url },
      }),
      GNUPGHOME: session.env.GNUPGHOME ?? "",
      PASSWORD_STORE_DIR: session.storeDir,
    };
    const initArgs = ["init", "-no-color", "-input=false"];

    // Negative control: the same run without exec sends no token and is refused.
    const denied = await runTerraform(terraform, initArgs, { cwd: workspace, env });
    assert.notEqual(denied.exitCode, 0, describeRun(denied));
    assert.ok(
      server.requests.some((request) => request.status === 401),
      "terraform reached the fixture and was refused",
    );
    for (const request of server.requests) {
      assert.notEqual(request.auth, "valid", `${request.host}${request.path}`);
    }
    server.clearRequests();

    const [command, ...commandArgs] = helperCommand();
    const result = await runTerraform(
      command,
      [...commandArgs, "--backend", "pass", "exec", "--", terraform, ...initArgs],
      { cwd: workspace, env },
    );
    assert.equal(result.exitCode, 0, describeRun(result));
    for (const token of Object.values(tokens)) {
      assert.ok(!result.stdout.includes(token) && !result.stderr.includes(token));
    }
    // Every guarded route on each named host got exactly that host's token.
    const guarded = server.requests.filter((request) =>
      ["module-versions", "mirror-index", "mirror-version"].includes(request.kind),
    );
    for (const host of [HYPHEN_HOST, UPPER_HOST, IDN_HOST]) {
      const seen = guarded.filter((request) => request.host === host);
      assert.ok(seen.length > 0, `no authenticated request reached ${host}`);
      for (const request of seen) assert.equal(request.auth, "valid", `${host}${request.path}`);
    }
    assert.ok(proxy.targets.includes(`${IDN_HOST}:443`), proxy.targets.join(", "));
  },
);
