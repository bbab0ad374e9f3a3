/**
 * Issue 42 cause 7: a table of server certificates, each judged by the token check of the
 * built helper (doctor, on Linux over pass, and the win-x64 build under Wine over Credential
 * Manager) and by the real terraform (`terraform login HOST`, whose discovery request
 * comes first), which must agree: the token goes only where Terraform's Go would connect. One HTTPS server shows each
 * host its own certificate (by SNI); a CONNECT proxy in HTTPS_PROXY brings every host name
 * to it. Nothing leaves the machine.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { createSecureContext, TLSSocket } from "node:tls";
import {
  createCertificate,
  createRsaTestCa,
  createTestCa,
  type CertificateSpec,
  type TestCa,
} from "../e2e/support/certificates.ts";
import { startConnectProxy, type ConnectProxy } from "../e2e/support/connect-proxy.ts";
import { findTerraform, runTerraform, terraformEnv } from "../e2e/support/terraform.ts";
import { onPath } from "../support/find-command.ts";
import { runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession, type PassSession } from "../support/pass-session.ts";
import { assertSilentSuccess } from "../support/protocol-suite.ts";
import {
  buildWindowsHelper,
  startWinePrefix,
  wineMissing,
  type WinePrefix,
} from "../support/wine-prefix.ts";

type Verdict = "connects" | "refused";

interface Case extends CertificateSpec {
  /** The host the client asks for. */
  readonly host: string;
  /** Which CA signs it. */
  readonly ca: "ec" | "rsa";
  /** What Terraform's Go makes of it (verify.go VerifyHostname, x509.go checkSignature). */
  readonly go: Verdict;
}

const DOMAIN = "tls.example.com";
const at = (label: string) => `${label}.${DOMAIN}`;
const CASES: readonly Case[] = [
  {
    host: at("good"),
    commonName: at("good"),
    altNames: [`DNS:${at("good")}`],
    digest: "sha256",
    ca: "ec",
    go: "connects",
  },
  {
    host: at("rsa"),
    commonName: at("rsa"),
    altNames: [`DNS:${at("rsa")}`],
    digest: "sha256",
    ca: "rsa",
    go: "connects",
  },
  // No SAN extension: the name is in the Common Name only, which Go ignores.
  {
    host: at("cn-only"),
    commonName: at("cn-only"),
    altNames: [],
    digest: "sha256",
    ca: "ec",
    go: "refused",
  },
  // An IP SAN only: no DNS name to match.
  {
    host: at("ip-only"),
    commonName: at("ip-only"),
    altNames: ["IP:127.0.0.1"],
    digest: "sha256",
    ca: "ec",
    go: "refused",
  },
  // A partial wildcard: Go takes `*` only as a whole label, so it matches nothing.
  {
    host: at("www"),
    commonName: "partial wildcard",
    altNames: [`DNS:w*.${DOMAIN}`],
    digest: "sha256",
    ca: "ec",
    go: "refused",
  },
  {
    host: `any.wild.${DOMAIN}`,
    commonName: "wildcard",
    altNames: [`DNS:*.wild.${DOMAIN}`],
    digest: "sha256",
    ca: "ec",
    go: "connects",
  },
  // Go compares names ignoring ASCII case.
  {
    host: at("upper"),
    commonName: "upper",
    altNames: [`DNS:${at("upper").toUpperCase()}`],
    digest: "sha256",
    ca: "ec",
    go: "connects",
  },
  // A bare wildcard is no pattern at all for Go 1.23 (validHostname), so it matches nothing.
  {
    host: "tlsbare",
    commonName: "bare wildcard",
    altNames: ["DNS:*"],
    digest: "sha256",
    ca: "ec",
    go: "refused",
  },
  {
    host: at("ecdsa-sha1"),
    commonName: at("ecdsa-sha1"),
    altNames: [`DNS:${at("ecdsa-sha1")}`],
    digest: "sha1",
    ca: "ec",
    go: "refused",
  },
  {
    host: at("rsa-sha1"),
    commonName: at("rsa-sha1"),
    altNames: [`DNS:${at("rsa-sha1")}`],
    digest: "sha1",
    ca: "rsa",
    go: "refused",
  },
];
const tokenOf = (host: string) => `tok-${host}`;
const expected = Object.fromEntries(CASES.map(({ host, go }) => [host, go]));

