import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startConnectProxy, type ConnectProxy } from "../e2e/support/connect-proxy.ts";
import {
  fixtureConfiguration,
  startFixtureServer,
  type FixtureServer,
} from "../e2e/support/fixture-server.ts";
import {
  findTerraform,
  runTerraform,
  skipWithoutTerraform,
  tokenEnvVarName,
} from "../e2e/support/terraform.ts";
import { onPath } from "../support/find-command.ts";
import { execFileSync } from "node:child_process";
import { helperCommand, runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession, type PassSession } from "../support/pass-session.ts";
import { assertSilentSuccess } from "../support/protocol-suite.ts";
import { PATIENCE_MS, PROMPT_MS } from "../support/timing.ts";

// doctor's token check through the built executable, over a real pass store, against the
// HTTPS fixture: every host name reaches 127.0.0.1 through a CONNECT proxy in HTTPS_PROXY,
// with the fixture's private CA in SSL_CERT_FILE. Nothing leaves the machine. A second
// fixture, whose CA nothing trusts, plays a host that is not who it says.

/** What each host's server accepts, and what is stored for it. */
const SERVER_TOKENS = {
  "good.example.com": "tok-good-accepted",
  "revoked.example.com": "tok-revoked-current",
  "mirror.example.com": "tok-mirror",
  "split.example.com": "tok-split",
  "api.example.net": "tok-api-elsewhere",
};
const STORED: Record<string, string> = {
  "good.example.com": "tok-good-accepted",
  "revoked.example.com": "tok-revoked-expired",
  "mirror.example.com": "tok-mirror",
  "split.example.com": "tok-split",
  // Routed to the fixture, whose certificate does not name it.
  "badtls.example.com": "tok-badtls",
  // Routed to a listener that accepts and never answers.
  "silent.example.com": "tok-silent",
};
const TIMEOUT_SECONDS = 4;
/** In the store's order: hosts sorted. */
const LINES = [
  "warn  token for badtls.example.com: not checked: discovery failed: TLS: the certificate is not valid for this name (ERR_TLS_CERT_ALTNAME_INVALID)",
  "ok    token for good.example.com: accepted, account tester",
  "ok    token for mirror.example.com: not checked: the host offers no tfe.v2 API to check it with (a module or provider registry)",
  "FAIL  token for revoked.example.com: rejected by revoked.example.com (HTTP 401)",
  '      fix: run "terraform login revoked.example.com" (or "tofu login revoked.example.com") to store a new one',
  `warn  token for silent.example.com: not checked: discovery failed: no answer within ${TIMEOUT_SECONDS} s`,
  "warn  token for split.example.com: not checked: its tfe.v2 API is on another host, api.example.net, and the token goes only to split.example.com",
];
const ACCEPTED = LINES[1];
/** The host the untrusted fixture answers for, and the token stored for it. */
const IMPOSTOR = "impostor.example.com";
const IMPOSTOR_TOKEN = "tok-for-the-impostor";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const skip =
  linuxOnly("doctor's token check") || (onPath("pass") === undefined && "SKIP: pass is missing");
/** A network namespace of its own: a machine with no network at all (needs root). */
const noNetwork = (() => {
  try {
    execFileSync("unshare", ["-n", "true"], { stdio: "ignore" });
    return false;
  } catch {
    return "SKIP: unshare -n is not allowed here";
  }
})();

