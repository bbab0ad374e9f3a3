// Scaffolding for end-to-end tests of the INSTALLED helper: a private session (keyring, pass,
// a temporary macOS Keychain, a Windows sandbox), the fixture server,
// `dist/terraform-credentials-keychain install` into the session's HOME, and runners for
// terraform and the installed helper with an environment built from scratch. Nothing here
// reads the ambient environment except PATH (via the sessions).
import assert from "node:assert/strict";
import { appendFile, lstat, mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import type { TestContext } from "node:test";
import { requireBuiltHelper } from "../../support/helper-process.ts";
import { fixtureConfiguration, startFixtureServer } from "./fixture-server.ts";
import type {
  FixtureConfigurationParts,
  FixtureServer,
  RecordedRequest,
  RouteKind,
} from "./fixture-server.ts";
import { cliConfig, runTerraform, terraformPaths } from "./terraform.ts";
import type { PromptAnswer, TerraformResult } from "./terraform.ts";
import { PATIENCE_MS } from "../../support/timing.ts";

/** The installed helper's file name, as Terraform looks it up for `credentials_helper "keychain"`. */
export const HELPER_FILE_NAME = `terraform-credentials-keychain${process.platform === "win32" ? ".exe" : ""}`;

/** A private session: `startKeyringSession()`, `startPassSession()`, `startTemporaryKeychain()`. */
export interface PrivateSession {
  /** The session's complete environment: PATH, LANG, a private HOME, and the store's variables. */
  readonly env: Readonly<Record<string, string>>;
  readonly home: string;
  close(): Promise<void>;
}

/** Options of {@link hermeticEnv}. */
export interface HermeticEnvOptions {
  /** PEM CA file that signed the fixture's certificate, given to Go as `SSL_CERT_FILE`. */
  readonly caFile: string;
  /** `TF_CLI_CONFIG_FILE`; without it Terraform and the helper use `$HOME/.terraformrc`. */
  readonly cliConfigFile?: string;
  /** Extra variables, applied last (e.g. `TF_LOG`). */
  readonly extra?: Readonly<Record<string, string>>;
}

/** A proxy nothing listens on: Go never proxies loopback, so only the fixture is reachable. */
const DEAD_PROXY = "http://127.0.0.1:9";

/**
 * The environment for terraform and the helper: the session's own environment (already built
 * from scratch: private HOME, XDG dirs, bus address or GNUPGHOME) plus what makes terraform
 * hermetic. Refuses a HOME outside the temp dir, so no test can touch the real user's files
 * (this machine's ambient `TF_CLI_CONFIG_FILE=/root/.terraformrc` is never copied).
 */
export function hermeticEnv(
  session: Readonly<Record<string, string>>,
  options: HermeticEnvOptions,
): Record<string, string> {
  const home = session["HOME"];
  if (home === undefined || !isInside(tmpdir(), home) || home === homedir()) {
    throw new Error(`refusing to run with HOME=${String(home)}: not a private temp dir`);
  }
  const env: Record<string, string> = {
    ...session,
    // The pass session sets no XDG dirs: keep everything Go or the helper may write in HOME.
    XDG_CONFIG_HOME: session["XDG_CONFIG_HOME"] ?? join(home, ".config"),
    XDG_CACHE_HOME: session["XDG_CACHE_HOME"] ?? join(home, ".cache"),
    XDG_DATA_HOME: session["XDG_DATA_HOME"] ?? join(home, ".local", "share"),
    TMPDIR: tmpdir(),
    TF_IN_AUTOMATION: "1",
    CHECKPOINT_DISABLE: "1",
    HTTPS_PROXY: DEAD_PROXY,
    HTTP_PROXY: DEAD_PROXY,
    SSL_CERT_FILE: options.caFile,
  };
  // Keeps Terraform from finding system-wide implied provider mirrors under /usr/share.
  env["XDG_DATA_DIRS"] = env["XDG_DATA_HOME"] ?? home;
  delete env["TF_CLI_CONFIG_FILE"];
  if (options.cliConfigFile !== undefined) env["TF_CLI_CONFIG_FILE"] = options.cliConfigFile;
  return { ...env, ...options.extra };
}

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path !== "" && !path.startsWith(`..${sep}`) && path !== ".." && !path.startsWith(sep);
}

/** Options of {@link runProgram}. */
export interface RunProgramOptions {
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Written to stdin, which is then closed; without it stdin is the null device. */
  readonly stdin?: string;
  /** Kill (SIGKILL) after this long; default 30 s. */
  readonly timeoutMs?: number;
}

/** Runs `binary args...` with exactly `env`; never rejects because of the exit status. */
export function runProgram(
  binary: string,
  args: readonly string[],
  options: RunProgramOptions,
): Promise<TerraformResult> {
  return runTerraform(binary, args, { ...options, timeoutMs: options.timeoutMs ?? PATIENCE_MS });
}

