import { isIP } from "node:net";
import { DER, DerError, oidText, readAll, readElement, readOnly } from "../system/der.ts";
import type { DerElement } from "../system/der.ts";
import type { CertificateRefusal } from "../system/https-get.ts";
import { addressBytes } from "./go-network.ts";

/**
 * How Terraform's Go (`crypto/x509`, Go 1.23 in terraform 1.11) judges the certificate a
 * server shows, where the TLS library the helper runs on (BoringSSL, with Node's host-name
 * rules) judges otherwise: the host name is checked as `(*Certificate).VerifyHostname`
 * checks it, and the signature algorithms `checkSignature` refuses are refused. The chain
 * itself (issuers, validity, key usage) is left to the TLS library, which agrees with Go
 * there; the runtime shows only the leaf, so an intermediate signed with SHA-1 is not seen
 * here. On every platform, though Go on Windows and macOS asks the system's verifier
 * (root_windows.go, root_darwin.go `systemVerify`). Pure: a certificate's DER in, a verdict out.
 */

/** What Go's parser (parser.go `parseCertificate`) keeps of a certificate, for these checks. */
export interface GoCertificate {
  /** The SAN extension's dNSName entries, as written. */
  readonly dnsNames: readonly string[];
  /** The SAN extension's iPAddress entries: 4 or 16 bytes each. */
  readonly ipAddresses: readonly Uint8Array[];
  /** Whether the certificate has a SAN extension at all (Go's `hasSANExtension`). */
  readonly hasSanExtension: boolean;
  /** The outer signature algorithm, as Go names it (`SignatureAlgorithm.String`), or its OID. */
  readonly signatureAlgorithm: string;
  /** Whether Go would verify a signature made with it (`checkSignature`), and if not, why. */
  readonly signatureRefusal: "insecure" | "unsupported" | undefined;
}

const OID_SUBJECT_ALT_NAME = "2.5.29.17";
const OID_RSA_PSS = "1.2.840.113549.1.1.10";
const OID_MGF1 = "1.2.840.113549.1.1.8";

/**
 * Go's `signatureAlgorithmDetails` (x509.go), by OID, with what `checkSignature` makes of
 * each: MD5 and SHA-1 are insecure (`InsecureAlgorithmError`; SHA-1 only with
 * GODEBUG=x509sha1=1, which Terraform's users do not set); MD2 and DSA it cannot verify.
 */
const SIGNATURE_ALGORITHMS: Readonly<
  Record<string, [string, "insecure" | "unsupported" | undefined]>
> = {
  "1.2.840.113549.1.1.2": ["MD2-RSA", "unsupported"],
  "1.2.840.113549.1.1.4": ["MD5-RSA", "insecure"],
  "1.2.840.113549.1.1.5": ["SHA1-RSA", "insecure"],
  "1.3.14.3.2.29": ["SHA1-RSA", "insecure"],
  "1.2.840.113549.1.1.11": ["SHA256-RSA", undefined],
  "1.2.840.113549.1.1.12": ["SHA384-RSA", undefined],
  "1.2.840.113549.1.1.13": ["SHA512-RSA", undefined],
  "1.2.840.10040.4.3": ["DSA-SHA1", "insecure"],
  "2.16.840.1.101.3.4.3.2": ["DSA-SHA256", "unsupported"],
  "1.2.840.10045.4.1": ["ECDSA-SHA1", "insecure"],
  "1.2.840.10045.4.3.2": ["ECDSA-SHA256", undefined],
  "1.2.840.10045.4.3.3": ["ECDSA-SHA384", undefined],
  "1.2.840.10045.4.3.4": ["ECDSA-SHA512", undefined],
  "1.3.101.112": ["Ed25519", undefined],
};

