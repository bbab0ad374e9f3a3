import process from "node:process";
import tls from "node:tls";
import { oneLine } from "./quote.ts";

/** One GET, with every network decision already made by the caller. */
export interface HttpsRequest {
  readonly url: URL;
  /** The `Authorization` header, when the request carries one. */
  readonly authorization?: string;
  /** The proxy to tunnel through; absent: a direct connection, whatever the environment says. */
  readonly proxy?: URL;
  /**
   * The PEM certificates to trust, and only them (Go's roots on Linux). Absent: the operating
   * system's trusted roots plus Bun's bundled Mozilla roots, for macOS and Windows, where Go
   * asks the system to verify. Never anything the environment adds. Never empty: Bun would
   * take an empty list for its default store, environment included.
   */
  readonly trusted?: readonly string[];
  /**
   * Judges the server's certificate (DER) once the TLS library has verified its chain
   * against the trusted roots, in place of the library's own host-name check (Node's
   * rules): why it is refused, or `undefined`. Nothing is sent before it has said yes.
   * `trustedRoot`: the certificate is itself one of the trusted roots.
   */
  readonly checkCertificate: (
    host: string,
    der: Uint8Array,
    trustedRoot: boolean,
  ) => CertificateRefusal | undefined;
  readonly signal: AbortSignal;
}

/** Why a server's certificate is refused: an error code, and the reason in words. */
export interface CertificateRefusal {
  readonly code: string;
  readonly reason: string;
}

/** What came back: redirects are returned, never followed. */
export interface HttpsAnswer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly location: string | undefined;
  /** At most the first MiB of the body (svchost reads no more of a discovery document). */
  readonly body: string;
}

/**
 * Sends one HTTPS GET. Rejects with an `Error` whose message names what failed, in one line
 * (`DNS: …`, `TLS: …`, `connection refused`, `the proxy refused …`), or with the signal's
 * reason once it is aborted.
 */
export type HttpsGet = (request: HttpsRequest) => Promise<HttpsAnswer>;

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The variables of Bun's (1.4.5) that bear on where a request goes, whom it trusts and what
 * it prints, and how each is kept from a request Terraform's Go would make otherwise:
 *
 * - NODE_TLS_REJECT_UNAUTHORIZED=0 turns verification off, even with `tls.ca` set: every
 *   request says `rejectUnauthorized: true`.
 * - NODE_EXTRA_CA_CERTS, NODE_USE_SYSTEM_CA, SSL_CERT_FILE and SSL_CERT_DIR (read by Bun on
 *   every platform, Windows too) and BUN_OPTIONS' --use-system-ca, --use-openssl-ca and
 *   --use-bundled-ca add to or replace the default roots, and are read in native code, out of
 *   process.env's reach: every request names its roots in `tls.ca`, which replaces the
 *   default store. (Go reads SSL_CERT_FILE and SSL_CERT_DIR on Linux only, through
 *   terraform/go-network.ts.)
 * - BUN_CONFIG_VERBOSE_FETCH=curl writes each request to stderr as a curl command line, with
 *   the Authorization header in clear: every request says `verbose: false`.
 * - HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY (either case) are read by `fetch()` from
 *   process.env, synchronously, with Bun's own rules (it proxies loopback addresses, and
 *   NO_PROXY overrides even an explicit `proxy`): they are hidden for the call, and the
 *   caller passes the proxy Go would use.
 *
 * Left alone, as they change neither the destination, nor the trust, nor the output:
 * BUN_CONFIG_MAX_HTTP_REQUESTS, BUN_CONFIG_HTTP_IDLE_TIMEOUT,
 * BUN_CONFIG_DNS_TIME_TO_LIVE_SECONDS and BUN_FEATURE_FLAG_DISABLE_DNS_CACHE,
 * _DISABLE_FETCH_TLS_SESSION_CACHE and _DISABLE_ADDRCONFIG. Bun reads no SSLKEYLOGFILE, and
 * BUN_OPTIONS' --tls-keylog concerns node:tls sockets, not `fetch`.
 */
const PROXY_VARIABLES = [
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "ALL_PROXY",
  "all_proxy",
  "NO_PROXY",
  "no_proxy",
];

interface BunRequestInit extends RequestInit {
  proxy?: string;
  verbose?: boolean;
  tls?: {
    ca: string[];
    rejectUnauthorized: true;
    checkServerIdentity: (host: string, certificate: { raw: Uint8Array }) => Error | undefined;
  };
}

/** Bun's `tls.getCACertificates`, which Node 20's types do not know. */
type CaCertificates = (kind: "system" | "bundled") => string[];

