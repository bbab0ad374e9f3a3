import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestCertificates, testCaIn } from "./certificates.ts";
import type { TestCa } from "./certificates.ts";
import { createZip, packageHashV1, zipHash } from "./zip.ts";
import type { ZipEntry } from "./zip.ts";

/** Options of {@link startFixtureServer}. */
export interface FixtureServerOptions {
  /** The token accepted as `Authorization: Bearer <token>`; change it later with `setToken`. */
  readonly token: string;
  /**
   * Hostname part of the fake provider's source address, as written in `required_providers`.
   * With a network mirror it is only an identifier, never contacted, and the mirror serves the
   * provider under any hostname. Default `providers.example.com` (a reserved domain). It may not
   * carry a port: Terraform 1.11 builds the mirror URL from it as a relative URL, which Go then
   * refuses to parse ("first path segment in URL cannot contain colon").
   */
  readonly providerHostname?: string;
  /**
   * Hostnames (ASCII, no port) the server also answers for, through a proxy, each accepting
   * only its own token instead of `token`; the certificate is valid for them too.
   */
  readonly tokensByHost?: Readonly<Record<string, string>>;
  /**
   * The discovery document a named host (one of `tokensByHost`) serves instead of the default
   * one; relative URLs resolve against it.
   */
  readonly discoveryByHost?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /**
   * Answer guarded routes whatever the Authorization header holds (still recording its
   * hash): for tests that ask which token Terraform sends, not whether it is accepted.
   */
  readonly acceptAnyToken?: boolean;
  /** Directory under which the server's private temp dir is made; default `os.tmpdir()`. */
  readonly tmpRoot?: string;
  /**
   * The CA that signs the server's certificate; default the one in the directory
   * `TFCK_TEST_FIXTURE_CA` names, else a throwaway CA of this server's own. Go trusts
   * `SSL_CERT_FILE` only on Linux and the BSDs: CI's macOS and Windows jobs make one CA for
   * the run (scripts/fixture-ca.ts) and trust it in the system's store, which is never done
   * on a developer's machine.
   */
  readonly ca?: TestCa;
}

/** The CA of {@link FixtureServerOptions.ca} when none is given. */
function defaultCa(): TestCa | undefined {
  const dir = process.env["TFCK_TEST_FIXTURE_CA"];
  return dir === undefined || dir === "" ? undefined : testCaIn(dir);
}

/** What the server can tell about the credentials a request carried. Never the token itself. */
export type AuthSeen =
  /** No Authorization header. */
  | "none"
  /** `Bearer <the currently accepted token>`. */
  | "valid"
  /** Some other Authorization header. */
  | "invalid";

/** Which part of the fixture a request was for. */
export type RouteKind =
  | "discovery"
  | "module-versions"
  | "module-download"
  | "tfe-ping"
  | "tfe-account"
  | "mirror-index"
  | "mirror-version"
  | "archive"
  | "unknown";

/** One request as the server saw it. */
export interface RecordedRequest {
  readonly method: string;
  /** The URL path without the query string. */
  readonly path: string;
  readonly kind: RouteKind;
  readonly auth: AuthSeen;
  /** The HTTP status the server answered with. */
  readonly status: number;
  /** The Host header without its port, lowercased. */
  readonly host: string;
  /**
   * SHA-256 (hex) of the Authorization header, when there was one: a test can tell which
   * token reached which host without the server keeping any token.
   */
  readonly authorizationSha256?: string;
}

/** The tiny module served by the fixture's module registry. */
export interface FixtureModule {
  /** Registry source address for a `module` block: `127.0.0.1:PORT/acme/hello/null`. */
  readonly source: string;
  readonly version: string;
  /** Name and value of the one output the module declares. */
  readonly outputName: string;
  readonly outputValue: string;
}

/** The fake provider served by the fixture's provider network mirror. */
export interface FixtureProvider {
  /** Source address for `required_providers`: `<providerHostname>/acme/dummy`. */
  readonly source: string;
  /** Local name / type: `dummy`. */
  readonly type: string;
  readonly version: string;
  /** The same package is offered for every platform, so both hashes hold for all of them. */
  readonly hashes: { readonly h1: string; readonly zh: string };
  /** Platforms (`os_arch`) the mirror lists, the host's own included. */
  readonly platforms: readonly string[];
}

