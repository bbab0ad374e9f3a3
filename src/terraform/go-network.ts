import { isIP } from "node:net";
import { domainToASCII } from "node:url";

/**
 * The network as Terraform and OpenTofu see it: Go's `net/http` picks a proxy from the
 * environment (golang.org/x/net/http/httpproxy) and `crypto/x509` its trusted roots from
 * files (root_unix.go, root_linux.go). Pure: the environment in, decisions out.
 */

type Env = Readonly<Record<string, string | undefined>>;

/** The first of `names` set to a non-empty value, as Go's `getEnvAny`. */
function firstSet(env: Env, ...names: string[]): string {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
  }
  return "";
}

/**
 * The proxy Go would use for an `https:` request to `url`, or `undefined` for a direct
 * connection. Only `HTTPS_PROXY`/`https_proxy` count (never `HTTP_PROXY` for HTTPS);
 * `localhost` and loopback addresses are never proxied; `NO_PROXY`/`no_proxy` lists `*`,
 * IPs, CIDRs and domains (`example.com` also covers its subdomains, `.example.com` and
 * `*.example.com` only them), each with an optional port. A value without a scheme is read
 * as `http://…`. Throws an `Error` naming the variable when the value is no URL.
 */
export function proxyFor(url: URL, env: Env): URL | undefined {
  const value = firstSet(env, "HTTPS_PROXY", "https_proxy");
  if (value === "") return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port === "" ? "443" : url.port;
  if (host === "localhost" || isLoopback(host)) return undefined;
  if (bypassed(host, port, firstSet(env, "NO_PROXY", "no_proxy"))) return undefined;
  return parseProxy(value);
}

function parseProxy(value: string): URL {
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  if (parsed !== undefined && parsed.host !== "") return parsed;
  if (URL.canParse(`http://${value}`)) return new URL(`http://${value}`);
  throw new Error(`HTTPS_PROXY is not a URL: ${JSON.stringify(value)}`);
}

/** 127.0.0.0/8, ::1 and ::ffff:127.x.y.z, as Go's `IP.IsLoopback`. */
function isLoopback(host: string): boolean {
  const bytes = addressBytes(host);
  if (bytes === undefined) return false;
  return bytes.length === 4
    ? bytes[0] === 127
    : bytes.every((byte, index) => byte === (index === 15 ? 1 : 0));
}

/** Whether an entry of `noProxy` names `host:port` (host lowercase ASCII). */
function bypassed(host: string, port: string, noProxy: string): boolean {
  for (const raw of noProxy.split(",")) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return true;
    if (entry.includes("/")) {
      if (isIP(host) !== 0 && inCidr(host, entry)) return true;
      continue;
    }
    // host:port, [v6]:port, or a bare host (a bare IPv6 address has colons but no port).
    const withPort = /^\[(.*)\]:(\d*)$/.exec(entry) ?? /^([^:]*):(\d*)$/.exec(entry);
    const name = (withPort?.[1] ?? entry).replace(/^\[|\]$/g, "");
    const entryPort = withPort?.[2] ?? "";
    if (name === "" || (entryPort !== "" && entryPort !== port)) continue;
    if (isIP(name) !== 0) {
      if (isIP(host) !== 0 && sameAddress(name, host)) return true;
      continue;
    }
    const suffix = domainToASCII(name.replace(/^\*?\./, "")) || name.replace(/^\*?\./, "");
    const subdomainsOnly = name.startsWith(".") || name.startsWith("*.");
    if (host.endsWith(`.${suffix}`) || (!subdomainsOnly && host === suffix)) return true;
  }
  return false;
}

function sameAddress(a: string, b: string): boolean {
  const bytesOf = (ip: string) => addressBytes(ip)?.join(",");
  return bytesOf(a) !== undefined && bytesOf(a) === bytesOf(b);
}

function inCidr(host: string, cidr: string): boolean {
  const [network = "", bitsText = ""] = cidr.split("/");
  const want = addressBytes(network);
  const have = addressBytes(host);
  const bits = Number(bitsText);
  if (want === undefined || have === undefined || want.length !== have.length) return false;
  if (!/^\d+$/.test(bitsText) || bits > want.length * 8) return false;
  for (let bit = 0; bit < bits; bit++) {
    const mask = 0x80 >> (bit % 8);
    if (((want[bit >> 3] ?? 0) & mask) !== ((have[bit >> 3] ?? 0) & mask)) return false;
  }
  return true;
}

/** The 4 or 16 bytes of an IP address (an IPv4-mapped IPv6 address counts as IPv4). */
export function addressBytes(ip: string): number[] | undefined {
  if (isIP(ip) === 4) return ip.split(".").map(Number);
  if (isIP(ip) !== 6) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1] !== undefined) return addressBytes(mapped[1]);
  const [head = "", tail = ""] = ip.split("::");
  const groups = (text: string) => (text === "" ? [] : text.split(":"));
  const left = groups(head);
  const right = ip.includes("::") ? groups(tail) : [];
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return all.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

/** Files and directories Go reads its trusted root certificates from on Linux. */
const LINUX_CERT_FILES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/ca-bundle.pem",
  "/etc/pki/tls/cacert.pem",
  "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
  "/etc/ssl/cert.pem",
];
const LINUX_CERT_DIRS = ["/etc/ssl/certs", "/etc/pki/tls/certs"];

/** Where Go on this platform reads its trusted roots, or `undefined` for the system's own. */
export interface CertificateSources {
  /** The first of these that can be read counts, and only it. */
  readonly files: readonly string[];
  /** Every file in each of these counts. */
  readonly dirs: readonly string[];
}

/**
 * Where Terraform's Go reads trusted root certificates: on Linux and other Unix systems,
 * `SSL_CERT_FILE` in place of the default bundle files and `SSL_CERT_DIR` (a
 * colon-separated list) in place of the default directories. macOS and Windows use the
 * operating system's verifier and ignore both variables: `undefined`.
 */
export function certificateSources(
  env: Env,
  platform: NodeJS.Platform,
): CertificateSources | undefined {
  if (platform === "darwin" || platform === "win32") return undefined;
  const file = firstSet(env, "SSL_CERT_FILE");
  const dirs = firstSet(env, "SSL_CERT_DIR");
  return {
    files: file === "" ? LINUX_CERT_FILES : [file],
    // Go: an empty SSL_CERT_DIR is the same as unset.
    dirs: dirs === "" ? LINUX_CERT_DIRS : dirs.split(":").filter((dir) => dir !== ""),
  };
}