/** Every request the server answered: the name asked for (SNI), the path, the token sent. */
interface Seen {
  readonly host: string;
  readonly path: string;
  readonly tokenSent: boolean;
}

interface Table {
  readonly bundle: string;
  readonly cas: readonly TestCa[];
  readonly proxy: ConnectProxy;
  readonly seen: Seen[];
  /** Which hosts a request reached since the last call, and forgets them. */
  readonly take: () => Record<string, Verdict>;
}

/** The CAs, the certificates, the server and the proxy; undone by `close`. */
async function startTable(dir: string): Promise<Table & { close(): Promise<void> }> {
  const cas = { ec: await createTestCa(dir), rsa: await createRsaTestCa(dir, "rsa-ca") };
  // SECLEVEL=0: OpenSSL 3 would refuse to serve a certificate signed with SHA-1.
  const contexts = new Map(
    await Promise.all(
      CASES.map(async (entry, index) => {
        const files = await createCertificate(dir, `case-${index}`, entry, cas[entry.ca]);
        const context = createSecureContext({
          cert: readFileSync(files.certFile),
          key: readFileSync(files.keyFile),
          ciphers: "DEFAULT:@SECLEVEL=0",
        });
        return [entry.host, context] as const;
      }),
    ),
  );
  const seen: Seen[] = [];
  const server: Server = createServer(
    {
      SNICallback: (name, done) => done(null, contexts.get(name.toLowerCase())),
      ciphers: "DEFAULT:@SECLEVEL=0",
    },
    (request, response) => {
      const socket = request.socket;
      const name = socket instanceof TLSSocket ? socket.servername : undefined;
      const host = typeof name === "string" ? name : "";
      const url = request.url ?? "";
      seen.push({
        host,
        path: url,
        tokenSent: request.headers.authorization === `Bearer ${tokenOf(host)}`,
      });
      if (url === "/.well-known/terraform.json") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ "modules.v1": "/v1/modules/", "tfe.v2": "/api/v2/" }));
      } else if (url === "/api/v2/account/details" && seen.at(-1)?.tokenSent === true) {
        response.writeHead(200, { "content-type": "application/vnd.api+json" });
        response.end(JSON.stringify({ data: { attributes: { username: "tester" } } }));
      } else {
        response.writeHead(request.headers.authorization === undefined ? 404 : 401).end();
      }
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxy = await startConnectProxy((server.address() as AddressInfo).port);
  const bundle = path.join(dir, "roots.pem");
  writeFileSync(
    bundle,
    [cas.ec, cas.rsa].map(({ caFile }) => readFileSync(caFile, "utf8")).join(""),
  );
  return {
    bundle,
    cas: [cas.ec, cas.rsa],
    proxy,
    seen,
    take: () => {
      const reached = new Set(seen.map(({ host }) => host));
      seen.length = 0;
      return Object.fromEntries(
        CASES.map(({ host }) => [host, reached.has(host) ? "connects" : "refused"]),
      );
    },
    async close() {
      await proxy.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** doctor's line about each host's token, by host. */
function tokenLines(stdout: string): Record<string, string> {
  const lines: Record<string, string> = {};
  for (const line of stdout.split(/\r?\n/)) {
    const host = / token for ([^:]+):/.exec(line)?.[1];
    if (host !== undefined) lines[host] = line;
  }
  return lines;
}

/** doctor's lines agree with what reached the server: accepted where it connected. */
function assertLinesAgree(stdout: string, verdicts: Record<string, Verdict>): void {
  const lines = tokenLines(stdout);
  for (const { host } of CASES) {
    const line = lines[host] ?? "";
    if (verdicts[host] === "connects") assert.match(line, /: accepted, account tester$/, host);
    else assert.match(line, /not checked: discovery failed: TLS: /, host);
  }
}

const terraform = await findTerraform();
const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-tls-table-"));
let table: Promise<Table & { close(): Promise<void> }> | undefined;
const openTable = () => (table ??= startTable(dir));
after(async () => {
  await (await table)?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the TLS table: terraform and the token check agree", () => {
  test(
    "terraform login connects to each host as Go's crypto/x509 says",
    { skip: terraform === undefined && "SKIP: terraform is not on PATH" },
    async () => {
      const { bundle, proxy, take } = await openTable();
      take();
      await Promise.all(
        CASES.map(async ({ host }, index) => {
          const home = path.join(dir, `terraform-${index}`);
          mkdirSync(home, { recursive: true });
          // Discovery comes first; with stdin closed, login stops at its first question.
          await runTerraform(terraform ?? "terraform", ["login", "-no-color", host], {
            cwd: home,
            env: terraformEnv({ home, caFile: bundle, extra: { HTTPS_PROXY: proxy.url } }),
          });
        }),
      );
      assert.deepEqual(take(), expected);
    },
  );

  const linuxSkip =
    linuxOnly("the Linux build's token check") ||
    (onPath("pass") === undefined && "SKIP: pass is missing");
  test(
    "the Linux build's token check sends the token exactly where terraform connects",
    { skip: linuxSkip },
    async () => {
      const { bundle, proxy, seen, take } = await openTable();
      let session: PassSession | undefined;
      try {
        session = await startPassSession();
        const env = { ...session.env, HTTPS_PROXY: proxy.url, SSL_CERT_FILE: bundle };
        const helper = (args: readonly string[], stdin?: string) =>
          runHelper(["--backend", "pass", "--service", "tls", ...args], {
            env,
            timeoutMs: 120_000,
            ...(stdin === undefined ? {} : { stdin }),
          });
        for (const { host } of CASES)
          assertSilentSuccess(
            await helper(["store", host], JSON.stringify({ token: tokenOf(host) })),
          );
        take();
        const doctor = await helper(["doctor"]);
        const tokensTo = new Set(seen.filter(({ tokenSent }) => tokenSent).map(({ host }) => host));
        const verdicts = take();
        assert.deepEqual(verdicts, expected, doctor.stdout);
        assert.deepEqual(
          [...tokensTo].sort(),
          CASES.filter(({ go }) => go === "connects")
            .map(({ host }) => host)
            .sort(),
        );
        assertLinesAgree(doctor.stdout, verdicts);
      } finally {
        await session?.close();
      }
    },
  );

  const missing = wineMissing();
  test(
    "the win-x64 build's token check, under Wine, sends the token exactly where terraform connects",
    { skip: missing ?? false },
    async () => {
      const { cas, proxy, seen, take } = await openTable();
      buildWindowsHelper();
      let wine: WinePrefix | undefined;
      try {
        wine = await startWinePrefix();
        // Go on Windows asks the system's store: the CAs go there, as a user would put them.
        for (const { caFile } of cas) await wine.trustRoot(caFile);
        const command = wine.command(
          path.resolve(
            import.meta.dirname,
            "../../dist/win-x64/terraform-credentials-keychain.exe",
          ),
        );
        const env = { ...wine.env, HTTPS_PROXY: proxy.url };
        const helper = (args: readonly string[], stdin?: string) =>
          runHelper(["--service", "tls", ...args], {
            env,
            command,
            timeoutMs: 120_000,
            ...(stdin === undefined ? {} : { stdin }),
          });
        for (const { host } of CASES)
          assertSilentSuccess(
            await helper(["store", host], JSON.stringify({ token: tokenOf(host) })),
          );
        take();
        const doctor = await helper(["doctor"]);
        const tokensTo = new Set(seen.filter(({ tokenSent }) => tokenSent).map(({ host }) => host));
        const verdicts = take();
        assert.deepEqual(verdicts, expected, doctor.stdout);
        assert.deepEqual(
          [...tokensTo].sort(),
          CASES.filter(({ go }) => go === "connects")
            .map(({ host }) => host)
            .sort(),
        );
        assertLinesAgree(doctor.stdout, verdicts);
      } finally {
        await wine?.close();
      }
    },
  );
});
