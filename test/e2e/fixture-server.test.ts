// Proves the HTTPS fixture works with the real terraform, so that the e2e tests of the
// credentials helper can rely on it: every failure there must be the helper's, not the fixture's.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { TestContext } from "node:test";
import { testCaIn } from "./support/certificates.ts";
import { fixtureConfiguration, newToken, startFixtureServer } from "./support/fixture-server.ts";
import type {
  FixtureConfigurationParts,
  FixtureServer,
  RecordedRequest,
  RouteKind,
} from "./support/fixture-server.ts";
import {
  findTerraform,
  skipWithoutTerraform,
  makePrivateHome,
  runTerraform,
  terraformEnv,
  terraformPaths,
  tokenEnvVarName,
  writeCliConfig,
} from "./support/terraform.ts";
import type { CliConfigOptions, TerraformResult } from "./support/terraform.ts";
import { TEST_PATIENCE_MS } from "../support/timing.ts";

const terraform = await findTerraform();
/** Per test: a few terraform runs of a few seconds each, with room for a slow machine. */
const TEST_TIMEOUT_MS = TEST_PATIENCE_MS;

/** A fresh random token per use, so nothing here resembles a real credential. */

/** What one terraform invocation in a private HOME and a fresh config dir needs. */
interface Workspace {
  readonly home: string;
  readonly dir: string;
  readonly cliConfigFile: string;
}

/** A private HOME holding a config dir with `main.tf` and a CLI config; removed after `t`. */
async function makeWorkspace(
  t: TestContext,
  server: FixtureServer,
  config: CliConfigOptions,
  parts: FixtureConfigurationParts = {},
): Promise<Workspace> {
  const home = await makePrivateHome();
  t.after(() => home.cleanup());
  const dir = join(home.path, "config");
  await mkdir(dir);
  await writeFile(join(dir, "main.tf"), fixtureConfiguration(server, parts));
  const cliConfigFile = await writeCliConfig(join(home.path, "cli.tfrc"), config);
  return { home: home.path, dir, cliConfigFile };
}

async function init(
  binary: string,
  server: FixtureServer,
  workspace: Workspace,
  extraEnv: Record<string, string> = {},
): Promise<TerraformResult> {
  const env = terraformEnv({
    home: workspace.home,
    caFile: server.caFile,
    cliConfigFile: workspace.cliConfigFile,
    extra: extraEnv,
  });
  return runTerraform(binary, ["init", "-input=false", "-no-color"], { cwd: workspace.dir, env });
}

/** Formats a run for an assertion message: enough to see why terraform failed. */
function describeRun(result: TerraformResult): string {
  return `exit ${String(result.exitCode)}${result.timedOut ? " (timed out)" : ""}\n${result.stdout}\n${result.stderr}`;
}

function requestsOf(server: FixtureServer, kind: RouteKind): RecordedRequest[] {
  return server.requests.filter((seen) => seen.kind === kind);
}

/** Every credentialed route Terraform used during a full init: it must have sent the token. */
const CREDENTIALED: readonly RouteKind[] = [
  "module-versions",
  "module-download",
  "mirror-index",
  "mirror-version",
];

function assertTokenSentEverywhere(server: FixtureServer): void {
  for (const kind of CREDENTIALED) {
    const seen = requestsOf(server, kind);
    assert.ok(seen.length > 0, `terraform never requested ${kind}`);
    for (const one of seen) assert.equal(one.auth, "valid", `${one.method} ${one.path}`);
  }
}

test("the fixture answers 401 without the token and serves discovery to anyone", async () => {
  await using server = await startFixtureServer({ token: newToken() });
  const discovery = await get(server, "/.well-known/terraform.json");
  assert.equal(discovery.status, 200);
  assert.deepEqual(JSON.parse(discovery.body), {
    "modules.v1": "/v1/modules/",
    "tfe.v2": "/api/v2/",
  });
  for (const path of ["/v1/modules/acme/hello/null/versions", "/api/v2/account/details"]) {
    assert.equal((await get(server, path)).status, 401, path);
    assert.equal((await get(server, path, "Bearer wrong")).status, 401, path);
  }
  const token = newToken();
  server.setToken(token);
  const account = await get(server, "/api/v2/account/details", `Bearer ${token}`);
  assert.equal(account.status, 200);
  assert.equal((JSON.parse(account.body) as { data: { type: string } }).data.type, "users");
  assert.deepEqual(
    server.requests.map((seen) => seen.auth),
    ["none", "none", "invalid", "none", "invalid", "valid"],
  );
  assert.ok(!JSON.stringify(server.requests).includes(token), "the request log holds the token");
});

test("servers given one CA (scripts/fixture-ca.ts, as CI's macOS and Windows jobs make it) sign with it and leave it on close", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "fixture-ca-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const printed = execFileSync(
    process.execPath,
    ["--import", "tsx", "scripts/fixture-ca.ts", dir],
    {
      encoding: "utf8",
    },
  );
  const ca = testCaIn(dir);
  assert.equal(printed, `${ca.caFile}\n`);
  for (let round = 0; round < 2; round++) {
    const server = await startFixtureServer({ token: newToken(), ca });
    try {
      assert.equal(server.caFile, ca.caFile);
      assert.equal((await get(server, "/.well-known/terraform.json")).status, 200);
    } finally {
      await server.close();
    }
    await access(ca.caFile);
    await access(ca.keyFile);
  }
});