/** A running fixture server. Close it with `close()` or `await using`. */
export interface FixtureServer extends AsyncDisposable {
  /** `127.0.0.1:PORT`: the hostname Terraform uses for discovery, modules and credentials. */
  readonly host: string;
  readonly port: number;
  /** `https://127.0.0.1:PORT`, without a trailing slash. */
  readonly baseUrl: string;
  /**
   * PEM CA certificate that signed the server's certificate: give it to Terraform as
   * `SSL_CERT_FILE` (Linux), or trust it in the system's store (macOS, Windows).
   */
  readonly caFile: string;
  /** Base URL for `provider_installation { network_mirror { url = ... } }`, with its trailing slash. */
  readonly mirrorUrl: string;
  readonly module: FixtureModule;
  readonly provider: FixtureProvider;
  /** Every request seen since start or the last `clearRequests()`, oldest first. Live view. */
  readonly requests: readonly RecordedRequest[];
  /** Makes the server accept `token` from now on, and only it. */
  setToken(token: string): void;
  clearRequests(): void;
  /** Stops the server, drops open connections and deletes its temp dir (not a given CA). Idempotent. */
  close(): Promise<void>;
}

const MODULES_BASE = "/v1/modules/";
const TFE_BASE = "/api/v2/";
const MIRROR_BASE = "/providers/";
const MODULE = { namespace: "acme", name: "hello", system: "null", version: "1.0.0" } as const;
const PROVIDER = { namespace: "acme", type: "dummy", version: "1.0.0" } as const;
const OUTPUT = { name: "greeting", value: "hello from the fixture registry" } as const;
const DEFAULT_PROVIDER_HOSTNAME = "providers.example.com";
/** Platforms listed besides the host's own, so a fixture config also locks on other machines. */
const COMMON_PLATFORMS = [
  "linux_amd64",
  "linux_arm64",
  "darwin_amd64",
  "darwin_arm64",
  "windows_amd64",
];

/** A JSON:API user document, the shape go-tfe's `Users.ReadCurrent` decodes. */
const ACCOUNT_DETAILS = {
  data: {
    id: "user-fixture",
    type: "users",
    attributes: { username: "tester", email: "tester@example.com" },
  },
};

/**
 * Starts an HTTPS server on 127.0.0.1 at a random port, with a certificate from a test CA (`ca`),
 * that plays every remote part a Terraform credentials helper's token is used for:
 *
 * - `/.well-known/terraform.json`: discovery, offering `modules.v1` and `tfe.v2` but not `login.v1`,
 *   so `terraform login` takes the paste-a-token path. Served without auth, as real hosts do.
 * - `modules.v1`: one module, `acme/hello/null` 1.0.0 (versions + download endpoints).
 * - `tfe.v2`: `ping` (always 204, as go-tfe only reads its headers) and `account/details`.
 * - A provider network mirror at `mirrorUrl` with `acme/dummy` 1.0.0 for several platforms.
 * - `/archives/<random>/...`: the module and provider packages. Terraform sends no credentials
 *   for package downloads (neither for `X-Terraform-Get` targets nor for mirror archive URLs), so
 *   these answer without auth, behind an unguessable path as a stand-in for presigned URLs.
 *
 * Everything else requires `Authorization: Bearer <token>` and answers 401 without it.
 * The returned handle records each request (method, path, route, auth outcome; never tokens).
 */
/** A fresh random token for one test's fixture server. */
export function newToken(): string {
  return `fixture-${randomBytes(18).toString("base64url")}`;
}

