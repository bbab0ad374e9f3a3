// Go's crypto/x509 rules for a server's certificate (verify.go VerifyHostname, x509.go
// checkSignature), on certificates openssl makes; test/integration/tls-table.test.ts has
// the real terraform judge the same kinds through the built helper.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  createCertificate,
  createRsaTestCa,
  createTestCa,
  type CertificateSpec,
  type TestCa,
} from "../../e2e/support/certificates.ts";
import {
  parseCertificate,
  serverCertificateRefusal,
  verifyHostname,
} from "../../../src/terraform/go-x509.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-go-x509-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let ec: TestCa;
let rsa: TestCa;
before(async () => {
  ec = await createTestCa(dir);
  rsa = await createRsaTestCa(dir, "rsa-ca");
});

let count = 0;
/** The DER of a certificate for `altNames`, signed by the EC CA (or `ca`) with `digest`. */
async function der(
  altNames: readonly string[],
  { digest = "sha256", ca, commonName = "leaf" }: Partial<CertificateSpec> & { ca?: TestCa } = {},
): Promise<Uint8Array> {
  const { certFile } = await createCertificate(
    dir,
    `leaf-${count++}`,
    { altNames, digest, commonName },
    ca ?? ec,
  );
  return new X509Certificate(readFileSync(certFile)).raw;
}

describe("verifyHostname (verify.go VerifyHostname)", () => {
  test("DNS names: exact but for ASCII case, one trailing dot on the host, never the Common Name", async () => {
    const cert = parseCertificate(
      await der(["DNS:Good.Example.COM", "DNS:dotted.example.com."], {
        commonName: "cn.example.com",
      }),
    );
    assert.equal(verifyHostname(cert, "good.example.com"), true);
    assert.equal(verifyHostname(cert, "GOOD.example.com"), true);
    assert.equal(verifyHostname(cert, "good.example.com."), true);
    assert.equal(verifyHostname(cert, "good.example.com.."), false);
    assert.equal(verifyHostname(cert, "cn.example.com"), false);
    assert.equal(verifyHostname(cert, "example.com"), false);
    // A pattern ending in a dot is no valid pattern: only an exact match would count.
    assert.equal(verifyHostname(cert, "dotted.example.com"), false);
  });

  test("a wildcard only as the whole left-most label, for exactly one label", async () => {
    const cert = parseCertificate(await der(["DNS:*.wild.example.com", "DNS:w*.example.com"]));
    assert.equal(verifyHostname(cert, "a.wild.example.com"), true);
    assert.equal(verifyHostname(cert, "a_b.wild.example.com"), true);
    assert.equal(verifyHostname(cert, "wild.example.com"), false);
    assert.equal(verifyHostname(cert, "a.b.wild.example.com"), false);
    assert.equal(verifyHostname(cert, "www.example.com"), false);
    assert.equal(verifyHostname(cert, "w.example.com"), false);
  });

  test("a bare wildcard is no pattern: it matches no one-label name, only itself", async () => {
    const cert = parseCertificate(await der(["DNS:*"]));
    assert.equal(verifyHostname(cert, "tlsbare"), false);
    // Go always allows a perfect match of names that are no valid host names.
    assert.equal(verifyHostname(cert, "*"), true);
  });

  test("IP addresses only against IP SANs, v4 and v4-in-v6 alike, in brackets or not", async () => {
    const cert = parseCertificate(await der(["IP:127.0.0.1", "IP:::1", "DNS:10.0.0.1"]));
    assert.equal(verifyHostname(cert, "127.0.0.1"), true);
    assert.equal(verifyHostname(cert, "[::ffff:127.0.0.1]"), true);
    assert.equal(verifyHostname(cert, "::1"), true);
    assert.equal(verifyHostname(cert, "[::1]"), true);
    assert.equal(verifyHostname(cert, "10.0.0.1"), false);
    assert.equal(verifyHostname(cert, "localhost"), false);
  });
});

describe("serverCertificateRefusal", () => {
  test("no SAN extension, or IP SANs only: refused for a name, saying why", async () => {
    const cnOnly = await der([], { commonName: "host.example.com" });
    assert.match(
      serverCertificateRefusal("host.example.com", cnOnly, false)?.reason ?? "",
      /only in the Common Name/,
    );
    const ipOnly = await der(["IP:127.0.0.1"], { commonName: "host.example.com" });
    assert.deepEqual(serverCertificateRefusal("host.example.com", ipOnly, false), {
      code: "ERR_TLS_CERT_ALTNAME_INVALID",
      reason: "the certificate is valid for no host name",
    });
    assert.equal(serverCertificateRefusal("127.0.0.1", ipOnly, false), undefined);
  });

  test("SHA-1 signatures, ECDSA and RSA, are insecure unless the certificate is a trusted root itself", async () => {
    for (const [ca, name] of [
      [ec, "ECDSA-SHA1"],
      [rsa, "SHA1-RSA"],
    ] as const) {
      const cert = await der(["DNS:h.example.com"], { digest: "sha1", ca });
      assert.deepEqual(serverCertificateRefusal("h.example.com", cert, false), {
        code: "ERR_X509_INSECURE_ALGORITHM",
        reason: `the certificate is signed with ${name}, an insecure algorithm Go refuses`,
      });
      assert.equal(serverCertificateRefusal("h.example.com", cert, true), undefined);
    }
    for (const ca of [ec, rsa]) {
      const cert = await der(["DNS:h.example.com"], { ca });
      assert.equal(serverCertificateRefusal("h.example.com", cert, false), undefined);
    }
  });

  test("RSA-PSS: SHA-256 with a salt as long as the hash is Go's; SHA-1 is unknown to Go", async () => {
    const pss = (hash: string, salt: number) => {
      const out = path.join(dir, `pss-${hash}-${salt}.pem`);
      const key = path.join(dir, `pss-${hash}-${salt}.key`);
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-keyout",
          key,
          "-out",
          out,
          "-days",
          "1",
          "-subj",
          "/CN=pss",
          "-addext",
          "subjectAltName=DNS:pss.example.com",
          `-${hash}`,
          "-sigopt",
          "rsa_padding_mode:pss",
          "-sigopt",
          `rsa_pss_saltlen:${salt}`,
          "-sigopt",
          `rsa_mgf1_md:${hash}`,
        ],
        { stdio: "pipe" },
      );
      return new X509Certificate(readFileSync(out)).raw;
    };
    assert.equal(parseCertificate(pss("sha256", 32)).signatureAlgorithm, "SHA256-RSAPSS");
    assert.equal(serverCertificateRefusal("pss.example.com", pss("sha256", 32), false), undefined);
    assert.equal(
      serverCertificateRefusal("pss.example.com", pss("sha256", 20), false)?.code,
      "ERR_X509_UNSUPPORTED_ALGORITHM",
    );
    assert.equal(
      serverCertificateRefusal("pss.example.com", pss("sha1", 20), false)?.code,
      "ERR_X509_UNSUPPORTED_ALGORITHM",
    );
  });

  test("bytes that are no DER certificate are refused, not half-read", async () => {
    const cert = await der(["DNS:h.example.com"]);
    for (const broken of [
      cert.subarray(0, cert.length - 1),
      Uint8Array.from([0x30, 0x80]),
      new Uint8Array(),
    ])
      assert.equal(
        serverCertificateRefusal("h.example.com", broken, false)?.code,
        "ERR_X509_MALFORMED",
      );
  });
});