describe("doctor checks the stored tokens with their hosts", { skip }, () => {
  let session: PassSession;
  let server: FixtureServer;
  let impostor: FixtureServer;
  let proxy: ConnectProxy;
  let silent: Server;
  const held = new Set<Socket>();
  let env: Record<string, string>;
  const helper = (
    args: readonly string[],
    extra: Record<string, string | undefined> = {},
    options: { stdin?: string; command?: [string, ...string[]] } = {},
  ) =>
    runHelper(["--backend", "pass", ...args], {
      env: { ...env, ...extra },
      timeoutMs: PATIENCE_MS,
      ...options,
    });
  /** doctor's lines about stored tokens, with the indented lines under each. */
  const tokenLines = (stdout: string) => {
    let inside = false;
    return stdout.split("\n").filter((line) => {
      if (!line.startsWith(" ")) inside = / token for |stored tokens/.test(line);
      return inside && line !== "";
    });
  };

  before(async () => {
    session = await startPassSession();
    server = await startFixtureServer({
      token: "tok-unused",
      tokensByHost: SERVER_TOKENS,
      discoveryByHost: {
        "mirror.example.com": { "modules.v1": "/v1/modules/" },
        "split.example.com": {
          "modules.v1": "/v1/modules/",
          "tfe.v2": "https://api.example.net/api/v2/",
        },
      },
    });
    silent = createServer((socket) => {
      held.add(socket);
      socket.on("close", () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    // Accepts the token it is sent: a certificate check that lets it through would show.
    impostor = await startFixtureServer({
      token: "tok-unused",
      tokensByHost: { [IMPOSTOR]: IMPOSTOR_TOKEN },
    });
    proxy = await startConnectProxy(server.port, {
      "silent.example.com": (silent.address() as AddressInfo).port,
      [IMPOSTOR]: impostor.port,
    });
    env = { ...session.env, HTTPS_PROXY: proxy.url, SSL_CERT_FILE: server.caFile };
    const installed = await helper(["install"]);
    assert.equal(installed.code, 0, installed.stderr);
    const store = async (args: readonly string[], token: string) =>
      assertSilentSuccess(await helper(args, {}, { stdin: JSON.stringify({ token }) }));
    for (const [host, token] of Object.entries(STORED)) await store(["store", host], token);
    await store(["--service", "solo", "store", "good.example.com"], STORED["good.example.com"]!);
    await store(["--service", "impostor", "store", IMPOSTOR], IMPOSTOR_TOKEN);
    server.clearRequests();
  });
  after(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    await proxy.close();
    await impostor.close();
    await server.close();
    await session.close();
  });

  test("one line per host, never a token; the rejected one fails doctor; within the deadline", async () => {
    const result = await helper(["--timeout", String(TIMEOUT_SECONDS), "doctor"]);
    // Each token reached only its own host, and only account/details.
    const withToken = server.requests.filter(
      (request) => request.authorizationSha256 !== undefined,
    );
    for (const request of withToken) {
      assert.equal(
        request.authorizationSha256,
        sha256(`Bearer ${STORED[request.host] ?? "?"}`),
        request.host,
      );
      assert.equal(request.path, "/api/v2/account/details");
    }
    assert.deepEqual(withToken.map((request) => request.host).sort(), [
      "good.example.com",
      "revoked.example.com",
    ]);
    assert.deepEqual(
      server.requests.filter((request) => request.host === "api.example.net"),
      [],
    );
    assert.ok(
      !server.requests.some(
        (request) =>
          request.host === "badtls.example.com" && request.authorizationSha256 !== undefined,
      ),
    );
    assert.deepEqual(tokenLines(result.stdout), LINES, result.stdout);
    assert.equal(result.code, 1);
    assert.equal(result.stderr, "doctor: 1 check failed\n");
    for (const token of [...Object.values(STORED), ...Object.values(SERVER_TOKENS)])
      assert.ok(!`${result.stdout}${result.stderr}`.includes(token), "no token is printed");
    // The whole check is bounded: the silent host costs the deadline, not more.
    assert.ok(result.milliseconds < (TIMEOUT_SECONDS + 6) * 1000, `${result.milliseconds} ms`);
  });

  test("only accepted tokens: doctor exits 0", async () => {
    const result = await helper(["--service", "solo", "doctor"]);
    assert.deepEqual(tokenLines(result.stdout), [ACCEPTED], result.stdout);
    assert.equal(result.code, 0, result.stdout);
  });

  test("a host shadowed by TF_TOKEN_*: said so, and the stored token is the one checked", async () => {
    server.clearRequests();
    const result = await helper(["--service", "solo", "doctor"], {
      TF_TOKEN_good_example_com: "tok-from-variable",
    });
    assert.deepEqual(tokenLines(result.stdout), [
      ACCEPTED,
      "      Terraform uses the variable TF_TOKEN_good_example_com for good.example.com, not the helper: the token checked is the one in pass",
    ]);
    const sent = server.requests.flatMap((request) => request.authorizationSha256 ?? []);
    assert.deepEqual(sent, [sha256(`Bearer ${STORED["good.example.com"]!}`)]);
  });

  test("a loopback host goes direct though HTTPS_PROXY is set, as Go does (Bun alone would proxy it)", async () => {
    const before = proxy.targets.length;
    const host = server.host;
    assertSilentSuccess(
      await helper(
        ["--service", "loopback", "store", host],
        {},
        { stdin: '{"token":"tok-unused"}' },
      ),
    );
    const result = await helper(["--service", "loopback", "doctor"]);
    assert.deepEqual(tokenLines(result.stdout), [
      `ok    token for ${host}: accepted, account tester`,
    ]);
    assert.equal(proxy.targets.length, before, "the proxy saw nothing");
  });

  test("SSL_CERT_DIR is honoured as Go does: Bun by itself reads only c_rehash names there", async () => {
    const dir = path.join(session.home, "certs");
    mkdirSync(dir, { recursive: true });
    copyFileSync(server.caFile, path.join(dir, "private-ca.pem"));
    const result = await helper(["--service", "solo", "doctor"], {
      SSL_CERT_FILE: undefined,
      SSL_CERT_DIR: dir,
    });
    assert.deepEqual(tokenLines(result.stdout), [ACCEPTED], result.stdout);
  });

  // Go and Terraform read none of these: a token must not go where Terraform's would not.
  for (const [what, variables] of [
    ["NODE_TLS_REJECT_UNAUTHORIZED=0", { NODE_TLS_REJECT_UNAUTHORIZED: "0" }],
    ["NODE_EXTRA_CA_CERTS with the impostor's CA", { NODE_EXTRA_CA_CERTS: "impostor" }],
    [
      "all of Bun's trust variables at once",
      {
        NODE_TLS_REJECT_UNAUTHORIZED: "0",
        NODE_EXTRA_CA_CERTS: "impostor",
        NODE_USE_SYSTEM_CA: "1",
        BUN_OPTIONS: "--use-system-ca",
      },
    ],
  ] as const)
    test(`${what}: a host with an untrusted certificate gets no token`, async () => {
      impostor.clearRequests();
      const extra = Object.fromEntries(
        Object.entries(variables).map(([name, value]) => [
          name,
          value === "impostor" ? impostor.caFile : value,
        ]),
      );
      const result = await helper(["--service", "impostor", "doctor"], extra);
      assert.deepEqual(impostor.requests, [], "the impostor saw a request");
      assert.deepEqual(tokenLines(result.stdout), [
        `warn  token for ${IMPOSTOR}: not checked: discovery failed: TLS: the certificate is not signed by a trusted CA (UNABLE_TO_VERIFY_LEAF_SIGNATURE)`,
      ]);
    });

  test("BUN_CONFIG_VERBOSE_FETCH=curl prints no request, so no token, on stderr", async () => {
    // A direct connection: through a proxy, Bun 1.4.5 logs only the first request in full.
    const host = server.host;
    const service = ["--service", "verbose"];
    const token = "tok-unused";
    assertSilentSuccess(
      await helper([...service, "store", host], {}, { stdin: JSON.stringify({ token }) }),
    );
    const result = await helper([...service, "doctor"], { BUN_CONFIG_VERBOSE_FETCH: "curl" });
    assert.ok(!result.stderr.includes(token), "the token is on stderr");
    assert.equal(result.stderr, "");
    assert.deepEqual(tokenLines(result.stdout), [
      `ok    token for ${host}: accepted, account tester`,
    ]);
  });

  test("a bundle with an unparsable block: skipped as Go skips it, and Terraform agrees", async (t) => {
    const bundle = path.join(session.home, "bundle-with-garbage.pem");
    const garbage =
      "-----BEGIN CERTIFICATE-----\nTm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n";
    writeFileSync(bundle, `${garbage}${readFileSync(server.caFile, "utf8")}`);
    const result = await helper(["--service", "solo", "doctor"], { SSL_CERT_FILE: bundle });
    assert.deepEqual(tokenLines(result.stdout), [ACCEPTED], result.stdout);

    // The referee: terraform init fetches a module from the fixture with the same bundle.
    const terraform = await findTerraform();
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    const workspace = path.join(session.home, "referee");
    mkdirSync(workspace, { recursive: true });
    writeFileSync(
      path.join(workspace, "main.tf"),
      fixtureConfiguration(server, { provider: false }),
    );
    writeFileSync(path.join(workspace, "empty.tfrc"), "");
    server.clearRequests();
    const init = await runTerraform(terraform, ["init", "-input=false", "-no-color"], {
      cwd: workspace,
      env: {
        ...env,
        SSL_CERT_FILE: bundle,
        TF_CLI_CONFIG_FILE: path.join(workspace, "empty.tfrc"),
        CHECKPOINT_DISABLE: "1",
        [tokenEnvVarName(server.host)]: "tok-unused",
      },
    });
    assert.equal(init.exitCode, 0, `${init.stdout}${init.stderr}`);
    assert.ok(server.requests.some((request) => request.auth === "valid"));
  });

  describe("a machine with no network", { skip: noNetwork }, () => {
    const offline = (extra: Record<string, string | undefined>) =>
      helper(["--service", "solo", "doctor"], extra, {
        command: ["unshare", "-n", ...helperCommand()],
      });

    test("fails fast, well within the deadline, through the proxy or not", async () => {
      for (const extra of [{}, { HTTPS_PROXY: undefined }]) {
        const result = await offline(extra);
        const [line = ""] = tokenLines(result.stdout);
        assert.match(
          line,
          /^warn {2}token for good\.example\.com: not checked: discovery failed: /,
        );
        assert.ok(result.milliseconds < PROMPT_MS, `${result.milliseconds} ms`);
      }
    });

    test("NO_PROXY sends the host direct, as Go does: a DNS failure, not the proxy's", async () => {
      const direct = await offline({ NO_PROXY: ".example.com" });
      assert.match(
        tokenLines(direct.stdout)[0] ?? "",
        /discovery failed: DNS: good\.example\.com not found/,
      );
      // Go matches ports too: an entry for another port leaves the host on the proxy.
      const proxied = await offline({ NO_PROXY: "good.example.com:8443" });
      assert.doesNotMatch(tokenLines(proxied.stdout)[0] ?? "", /DNS/);
    });
  });

  test("--offline sends no request at all", async () => {
    server.clearRequests();
    const before = proxy.targets.length;
    const result = await helper(["doctor", "--offline"]);
    assert.deepEqual(tokenLines(result.stdout), ["ok    stored tokens not checked: --offline"]);
    assert.deepEqual(server.requests, []);
    assert.equal(proxy.targets.length, before);
  });
});