/** The hashes RSASSA-PSS may name (x509.go `getSignatureAlgorithmFromAI`), with their sizes. */
const PSS_HASHES: Readonly<Record<string, [string, number]>> = {
  "2.16.840.1.101.3.4.2.1": ["SHA256-RSAPSS", 32],
  "2.16.840.1.101.3.4.2.2": ["SHA384-RSAPSS", 48],
  "2.16.840.1.101.3.4.2.3": ["SHA512-RSAPSS", 64],
};

/**
 * Reads what Go reads of the DER certificate `der` for these checks (parser.go
 * `parseCertificate`, `parseSANExtension`). Throws a `DerError` where Go's parser fails,
 * which makes Go refuse the connection.
 */
export function parseCertificate(der: Uint8Array): GoCertificate {
  const [tbs, algorithm, signature, ...extra] = readAll(readOnly(der, DER.SEQUENCE).content);
  if (tbs?.tag !== DER.SEQUENCE || algorithm?.tag !== DER.SEQUENCE)
    throw new DerError("malformed certificate");
  if (signature?.tag !== DER.BIT_STRING || extra.length > 0)
    throw new DerError("malformed certificate");
  const fields = readAll(tbs.content);
  const start = fields[0]?.tag === DER.explicit(0) ? 1 : 0;
  const inner = fields[start + 1];
  // parseCertificate: "x509: inner and outer signature algorithm identifiers don't match".
  if (inner === undefined || !sameBytes(inner.encoding, algorithm.encoding))
    throw new DerError("inner and outer signature algorithms differ");
  const names = { dnsNames: [] as string[], ipAddresses: [] as Uint8Array[], found: false };
  const extensions = fields.slice(start + 6).find(({ tag }) => tag === DER.explicit(3));
  const seen = new Set<string>();
  for (const extension of extensions === undefined
    ? []
    : readAll(readOnly(extensions.content, DER.SEQUENCE).content)) {
    const [id, ...rest] = readAll(extension.content);
    if (id?.tag !== DER.OID) throw new DerError("malformed extension");
    const oid = oidText(id.content);
    // parseCertificate: "x509: certificate contains duplicate extensions".
    if (seen.has(oid)) throw new DerError("duplicate extension");
    seen.add(oid);
    const value = rest.at(-1);
    if (value?.tag !== DER.OCTET_STRING) throw new DerError("malformed extension");
    if (oid === OID_SUBJECT_ALT_NAME) {
      names.found = true;
      readSubjectAltNames(value.content, names);
    }
  }
  const [name, refusal] = signatureAlgorithmOf(algorithm);
  return {
    dnsNames: names.dnsNames,
    ipAddresses: names.ipAddresses,
    hasSanExtension: names.found,
    signatureAlgorithm: name,
    signatureRefusal: refusal,
  };
}

/**
 * parser.go `parseSANExtension` (through `forEachSAN`): dNSName [2] and iPAddress [7] are
 * kept; a dNSName that is not IA5 (ASCII) and an address of another length than 4 or 16
 * bytes fail the whole certificate, as do rfc822Name [1] and URI [6] that are not IA5.
 */
function readSubjectAltNames(
  value: Uint8Array,
  names: { dnsNames: string[]; ipAddresses: Uint8Array[] },
): void {
  for (const { tag, content } of readAll(readOnly(value, DER.SEQUENCE).content)) {
    if (tag === DER.implicit(1) || tag === DER.implicit(2) || tag === DER.implicit(6)) {
      if (content.some((byte) => byte > 0x7f)) throw new DerError("SAN is not IA5");
      if (tag === DER.implicit(2)) names.dnsNames.push(Buffer.from(content).toString("latin1"));
    } else if (tag === DER.implicit(7)) {
      if (content.length !== 4 && content.length !== 16)
        throw new DerError("SAN IP address of another length");
      names.ipAddresses.push(content);
    }
  }
}