/** Formats a run for an assertion message: enough to see why it failed. */
export function describeRun(result: TerraformResult): string {
  const status = `exit ${String(result.exitCode)}${result.timedOut ? " (timed out)" : ""}`;
  return `${status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** Every regular file under `root`, sorted. Sockets, FIFOs and symlinks are not followed. */
export async function regularFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      const info = await lstat(path);
      if (info.isDirectory()) await walk(path);
      else if (info.isFile()) found.push(path);
    }
  };
  await walk(root);
  return found.sort();
}

/** Paths of the regular files under `root` whose bytes contain `needle`, sorted. */
export async function filesContaining(root: string, needle: string): Promise<string[]> {
  const wanted = Buffer.from(needle, "utf8");
  const found: string[] = [];
  for (const path of await regularFiles(root)) {
    if ((await readFile(path)).includes(wanted)) found.push(path);
  }
  return found;
}

/** Appends a `provider_installation` block that installs every provider from `mirrorUrl` only. */
export async function addNetworkMirror(cliConfigFile: string, mirrorUrl: string): Promise<void> {
  await appendFile(cliConfigFile, `\n${cliConfig({ networkMirrorUrl: mirrorUrl })}`);
}

/** Options of {@link startHarness}. */
export interface HarnessOptions {
  /** The terraform executable, from `findTerraform()`. */
  readonly terraform: string;
  /** The token the fixture accepts. */
  readonly token: string;
  /** Starts the private session; the harness closes it after the test. */
  readonly startSession: () => Promise<PrivateSession>;
  /** The helper's options before `install`, e.g. `["--backend", "pass"]`. */
  readonly installArgs?: readonly string[];
  /** Run install and add the network mirror to the CLI config it wrote; default true. */
  readonly install?: boolean;
  /** A fixture server several harnesses share (a team's HOMEs); its owner closes it. */
  readonly server?: FixtureServer;
}

/** Per-run overrides of the harness's environment. */
export interface RunOverrides {
  /** Replaces the harness's CLI config choice (`TF_CLI_CONFIG_FILE`). */
  readonly cliConfigFile?: string;
  readonly extra?: Readonly<Record<string, string>>;
}

/** A session, the fixture, and the helper installed into the session's HOME. */
export interface Harness {
  readonly server: FixtureServer;
  readonly session: PrivateSession;
  readonly home: string;
  /** The session's temp dir: HOME and, for the keyring session, the XDG dirs beside it. */
  readonly sandbox: string;
  /** `$HOME/.terraformrc` (Windows: `%APPDATA%\terraform.rc`), where `install` writes the block. */
  readonly terraformrc: string;
  /** `$HOME/.terraform.d/credentials.tfrc.json`, where `terraform login` writes plaintext. */
  readonly credentialsFile: string;
  /** The installed helper: `$HOME/.terraform.d/plugins/terraform-credentials-keychain`. */
  readonly helperPath: string;
  /** Where Terraform looks for the helper: `$HOME/.terraform.d/plugins`. */
  readonly pluginDir: string;
  /** What `install` printed (empty when `install: false`). */
  readonly installOutput: string;
  /** The environment for a run, built from scratch. */
  env(overrides?: RunOverrides): Record<string, string>;
  /** Runs the built `dist/` helper (before install, or for `install` itself). */
  dist(args: readonly string[], overrides?: RunOverrides): Promise<TerraformResult>;
  /** Runs the installed helper, with `stdin` when given. */
  helper(
    args: readonly string[],
    stdin?: string,
    overrides?: RunOverrides,
  ): Promise<TerraformResult>;
  /** Runs terraform in `cwd` (default HOME). */
  terraform(
    args: readonly string[],
    options?: RunOverrides & { cwd?: string; answers?: readonly PromptAnswer[] },
  ): Promise<TerraformResult>;
  /** A fresh directory with a root module that uses the fixture's module and provider. */
  configDir(parts?: FixtureConfigurationParts): Promise<string>;
  /** `terraform init` in a fresh config dir; returns the run and the dir. */
  init(overrides?: RunOverrides): Promise<{ result: TerraformResult; dir: string }>;
  /** `terraform login HOST` answering "yes" and then pasting `token`. */
  login(token: string, overrides?: RunOverrides): Promise<TerraformResult>;
}

/**
 * Starts the fixture and the session, and (unless `install: false`) runs
 * `dist/terraform-credentials-keychain [installArgs] install` in it, then adds the fixture's
 * network mirror to the CLI config install wrote. Everything is closed and removed after `t`.
 * Throws when install fails, with its output.
 */
export async function startHarness(t: TestContext, options: HarnessOptions): Promise<Harness> {
  const distHelper = requireBuiltHelper();
  const server = options.server ?? (await startFixtureServer({ token: options.token }));
  if (options.server === undefined) t.after(() => server.close());
  const session = await options.startSession();
  t.after(() => session.close());
  const home = session.home;
  const sandbox = dirname(home);
  const paths = terraformPaths(home);
  const terraformrc = paths.cliConfigFile;
  const helperPath = join(paths.pluginDir, HELPER_FILE_NAME);
  const configRoot = await mkdtemp(join(home, "configs-"));

  const env = (overrides: RunOverrides = {}): Record<string, string> =>
    hermeticEnv(session.env, {
      caFile: server.caFile,
      ...(overrides.cliConfigFile === undefined ? {} : { cliConfigFile: overrides.cliConfigFile }),
      ...(overrides.extra === undefined ? {} : { extra: overrides.extra }),
    });
  const dist = (args: readonly string[], overrides?: RunOverrides) =>
    runProgram(distHelper, args, { env: env(overrides), cwd: home });
  const helper = (args: readonly string[], stdin?: string, overrides?: RunOverrides) =>
    runProgram(helperPath, args, {
      env: env(overrides),
      cwd: home,
      ...(stdin === undefined ? {} : { stdin }),
    });
  const terraform: Harness["terraform"] = (args, runOptions = {}) =>
    runTerraform(options.terraform, args, {
      cwd: runOptions.cwd ?? home,
      env: env(runOptions),
      ...(runOptions.answers === undefined ? {} : { answers: runOptions.answers }),
    });
  let configs = 0;
  const configDir = async (parts?: FixtureConfigurationParts): Promise<string> => {
    configs += 1;
    const dir = join(configRoot, `config-${configs}`);
    await mkdir(dir);
    await writeFile(join(dir, "main.tf"), fixtureConfiguration(server, parts));
    return dir;
  };

  let installOutput = "";
  if (options.install ?? true) {
    const installed = await dist([...(options.installArgs ?? []), "install"]);
    if (installed.exitCode !== 0) throw new Error(`install failed: ${describeRun(installed)}`);
    installOutput = installed.stdout;
    await addNetworkMirror(terraformrc, server.mirrorUrl);
  }

  return {
    server,
    session,
    home,
    sandbox,
    terraformrc,
    credentialsFile: join(paths.configDir, "credentials.tfrc.json"),
    helperPath,
    pluginDir: paths.pluginDir,
    installOutput,
    env,
    dist,
    helper,
    terraform,
    configDir,
    async init(overrides = {}) {
      const dir = await configDir();
      const result = await terraform(["init", "-input=false", "-no-color"], {
        ...overrides,
        cwd: dir,
      });
      return { result, dir };
    },
    login(token, overrides = {}) {
      return terraform(["login", "-no-color", server.host], {
        ...overrides,
        answers: [
          { prompt: "Do you want to proceed?", answer: "yes" },
          { prompt: `Token for ${server.host}:`, answer: token },
        ],
      });
    },
  };
}

/** The requests the fixture server saw on one kind of route. */
export function requestsOf(harness: Harness, kind: RouteKind): RecordedRequest[] {
  return harness.server.requests.filter((seen) => seen.kind === kind);
}

/** Every credentialed route of a full init was used, and always with the accepted token. */
export function assertTokenSentEverywhere(harness: Harness): void {
  const kinds: RouteKind[] = [
    "module-versions",
    "module-download",
    "mirror-index",
    "mirror-version",
  ];
  for (const kind of kinds) {
    const seen = requestsOf(harness, kind);
    assert.ok(seen.length > 0, `terraform never requested ${kind}`);
    for (const one of seen) assert.equal(one.auth, "valid", `${one.method} ${one.path}`);
  }
}

/** The helper's `[args] get HOST` prints exactly `expected` as JSON (one line) and exits 0. */
export async function assertGet(
  harness: Harness,
  expected: unknown,
  args: readonly string[] = [],
  host = harness.server.host,
): Promise<void> {
  const got = await harness.helper([...args, "get", host]);
  assert.equal(got.exitCode, 0, describeRun(got));
  assert.equal(got.stdout, `${JSON.stringify(expected)}\n`);
}

/** With no token for the host, init fails: the registry saw the request without one and said 401. */
export async function assertInitDenied(harness: Harness): Promise<void> {
  harness.server.clearRequests();
  const denied = await harness.init();
  assert.equal(denied.result.exitCode, 1, describeRun(denied.result));
  assert.match(denied.result.stderr, /401/);
  assert.deepEqual(
    requestsOf(harness, "module-versions").map((seen) => [seen.auth, seen.status]),
    [["none", 401]],
  );
}
