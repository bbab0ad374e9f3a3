import { readdirSync } from "node:fs";
import path from "node:path";
import { readTextIfExists } from "../system/files.ts";
import type { CertificateSources } from "../terraform/go-network.ts";

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The PEM certificates Go would trust, read from `sources` as crypto/x509 does: the first
 * bundle file that can be read, then every file in each directory (unreadable entries and
 * non-certificates are skipped). Each certificate once. `undefined` sources: `undefined`, the
 * runtime's own roots. An empty list means nothing is trusted, as Go would then fail too.
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
    for (const pem of text?.match(PEM_CERTIFICATE) ?? []) found.add(pem);
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