/** x509.go `getSignatureAlgorithmFromAI`, with `checkSignature`'s verdict on the result. */
function signatureAlgorithmOf(algorithm: DerElement): [string, GoCertificate["signatureRefusal"]] {
  const [id, params] = readAll(algorithm.content);
  if (id?.tag !== DER.OID) throw new DerError("malformed algorithm identifier");
  const oid = oidText(id.content);
  if (oid === OID_RSA_PSS) {
    const name = params === undefined ? undefined : pssAlgorithm(params);
    return name === undefined ? [oid, "unsupported"] : [name, undefined];
  }
  // Unknown to Go: UnknownSignatureAlgorithm, which checkSignature cannot verify.
  return SIGNATURE_ALGORITHMS[oid] ?? [oid, "unsupported"];
}

/**
 * `getSignatureAlgorithmFromAI` for RSASSA-PSS: the parameters must name SHA-256, -384 or
 * -512, MGF1 with the same hash, a salt as long as the hash, and trailer 1; anything else
 * is an algorithm Go does not know.
 */
function pssAlgorithm(params: DerElement): string | undefined {
  try {
    const fields = new Map(
      readAll(readOnly(params.encoding, DER.SEQUENCE).content).map((field) => [
        field.tag,
        readElement(field.content).element,
      ]),
    );
    const hash = fields.get(DER.explicit(0));
    const mgf = fields.get(DER.explicit(1));
    const salt = fields.get(DER.explicit(2));
    const trailer = fields.get(DER.explicit(3));
    if (hash === undefined || mgf === undefined || salt === undefined) return undefined;
    const hashId = readAll(hash.content)[0];
    const [mgfId, mgfHash] = readAll(mgf.content);
    const mgfHashId = mgfHash === undefined ? undefined : readAll(mgfHash.content)[0];
    if (hashId?.tag !== DER.OID || mgfId?.tag !== DER.OID || mgfHashId?.tag !== DER.OID)
      return undefined;
    const details = PSS_HASHES[oidText(hashId.content)];
    if (details === undefined || oidText(mgfId.content) !== OID_MGF1) return undefined;
    if (!sameBytes(hashId.content, mgfHashId.content)) return undefined;
    if (integer(salt) !== details[1]) return undefined;
    if (trailer !== undefined && integer(trailer) !== 1) return undefined;
    return details[0];
  } catch (error) {
    if (error instanceof DerError) return undefined;
    throw error;
  }
}

function integer(element: DerElement): number | undefined {
  if (element.tag !== DER.INTEGER || element.content.length > 4) return undefined;
  return element.content.reduce((value, byte) => value * 256 + byte, 0);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * verify.go `(*Certificate).VerifyHostname`: whether `certificate` is valid for `host`. An
 * IP address (optionally in brackets) is matched against the IP SANs only; any other name
 * against the DNS SANs only, case-insensitively, never the Common Name. A wildcard counts
 * only as a whole left-most label, and only when both names are valid host names;
 * otherwise only an exact match counts.
 */
export function verifyHostname(certificate: GoCertificate, host: string): boolean {
  // VerifyHostname: "IP addresses may be written in [ ]".
  const candidateIp =
    host.length >= 3 && host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  // net.ParseIP takes no zone ("%eth0"), which isIP would.
  if (isIP(candidateIp) !== 0 && !candidateIp.includes("%")) {
    const ip = sixteenBytes(addressBytes(candidateIp) ?? []);
    // "We only match IP addresses against IP SANs": net.IP.Equal, v4 and v4-in-v6 alike.
    return certificate.ipAddresses.some((candidate) => sameBytes(sixteenBytes([...candidate]), ip));
  }
  const candidateName = toLowerCaseAscii(host);
  const validCandidateName = validHostname(candidateName, false);
  return certificate.dnsNames.some((match) =>
    validCandidateName && validHostname(match, true)
      ? matchHostnames(match, candidateName)
      : matchExactly(match, candidateName),
  );
}

/** An address as Go's 16-byte `net.IP`: IPv4 as v4-in-v6. */
function sixteenBytes(bytes: readonly number[]): Uint8Array {
  return Uint8Array.from(
    bytes.length === 4 ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...bytes] : bytes,
  );
}

