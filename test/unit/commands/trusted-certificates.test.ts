import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { symlinkSync } from "node:fs";
import { describe, test } from "node:test";
import { rootCertificates } from "node:tls";
import {
  certificatesInPem,
  trustedCertificates,
} from "../../../src/commands/trusted-certificates.ts";
import { createTempHome } from "./temp-home.ts";

// Two real certificates: the runtime's bundled roots parse as any CA's would.
const [FIRST = "", SECOND = ""] = rootCertificates;
const canonical = (pem: string) => new X509Certificate(pem).toString();
const block = (type: string, body: string) =>
  `-----BEGIN ${type}-----\n${body}\n-----END ${type}-----\n`;
const bodyOf = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").trim();

describe("certificatesInPem keeps what Go's AppendCertsFromPEM keeps", () => {
  test("a block that is no certificate is skipped, and the certificates around it count", () => {
    const bundle = [
      FIRST,
      block("CERTIFICATE", "Tm90IGEgY2VydGlmaWNhdGUsIGJ1dCB2YWxpZCBiYXNlNjQ="),
      block("CERTIFICATE", "not base64 at all!"),
      block("CERTIFICATE", ""),
      SECOND,
    ].join("\n");
    assert.deepEqual(certificatesInPem(bundle), [canonical(FIRST), canonical(SECOND)]);
  });

  test("other block types and blocks with headers are skipped, as x509 does", () => {
    const body = bodyOf(FIRST);
    assert.deepEqual(
      certificatesInPem(
        [
          block("TRUSTED CERTIFICATE", body),
          block("X509 CRL", body),
          block("CERTIFICATE", `Proc-Type: 4,ENCRYPTED\n\n${body}`),
        ].join(""),
      ),
      [],
    );
  });

  test("CRLF line ends, text around the blocks and a BEGIN without END", () => {
    const crlf = `# a comment\r\n${FIRST.replace(/\n/g, "\r\n")}\r\ntrailing text\r\n-----BEGIN CERTIFICATE-----\r\nMIIB`;
    assert.deepEqual(certificatesInPem(crlf), [canonical(FIRST)]);
  });
});

describe("trustedCertificates", () => {
  test("a bundle with an unparsable block still yields its certificates", (t) => {
    const box = createTempHome(t, "tfck-roots-");
    const bundle = box.inHome("bundle.pem");
    box.write(bundle, `${block("CERTIFICATE", "garbage+garbage+")}${FIRST}`);
    assert.deepEqual(trustedCertificates({ files: [bundle], dirs: [] }), [canonical(FIRST)]);
  });

  test("the first readable file only, then every file of each directory, each certificate once", (t) => {
    const box = createTempHome(t, "tfck-roots-");
    box.write(box.inHome("first.pem"), FIRST);
    box.write(box.inHome("second.pem"), SECOND);
    box.write(box.inHome("certs", "a.pem"), SECOND);
    symlinkSync("a.pem", box.inHome("certs", "0a1b2c3d.0"));
    box.write(box.inHome("certs", "notes.txt"), "no certificate here");
    assert.deepEqual(
      trustedCertificates({
        files: [box.inHome("missing.pem"), box.inHome("first.pem"), box.inHome("second.pem")],
        dirs: [box.inHome("certs"), box.inHome("no-such-dir")],
      }),
      [canonical(FIRST), canonical(SECOND)],
    );
  });

  test("no sources (macOS, Windows): undefined, the platform's roots", () => {
    assert.equal(trustedCertificates(undefined), undefined);
  });
});
