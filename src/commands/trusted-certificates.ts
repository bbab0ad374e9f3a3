import { X509Certificate } from "node:crypto";
import { readdirSync } from "node:fs";
import path from "node:path";
import { readTextIfExists } from "../system/files.ts";
import type { CertificateSources } from "../terraform/go-network.ts";

/** A PEM block: its type, and what lies between its BEGIN and END lines. */
const PEM_BLOCK = /-----BEGIN ([^\n-]*)-----[ \t]*\r?\n([\s\S]*?)-----END \1-----/g;

/**
 * The certificates of PEM text that Go's `CertPool.AppendCertsFromPEM` keeps: blocks of type
 * CERTIFICATE, without headers, whose base64 decodes and whose DER parses as a certificate.
 * Any other block is skipped, and the rest still count (a bundle with one bad block is still
 * a bundle). Each comes back re-encoded as clean PEM, as Bun takes for `tls.ca`.
 */
export function certificatesInPem(text: string): string[] {
  const found: string[] = [];
  for (const [, type, body = ""] of text.matchAll(PEM_BLOCK)) {
    // encoding/pem: "Key: value" lines before the base64 are headers; x509 skips such blocks.
    if (type !== "CERTIFICATE" || body.includes(":")) continue;
    const base64 = body.replace(/\s+/g, "");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 !== 0) continue;
    try {
      found.push(new X509Certificate(Buffer.from(base64, "base64")).toString());
    } catch {
      // x509.ParseCertificate failed: Go skips the block.
    }
  }
  return found;
}

/**
 * The PEM certificates Go would trust, read from `sources` as crypto/x509 does: the first
 * bundle file that can be read, then every file in each directory (unreadable entries and
 * blocks that are no certificate are skipped). Each certificate once. `undefined` sources:
 * `undefined`, the platform's own roots. An empty list means nothing is trusted, as Go would
 * then fail too.
 */
export function trustedCertificates(sources: CertificateSources | undefined): string[] | undefined {
  if (sources === undefined) return undefined;
  const found = new Set<string>();
  const add = (file: string): boolean => {
    let text;
    try {
      text = readTextIfExists(file);
    } catch {
      return false;
    }
    for (const pem of certificatesInPem(text ?? "")) found.add(pem);
    return text !== undefined;
  };
  sources.files.find(add);
  for (const dir of sources.dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) add(path.join(dir, name));
  }
  return [...found];
}