/**
 * The roots for macOS and Windows: the system's (the keychain, or the certificate store, which
 * on Windows none of the variables above changes) and Bun's bundled Mozilla list, which
 * stands in for the roots Windows fetches on demand and Go's verifier would then accept.
 */
function platformRoots(): string[] {
  const read = (tls as unknown as { getCACertificates: CaCertificates }).getCACertificates;
  return [...new Set([...read("system"), ...tls.rootCertificates])];
}

/**
 * The runtime's `fetch` with an explicit proxy and trusted roots. Only Bun's `fetch` takes
 * both: from source under Node, every request fails and says so.
 */
export const httpsGet: HttpsGet = async (request) => {
  if ((globalThis as { Bun?: unknown }).Bun === undefined)
    throw new Error(
      "only the built executable checks tokens: Node's fetch cannot use Terraform's proxy and CA settings",
    );
  const ca = [...(request.trusted ?? platformRoots())];
  if (ca.length === 0) throw new Error("httpsGet: an empty list of trusted certificates");
  const init: BunRequestInit = {
    redirect: "manual",
    signal: request.signal,
    headers: request.authorization === undefined ? {} : { authorization: request.authorization },
    ...(request.proxy === undefined ? {} : { proxy: request.proxy.href }),
    tls: {
      ca,
      rejectUnauthorized: true,
      // Bun (1.4.5) calls it with the leaf certificate alone, on every platform, after the
      // chain verified and before the request is written; an Error ends the request there.
      // The leaf alone: an intermediate's signature stays BoringSSL's to judge (SHA-1 passes).
      checkServerIdentity(host, certificate) {
        const der = certificate.raw;
        const refusal = request.checkCertificate(host, der, isOneOf(der, ca));
        if (refusal === undefined) return undefined;
        return Object.assign(new Error(refusal.reason), { code: refusal.code, refusal });
      },
    },
    verbose: false,
  };
  const saved = PROXY_VARIABLES.map((name) => [name, process.env[name]] as const);
  let pending: Promise<Response>;
  try {
    for (const [name] of saved) Reflect.deleteProperty(process.env, name);
    pending = fetch(request.url, init);
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
  let response: Response;
  try {
    response = await pending;
  } catch (error) {
    if (request.signal.aborted) throw request.signal.reason;
    throw new Error(failure(error, request), { cause: error });
  }
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? undefined,
    location: response.headers.get("location") ?? undefined,
    body: await limitedText(response),
  };
};

/** Whether the DER certificate `der` is one of the PEM certificates `pems`. */
function isOneOf(der: Uint8Array, pems: readonly string[]): boolean {
  const base64 = Buffer.from(der).toString("base64");
  return pems.some(
    (pem) => pem.length >= base64.length && pem.replace(/-----[^-]+-----|\s/g, "") === base64,
  );
}

async function limitedText(response: Response): Promise<string> {
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = response.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= MAX_BODY_BYTES) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString("utf8");
}

/** Bun's error codes for a certificate that does not verify, in words. */
const TLS_WORDS: Readonly<Record<string, string>> = {
  ERR_TLS_CERT_ALTNAME_INVALID: "the certificate is not valid for this name",
  CERT_HAS_EXPIRED: "the certificate has expired",
  CERT_NOT_YET_VALID: "the certificate is not valid yet",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the certificate is not signed by a trusted CA",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the certificate is not signed by a trusted CA",
  UNABLE_TO_GET_ISSUER_CERT: "the certificate is not signed by a trusted CA",
  SELF_SIGNED_CERT_IN_CHAIN: "the certificate is not signed by a trusted CA",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the certificate is self-signed",
};

function failure(error: unknown, request: HttpsRequest): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = oneLine(error instanceof Error ? error.message : String(error), 200);
  const host = request.proxy?.hostname ?? request.url.hostname;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME")
    return `DNS: ${host} not found (${code})`;
  if (code === "ECONNREFUSED") return `connection to ${host} refused`;
  if (code === "ECONNRESET") return `connection to ${host} reset`;
  if (code === "ERR_PROXY_TUNNEL") return `the proxy refused the tunnel: ${message}`;
  // Ours, from checkCertificate: the reason is already in words.
  const refusal = (error as { refusal?: CertificateRefusal } | undefined)?.refusal;
  if (refusal !== undefined) return `TLS: ${refusal.reason} (${refusal.code})`;
  if (typeof code === "string" && code in TLS_WORDS)
    return `TLS: ${TLS_WORDS[code] ?? code} (${code})`;
  if (typeof code === "string" && /CERT|TLS|SSL|SIGNATURE|ISSUER/.test(code))
    return `TLS: ${message} (${code})`;
  return typeof code === "string" ? `${message} (${code})` : message;
}