test(
  "terraform init installs the module and the mirrored provider with a credentials block",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    const token = newToken();
    await using server = await startFixtureServer({ token });
    const config = { credentials: { [server.host]: token }, networkMirrorUrl: server.mirrorUrl };
    const workspace = await makeWorkspace(t, server, config);

    const result = await init(terraform, server, workspace);

    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(server);
    // Discovery needs no token, but Terraform sends it there too when it has one.
    assert.deepEqual(
      requestsOf(server, "discovery").map((seen) => seen.auth),
      ["valid"],
    );
    // Terraform sends no credentials for package downloads; the fixture must not demand them.
    assert.ok(requestsOf(server, "archive").every((seen) => seen.auth === "none"));
    const mainTf = await readFile(join(workspace.dir, ".terraform/modules/hello/main.tf"), "utf8");
    assert.ok(mainTf.includes(server.module.outputValue), mainTf);
    const lock = await readFile(join(workspace.dir, ".terraform.lock.hcl"), "utf8");
    assert.ok(lock.includes(server.provider.hashes.h1), `lock file lacks our h1 hash:\n${lock}`);
    assert.ok(!result.stdout.includes(token) && !result.stderr.includes(token));
  },
);

test(
  "terraform takes the token for HOST:PORT from TF_TOKEN_ with a literal colon",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    const token = newToken();
    await using server = await startFixtureServer({ token });
    const workspace = await makeWorkspace(t, server, { networkMirrorUrl: server.mirrorUrl });
    const name = tokenEnvVarName(server.host);
    assert.equal(name, `TF_TOKEN_127_0_0_1:${server.port}`);

    const result = await init(terraform, server, workspace, { [name]: token });

    assert.equal(result.exitCode, 0, describeRun(result));
    assertTokenSentEverywhere(server);
  },
);

test(
  "terraform reads TF_TOKEN_127_0_0_1_PORT as another host and sends no token",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    const token = newToken();
    await using server = await startFixtureServer({ token });
    const workspace = await makeWorkspace(t, server, { networkMirrorUrl: server.mirrorUrl });

    // Every "_" becomes ".", so this names the host "127.0.0.1.PORT", not "127.0.0.1:PORT".
    const result = await init(terraform, server, workspace, {
      [`TF_TOKEN_127_0_0_1_${server.port}`]: token,
    });

    assert.equal(result.exitCode, 1, describeRun(result));
    assert.deepEqual(
      requestsOf(server, "module-versions").map((seen) => [seen.auth, seen.status]),
      [["none", 401]],
    );
  },
);

test(
  "terraform init fails with a wrong token, for the module registry and for the mirror",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    const token = newToken();
    await using server = await startFixtureServer({ token });
    // The token was right when written to the config; the server then rotates it.
    const config = { credentials: { [server.host]: token }, networkMirrorUrl: server.mirrorUrl };
    server.setToken(newToken());

    const moduleOnly = await makeWorkspace(t, server, config, { provider: false });
    const moduleRun = await init(terraform, server, moduleOnly);
    assert.equal(moduleRun.exitCode, 1, describeRun(moduleRun));
    assert.match(moduleRun.stderr, /401/);
    assert.deepEqual(
      requestsOf(server, "module-versions").map((seen) => [seen.auth, seen.status]),
      [["invalid", 401]],
    );

    server.clearRequests();
    const providerOnly = await makeWorkspace(t, server, config, { module: false });
    const providerRun = await init(terraform, server, providerOnly);
    assert.equal(providerRun.exitCode, 1, describeRun(providerRun));
    assert.deepEqual(
      requestsOf(server, "mirror-index").map((seen) => [seen.auth, seen.status]),
      [["invalid", 401]],
    );
    assert.equal(requestsOf(server, "archive").length, 0, "a package was downloaded anyway");
  },
);

test(
  "terraform login takes a pasted token that account/details accepts, and refuses others",
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    const token = newToken();
    await using server = await startFixtureServer({ token });
    const home = await makePrivateHome();
    t.after(() => home.cleanup());
    const login = (pasted: string): Promise<TerraformResult> =>
      runTerraform(terraform, ["login", "-no-color", server.host], {
        cwd: home.path,
        env: terraformEnv({ home: home.path, caFile: server.caFile }),
        answers: [
          { prompt: "Do you want to proceed?", answer: "yes" },
          { prompt: `Token for ${server.host}:`, answer: pasted },
        ],
      });
    const credentialsFile = join(terraformPaths(home.path).configDir, "credentials.tfrc.json");

    const refused = await login(newToken());
    assert.equal(refused.exitCode, 1, describeRun(refused));
    assert.match(refused.stderr, /Token is invalid/);
    await assert.rejects(readFile(credentialsFile), { code: "ENOENT" });

    server.clearRequests();
    const accepted = await login(token);
    assert.equal(accepted.exitCode, 0, describeRun(accepted));
    assert.match(accepted.stdout, /Retrieved token for user tester/);
    assert.deepEqual(
      server.requests.map((seen) => [seen.kind, seen.auth]),
      [
        ["discovery", "none"],
        ["tfe-ping", "valid"],
        ["tfe-account", "valid"],
      ],
    );
    const saved: unknown = JSON.parse(await readFile(credentialsFile, "utf8"));
    assert.deepEqual(saved, { credentials: { [server.host]: { token } } });
  },
);

/** A GET to the fixture trusting only its CA, as Terraform does with `SSL_CERT_FILE`. */
async function get(
  server: FixtureServer,
  path: string,
  authorization?: string,
): Promise<{ status: number; body: string }> {
  const ca = await readFile(server.caFile);
  const headers = authorization === undefined ? {} : { authorization };
  return new Promise((resolve, reject) => {
    const req = request(`${server.baseUrl}${path}`, { ca, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
