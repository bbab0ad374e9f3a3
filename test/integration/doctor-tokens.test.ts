import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startConnectProxy, type ConnectProxy } from "../e2e/support/connect-proxy.ts";
import { startFixtureServer, type FixtureServer } from "../e2e/support/fixture-server.ts";
import { onPath } from "../support/find-command.ts";
import { execFileSync } from "node:child_process";
import { helperCommand, runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession, type PassSession } from "../support/pass-session.ts";
import { assertSilentSuccess } from "../support/protocol-suite.ts";

// doctor's token check through the built executable, over a real pass store, against the
// HTTPS fixture: every host name reaches 127.0.0.1 through a CONNECT proxy in HTTPS_PROXY,
// with the fixture's private CA in SSL_CERT_FILE. Nothing leaves the machine.

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
      timeoutMs: 60_000,
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
    proxy = await startConnectProxy(server.port, {
      "silent.example.com": (silent.address() as AddressInfo).port,
    });
    env = { ...session.env, HTTPS_PROXY: proxy.url, SSL_CERT_FILE: server.caFile };
    const installed = await helper(["install"]);
    assert.equal(installed.code, 0, installed.stderr);
    const store = async (args: readonly string[], token: string) =>
      assertSilentSuccess(await helper(args, {}, { stdin: JSON.stringify({ token }) }));
    for (const [host, token] of Object.entries(STORED)) await store(["store", host], token);
    await store(["--service", "solo", "store", "good.example.com"], STORED["good.example.com"]!);
    server.clearRequests();
  });
  after(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    await proxy.close();
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

  test("SSL_CERT_DIR is honoured as Go does: Bun by itself ignores it", async () => {
    const dir = path.join(session.home, "certs");
    mkdirSync(dir, { recursive: true });
    copyFileSync(server.caFile, path.join(dir, "private-ca.pem"));
    const result = await helper(["--service", "solo", "doctor"], {
      SSL_CERT_FILE: undefined,
      SSL_CERT_DIR: dir,
    });
    assert.deepEqual(tokenLines(result.stdout), [ACCEPTED], result.stdout);
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
        assert.ok(result.milliseconds < 10_000, `${result.milliseconds} ms`);
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