/**
 * verify.go `validHostname`: labels of ASCII letters, digits, `-` (not first) and `_`, none
 * empty; a pattern may have `*` as its whole first label, but not be `*` alone; an input
 * may end in one dot.
 */
function validHostname(host: string, isPattern: boolean): boolean {
  const name = isPattern ? host : host.replace(/\.$/, "");
  // A bare wildcard is no valid DNS name (RFC 6125): Go 1.23 refuses it as a pattern too.
  if (name.length === 0 || name === "*") return false;
  return name.split(".").every((part, index) => {
    if (part === "") return false;
    if (isPattern && index === 0 && part === "*") return true;
    // Each character a letter, a digit or `_`, or a `-` but not the first.
    return /^[A-Za-z0-9_][A-Za-z0-9_-]*$/.test(part);
  });
}

/** verify.go `matchExactly`: equal but for ASCII case; empty names and "." match nothing. */
function matchExactly(hostA: string, hostB: string): boolean {
  if (hostA === "" || hostA === "." || hostB === "" || hostB === ".") return false;
  return toLowerCaseAscii(hostA) === toLowerCaseAscii(hostB);
}

/**
 * verify.go `matchHostnames`: the same number of labels, each equal but for ASCII case,
 * except a first pattern label `*`, which matches any one label. The host may end in a dot.
 */
function matchHostnames(pattern: string, host: string): boolean {
  const patternParts = toLowerCaseAscii(pattern).split(".");
  const hostParts = toLowerCaseAscii(host.replace(/\.$/, "")).split(".");
  if (pattern === "" || hostParts.join(".") === "") return false;
  if (patternParts.length !== hostParts.length) return false;
  return patternParts.every(
    (part, index) => (index === 0 && part === "*") || part === hostParts[index],
  );
}

/** verify.go `toLowerCaseASCII`: A-Z only; every other character, Unicode too, as it is. */
function toLowerCaseAscii(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * Go's verdict on the certificate `der` that a server showed for `host`: why Go refuses it,
 * or `undefined` when Go accepts what is checked here. `trustedRoot`: the certificate is
 * itself one of the trusted roots, whose own signature Go never checks (verify.go `Verify`:
 * a chain of the root alone).
 */
export function serverCertificateRefusal(
  host: string,
  der: Uint8Array,
  trustedRoot: boolean,
): CertificateRefusal | undefined {
  let certificate;
  try {
    certificate = parseCertificate(der);
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    return {
      code: "ERR_X509_MALFORMED",
      reason: `the certificate cannot be read as Go reads it (${error.message})`,
    };
  }
  if (!verifyHostname(certificate, host)) {
    // HostnameError.Error: the legacy Common Name, no name at all, or other names.
    const code = "ERR_TLS_CERT_ALTNAME_INVALID";
    if (!certificate.hasSanExtension)
      return {
        code,
        reason:
          "the certificate names its host only in the Common Name, which Go ignores: it needs a subject alternative name",
      };
    if (certificate.dnsNames.length === 0 && isIP(host) === 0)
      return { code, reason: "the certificate is valid for no host name" };
    return { code, reason: "the certificate is not valid for this name" };
  }
  // verify.go `CheckSignatureFrom` → x509.go `checkSignature`.
  if (trustedRoot || certificate.signatureRefusal === undefined) return undefined;
  return certificate.signatureRefusal === "insecure"
    ? {
        code: "ERR_X509_INSECURE_ALGORITHM",
        reason: `the certificate is signed with ${certificate.signatureAlgorithm}, an insecure algorithm Go refuses`,
      }
    : {
        code: "ERR_X509_UNSUPPORTED_ALGORITHM",
        reason: `the certificate is signed with ${certificate.signatureAlgorithm}, which Go cannot verify`,
      };
}
