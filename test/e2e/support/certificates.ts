import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { PATIENCE_MS } from "../../support/timing.ts";

const run = promisify(execFile);

/** Paths of the PEM files written by {@link createTestCertificates}. */
export interface TestCertificates {
  /** The CA certificate: what a client must trust (e.g. via `SSL_CERT_FILE`). */
  readonly caFile: string;
  /** The server certificate, signed by the CA, valid for IP 127.0.0.1 and DNS localhost. */
  readonly certFile: string;
  /** The server certificate's private key, unencrypted. */
  readonly keyFile: string;
}

/** Where the `openssl` CLI is looked for; it is on PATH on every platform the tests run on. */
const OPENSSL = "openssl";
/** Arguments for a new P-256 key, left unencrypted: it lives for one test run in a private dir. */
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
const serverExtensions = (dnsNames: readonly string[]) =>
  [
    "basicConstraints=critical,CA:FALSE",
    "keyUsage=critical,digitalSignature",
    "extendedKeyUsage=serverAuth",
    `subjectAltName=${["IP:127.0.0.1", ...["localhost", ...dnsNames].map((name) => `DNS:${name}`)].join(",")}`,
    "",
  ].join("\n");

/** A CA's certificate and unencrypted key, as {@link createTestCa} writes them. */
export interface TestCa {
  /** The self-signed CA certificate (PEM). */
  readonly caFile: string;
  /** Its private key (PEM). */
  readonly keyFile: string;
}

/**
 * The CA files in `dir`, as {@link createTestCa} names them: `ca.pem` and `ca.key`. How CI's
 * macOS and Windows jobs give the e2e fixture one CA for the run (`TFCK_TEST_FIXTURE_CA`).
 */
export function testCaIn(dir: string): TestCa {
  return { caFile: join(dir, "ca.pem"), keyFile: join(dir, "ca.key") };
}

/**
 * Creates, in `dir` (which must exist and be private to the caller), a throwaway CA valid for
 * two days. Go (Terraform) checks that an issuer is a CA allowed to sign certificates: the
 * extensions make it one.
 */
export async function createTestCa(dir: string): Promise<TestCa> {
  const ca = testCaIn(dir);
  const caSubject = "/CN=terraform-credentials-keychain e2e CA";
  await openssl`req -x509 ${EC_KEY} -keyout ${ca.keyFile} -out ${ca.caFile} -days 2 -subj ${caSubject}
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign`;
  return ca;
}

/**
 * Creates, in `dir` (which must exist and be private to the caller), a server certificate for
 * `127.0.0.1` and `localhost`, valid for two days, signed by `ca`, or by a throwaway CA made
 * in `dir` when `ca` is not given. Uses the `openssl` CLI because Node's crypto can make keys
 * but not X.509 certificates. Never touches the network. Rejects if openssl is missing or fails.
 */
export async function createTestCertificates(
  dir: string,
  /** More names the server certificate is valid for (ASCII: punycode for IDNs). */
  dnsNames: readonly string[] = [],
  ca?: TestCa,
): Promise<TestCertificates> {
  const { caFile, keyFile: caKey } = ca ?? (await createTestCa(dir));
  const certFile = join(dir, "server.pem");
  const keyFile = join(dir, "server.key");
  const csrFile = join(dir, "server.csr");
  const extFile = join(dir, "server.ext");

  // Go ignores the subject CN of a leaf entirely: the extensions are what make the chain verify.
  await openssl`req -new ${EC_KEY} -keyout ${keyFile} -out ${csrFile} -subj /CN=127.0.0.1`;
  // An extension file rather than `-copy_extensions`, which older openssl releases lack.
  await writeFile(extFile, serverExtensions(dnsNames));
  // A random positive serial: Go rejects negative ones, and no serial file is left behind.
  const serial = `0x7${randomBytes(15).toString("hex")}`;
  await openssl`x509 -req -in ${csrFile} -CA ${caFile} -CAkey ${caKey} -days 2
    -set_serial ${serial} -extfile ${extFile} -out ${certFile}`;
  return { caFile, certFile, keyFile };
}

/** What {@link createCertificate} makes: a server certificate of one kind, for a TLS table. */
export interface CertificateSpec {
  /** The subject's Common Name. */
  readonly commonName: string;
  /** The subjectAltName entries (`DNS:…`, `IP:…`); none: no SAN extension at all. */
  readonly altNames: readonly string[];
  /** The digest the CA signs with: `sha256`, or `sha1` for a certificate Go refuses. */
  readonly digest: "sha256" | "sha1";
}

/**
 * Creates, in `dir`, the certificate `spec` describes for a new P-256 key, signed by `ca`
 * (whose key type, EC or RSA, makes the signature ECDSA or RSA); `name` names the files.
 */
export async function createCertificate(
  dir: string,
  name: string,
  spec: CertificateSpec,
  ca: TestCa,
): Promise<{ readonly certFile: string; readonly keyFile: string }> {
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}.key`);
  const csrFile = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  await openssl`req -new ${EC_KEY} -keyout ${keyFile} -out ${csrFile} -subj ${`/CN=${spec.commonName}`}`;
  const extensions = [
    "basicConstraints=critical,CA:FALSE",
    "keyUsage=critical,digitalSignature,keyEncipherment",
    "extendedKeyUsage=serverAuth",
    ...(spec.altNames.length === 0 ? [] : [`subjectAltName=${spec.altNames.join(",")}`]),
    "",
  ];
  await writeFile(extFile, extensions.join("\n"));
  const serial = `0x7${randomBytes(15).toString("hex")}`;
  await openssl`x509 -req -in ${csrFile} -CA ${ca.caFile} -CAkey ${ca.keyFile} -days 2
    -set_serial ${serial} -extfile ${extFile} ${`-${spec.digest}`} -out ${certFile}`;
  return { certFile, keyFile };
}

/** A CA like {@link createTestCa}'s with an RSA key, its files named `NAME.pem`, `NAME.key`. */
export async function createRsaTestCa(dir: string, name: string): Promise<TestCa> {
  const ca = { caFile: join(dir, `${name}.pem`), keyFile: join(dir, `${name}.key`) };
  await openssl`req -x509 -newkey rsa:2048 -nodes -keyout ${ca.keyFile} -out ${ca.caFile} -days 2
    -subj ${`/CN=terraform-credentials-keychain ${name}`} -addext basicConstraints=critical,CA:TRUE
    -addext keyUsage=critical,keyCertSign,cRLSign`;
  return ca;
}

/**
 * Runs openssl with the words of the template as arguments; each interpolated value is one
 * argument as is (paths may hold spaces) and an interpolated array is spread into several.
 * Each interpolation must stand alone as a word: `-subj /CN=${x}` would split wrongly.
 */
async function openssl(
  words: TemplateStringsArray,
  ...values: readonly (string | readonly string[])[]
): Promise<void> {
  const args = words.flatMap((word, index) => {
    const value = values[index] ?? [];
    return [...word.split(/\s+/).filter((part) => part !== ""), ...[value].flat()];
  });
  try {
    await run(OPENSSL, args, { timeout: PATIENCE_MS });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? "";
    throw new Error(`openssl ${args[0] ?? ""} failed: ${stderr.trim() || String(error)}`, {
      cause: error,
    });
  }
}