export async function startFixtureServer(options: FixtureServerOptions): Promise<FixtureServer> {
  const providerHostname = options.providerHostname ?? DEFAULT_PROVIDER_HOSTNAME;
  if (providerHostname.includes(":")) {
    throw new Error(
      "providerHostname may not include a port: Terraform can't query a mirror for it",
    );
  }
  const dir = await mkdtemp(join(options.tmpRoot ?? tmpdir(), "tf-fixture-"));
  try {
    const certificates = await createTestCertificates(
      dir,
      Object.keys(options.tokensByHost ?? {}),
      options.ca ?? defaultCa(),
    );
    const [cert, key] = await Promise.all([
      readFile(certificates.certFile),
      readFile(certificates.keyFile),
    ]);
    const state: ServerState = {
      token: options.token,
      tokensByHost: new Map(Object.entries(options.tokensByHost ?? {})),
      discoveryByHost: new Map(Object.entries(options.discoveryByHost ?? {})),
      acceptAnyToken: options.acceptAnyToken ?? false,
      requests: [],
      archives: new Map(),
      archivePrefix: `/archives/${randomBytes(16).toString("hex")}/`,
      origin: "",
      platforms: platformsToServe(),
      providerHashes: { h1: "", zh: "" },
    };
    const server = createServer({ cert, key }, (request, response) => {
      handle(state, request, response);
    });
    const port = await listen(server);
    state.origin = `https://127.0.0.1:${port}`;
    const host = `127.0.0.1:${port}`;
    buildPackages(state);
    const caFile = certificates.caFile;
    return makeHandle({ server, dir, state, host, port, caFile, providerHostname });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

interface ServerState {
  token: string;
  readonly tokensByHost: ReadonlyMap<string, string>;
  readonly discoveryByHost: ReadonlyMap<string, Readonly<Record<string, string>>>;
  readonly acceptAnyToken: boolean;
  readonly requests: RecordedRequest[];
  /** Package bodies by full URL path. */
  readonly archives: Map<string, Buffer>;
  readonly archivePrefix: string;
  origin: string;
  readonly platforms: readonly string[];
  /** Set once the packages are built; the one provider zip serves every platform. */
  providerHashes: { readonly h1: string; readonly zh: string };
}

interface HandleParts {
  readonly server: Server;
  readonly dir: string;
  readonly state: ServerState;
  readonly host: string;
  readonly port: number;
  readonly caFile: string;
  readonly providerHostname: string;
}

function makeHandle(parts: HandleParts): FixtureServer {
  const { server, dir, state, host, port } = parts;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= stop(server).finally(() => rm(dir, { recursive: true, force: true }));
    return closing;
  };
  return {
    host,
    port,
    baseUrl: state.origin,
    caFile: parts.caFile,
    mirrorUrl: `${state.origin}${MIRROR_BASE}`,
    module: {
      source: `${host}/${MODULE.namespace}/${MODULE.name}/${MODULE.system}`,
      version: MODULE.version,
      outputName: OUTPUT.name,
      outputValue: OUTPUT.value,
    },
    provider: {
      source: `${parts.providerHostname}/${PROVIDER.namespace}/${PROVIDER.type}`,
      type: PROVIDER.type,
      version: PROVIDER.version,
      hashes: state.providerHashes,
      platforms: state.platforms,
    },
    requests: state.requests,
    setToken: (token) => {
      state.token = token;
    },
    clearRequests: () => {
      state.requests.length = 0;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Builds the module and provider packages and registers them under the archive prefix. */
function buildPackages(state: ServerState): void {
  state.archives.set(moduleArchivePath(state), createZip(moduleFiles()));
  const providerEntries = providerFiles();
  const providerZip = createZip(providerEntries);
  for (const platform of state.platforms) {
    state.archives.set(providerArchivePath(state, platform), providerZip);
  }
  state.providerHashes = { h1: packageHashV1(providerEntries), zh: zipHash(providerZip) };
}

function moduleFiles(): ZipEntry[] {
  const mainTf = [
    "# Served by the e2e fixture registry.",
    `output "${OUTPUT.name}" {`,
    `  value = "${OUTPUT.value}"`,
    "}",
    "",
  ].join("\n");
  return [{ name: "main.tf", content: mainTf }];
}

/**
 * Not a real plugin: `terraform init` only unpacks and hashes provider packages, it does not run
 * them. The script fails loudly should anything ever try to start it.
 */
function providerFiles(): ZipEntry[] {
  const script =
    '#!/bin/sh\necho "terraform-provider-dummy is an e2e fixture, not a provider" >&2\nexit 1\n';
  return [
    {
      name: `terraform-provider-${PROVIDER.type}_v${PROVIDER.version}`,
      content: script,
      mode: 0o755,
    },
  ];
}

function moduleArchivePath(state: ServerState): string {
  return `${state.archivePrefix}${MODULE.namespace}-${MODULE.name}-${MODULE.system}-${MODULE.version}.zip`;
}

function providerArchivePath(state: ServerState, platform: string): string {
  return `${state.archivePrefix}terraform-provider-${PROVIDER.type}_${PROVIDER.version}_${platform}.zip`;
}

/** Host platform in Terraform's `os_arch` naming, plus the common ones, without duplicates. */
function platformsToServe(): string[] {
  const os: Record<string, string> = { win32: "windows" };
  const arch: Record<string, string> = { x64: "amd64", ia32: "386" };
  const own = `${os[process.platform] ?? process.platform}_${arch[process.arch] ?? process.arch}`;
  return [...new Set([own, ...COMMON_PLATFORMS])];
}

/** A routed response: status, headers and an optional JSON body. */
interface Reply {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly json?: unknown;
  readonly body?: Buffer;
}

interface Route {
  readonly kind: RouteKind;
  /** False for the few endpoints real servers also answer without credentials. */
  readonly needsAuth: boolean;
  readonly reply: () => Reply;
}

function handle(state: ServerState, request: IncomingMessage, response: ServerResponse): void {
  const method = request.method ?? "";
  const path = new URL(request.url ?? "/", "https://fixture.invalid").pathname;
  // A request for a named host (through a proxy) must carry that host's own token.
  const named = (request.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
  const auth = authSeen(
    request.headers.authorization,
    state.tokensByHost.get(named) ?? state.token,
  );
  const route = method === "GET" || method === "HEAD" ? routeFor(state, path, named) : undefined;
  let reply: Reply;
  if (route === undefined) reply = { status: method === "GET" || method === "HEAD" ? 404 : 405 };
  else if (route.needsAuth && auth !== "valid" && !state.acceptAnyToken) reply = unauthorized();
  else reply = route.reply();
  state.requests.push({
    method,
    path,
    kind: route?.kind ?? "unknown",
    auth,
    status: reply.status,
    host: named,
    ...(request.headers.authorization === undefined
      ? {}
      : {
          authorizationSha256: createHash("sha256")
            .update(request.headers.authorization)
            .digest("hex"),
        }),
  });
  send(response, reply);
}

function authSeen(header: string | undefined, token: string): AuthSeen {
  if (header === undefined) return "none";
  return header === `Bearer ${token}` ? "valid" : "invalid";
}

/** A route anyone may use, as real servers also answer these without credentials. */
function open(kind: RouteKind, reply: () => Reply): Route {
  return { kind, needsAuth: false, reply };
}

/** A route that answers 401 unless the request carries the accepted token. */
function guarded(kind: RouteKind, reply: () => Reply): Route {
  return { kind, needsAuth: true, reply };
}

function routeFor(state: ServerState, path: string, named: string): Route | undefined {
  if (path === "/.well-known/terraform.json") {
    const json = state.discoveryByHost.get(named) ?? discovery();
    return open("discovery", () => ({ status: 200, json }));
  }
  if (path.startsWith(MODULES_BASE)) return moduleRoute(state, path.slice(MODULES_BASE.length));
  if (path.startsWith(TFE_BASE)) return tfeRoute(path.slice(TFE_BASE.length));
  if (path.startsWith(MIRROR_BASE)) return mirrorRoute(state, path.slice(MIRROR_BASE.length));
  const archive = state.archives.get(path);
  if (archive === undefined) return undefined;
  const headers = { "content-type": "application/zip" };
  return open("archive", () => ({ status: 200, headers, body: archive }));
}

/**
 * The discovery document. `tfe.v2` without `login.v1` makes `terraform login` ask for a pasted
 * token and check it against `account/details`; relative URLs resolve against this document.
 */
function discovery(): Record<string, string> {
  return { "modules.v1": MODULES_BASE, "tfe.v2": TFE_BASE };
}

function moduleRoute(state: ServerState, rest: string): Route | undefined {
  const prefix = `${MODULE.namespace}/${MODULE.name}/${MODULE.system}/`;
  if (rest === `${prefix}versions`) {
    const json = { modules: [{ versions: [{ version: MODULE.version }] }] };
    return guarded("module-versions", () => ({ status: 200, json }));
  }
  if (rest === `${prefix}${MODULE.version}/download`) {
    // Absolute, so it doesn't matter how a given Terraform version resolves relative ones.
    const headers = { "x-terraform-get": `${state.origin}${moduleArchivePath(state)}` };
    return guarded("module-download", () => ({ status: 204, headers }));
  }
  return undefined;
}

function tfeRoute(rest: string): Route | undefined {
  // go-tfe pings when it creates a client, reads only the response headers, ignores the status.
  if (rest === "ping") return open("tfe-ping", () => ({ status: 204 }));
  if (rest !== "account/details") return undefined;
  const headers = { "content-type": "application/vnd.api+json" };
  return guarded("tfe-account", () => ({ status: 200, headers, json: ACCOUNT_DETAILS }));
}

/** Mirror paths are `<hostname>/<namespace>/<type>/<file>`; any provider hostname is accepted. */
function mirrorRoute(state: ServerState, rest: string): Route | undefined {
  const [, namespace, type, file, ...more] = rest.split("/");
  if (namespace !== PROVIDER.namespace || type !== PROVIDER.type || more.length > 0) {
    return undefined;
  }
  if (file === "index.json") {
    const json = { versions: { [PROVIDER.version]: {} } };
    return guarded("mirror-index", () => ({ status: 200, json }));
  }
  if (file === `${PROVIDER.version}.json`) {
    return guarded("mirror-version", () => ({ status: 200, json: mirrorArchives(state) }));
  }
  return undefined;
}

/**
 * The version document. Terraform 1.11 verifies the package against either hash kind (it
 * prefers `h1:`), installs unverified when `hashes` is absent, and fails on a mismatch or when
 * no listed hash has a scheme it knows.
 */
function mirrorArchives(state: ServerState): unknown {
  const { h1, zh } = state.providerHashes;
  const archives: Record<string, { url: string; hashes: string[] }> = {};
  for (const platform of state.platforms) {
    archives[platform] = {
      url: `${state.origin}${providerArchivePath(state, platform)}`,
      hashes: [h1, zh],
    };
  }
  return { archives };
}

function unauthorized(): Reply {
  // The JSON:API error shape TFE uses; go-tfe maps any 401 to ErrUnauthorized regardless.
  return {
    status: 401,
    headers: {
      "content-type": "application/vnd.api+json",
      "www-authenticate": 'Bearer realm="fixture"',
    },
    json: { errors: [{ status: "401", title: "unauthorized" }] },
  };
}

function send(response: ServerResponse, reply: Reply): void {
  const body = reply.json === undefined ? reply.body : Buffer.from(JSON.stringify(reply.json));
  const headers: Record<string, string> = { ...reply.headers };
  if (reply.json !== undefined) headers["content-type"] ??= "application/json";
  if (body !== undefined) headers["content-length"] = String(body.length);
  response.writeHead(reply.status, headers);
  // Node drops the body of HEAD responses by itself.
  response.end(body);
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // Terraform keeps connections alive; without this, close() would wait for them to time out.
    server.closeAllConnections();
    server.close(() => {
      resolve();
    });
  });
}

/** Which fixture parts a configuration from {@link fixtureConfiguration} uses. */
export interface FixtureConfigurationParts {
  /** Call the registry module and re-export its output as `greeting`. Default true. */
  readonly module?: boolean;
  /** Require the mirrored provider (without any resource: it is never run). Default true. */
  readonly provider?: boolean;
}

/**
 * The text of a root module (`main.tf`) that makes `terraform init` use the fixture: the
 * registry module and/or the mirrored provider, pinned to their only versions.
 */
export function fixtureConfiguration(
  server: Pick<FixtureServer, "module" | "provider">,
  parts: FixtureConfigurationParts = {},
): string {
  const { module, provider } = server;
  const blocks: string[] = [];
  if (parts.provider ?? true) {
    const requirement = `{ source = "${provider.source}", version = "${provider.version}" }`;
    blocks.push(
      `terraform {\n  required_providers {\n    ${provider.type} = ${requirement}\n  }\n}\n`,
    );
  }
  if (parts.module ?? true) {
    blocks.push(
      `module "hello" {\n  source  = "${module.source}"\n  version = "${module.version}"\n}\n`,
      `output "greeting" {\n  value = module.hello.${module.outputName}\n}\n`,
    );
  }
  return blocks.join("\n");
}
