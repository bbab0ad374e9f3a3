import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import type { TestContext } from "node:test";
import { PATIENCE_MS } from "../../support/timing.ts";

/** What a finished (or killed) terraform run produced. */
export interface TerraformResult {
  /** Exit code, or null when the process was ended by a signal (e.g. our timeout). */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when the run hit its timeout and was killed. */
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link runTerraform}. */
export interface RunTerraformOptions {
  /** Working directory: the configuration directory for init/plan. */
  readonly cwd: string;
  /** The complete environment; nothing from this process's environment is added to it. */
  readonly env: Readonly<Record<string, string>>;
  /** Kill the run (SIGKILL) after this long. Default 60 s. */
  readonly timeoutMs?: number;
  /**
   * Answers to interactive prompts, in order: each is written (with a newline) once stdout,
   * after the previous answer, contains its `prompt`; stdin is closed after the last one.
   * Without answers stdin is closed at once. Answers can't be written up front, because
   * Terraform reads each prompt's line through a fresh buffered reader that would swallow the
   * following lines.
   */
  readonly answers?: readonly PromptAnswer[];
  /** Written to stdin at once, which is then closed: for programs that read to EOF. */
  readonly stdin?: string;
}

/** One answer for {@link RunTerraformOptions.answers}. */
export interface PromptAnswer {
  /** Text (or pattern) on stdout that shows Terraform is waiting for this answer. */
  readonly prompt: string | RegExp;
  readonly answer: string;
}

/** Options of {@link terraformEnv}. */
export interface TerraformEnvOptions {
  /** The private HOME (see {@link makePrivateHome}); XDG dirs are placed inside it too. */
  readonly home: string;
  /** PEM CA file to trust instead of the system's roots (Go reads `SSL_CERT_FILE`). */
  readonly caFile?: string;
  /** Path for `TF_CLI_CONFIG_FILE`; without it Terraform reads `<home>/.terraformrc`. */
  readonly cliConfigFile?: string;
  /** Extra variables, applied last (e.g. `TF_TOKEN_...`, `TF_LOG`). */
  readonly extra?: Readonly<Record<string, string>>;
}

/** A credentials helper block for {@link cliConfig}. */
export interface CredentialsHelperConfig {
  /** The helper's type: Terraform runs `terraform-credentials-<type>` from its plugin dirs. */
  readonly type: string;
  readonly args?: readonly string[];
}

/** What to put in a CLI configuration file; see {@link cliConfig}. */
export interface CliConfigOptions {
  /** `credentials "<host>" { token = "<token>" }` blocks, by hostname (may include `:port`). */
  readonly credentials?: Readonly<Record<string, string>>;
  readonly credentialsHelper?: CredentialsHelperConfig;
  /**
   * Install every provider from this network mirror (base URL with a trailing slash) and from
   * nowhere else, so `terraform init` never reaches for a public registry.
   */
  readonly networkMirrorUrl?: string;
}

/** A private HOME directory; remove it with `cleanup()` or `await using`. */
export interface PrivateHome extends AsyncDisposable {
  readonly path: string;
  cleanup(): Promise<void>;
}

/** Default bound for one terraform run: generous for init on a slow CI machine. */
const DEFAULT_TIMEOUT_MS = PATIENCE_MS;
/**
 * A proxy address nothing listens on. Go never proxies requests to loopback addresses, so the
 * fixture server is reached directly while any request to another host fails at once: the
 * tests cannot touch the real network even by mistake.
 */
const DEAD_PROXY = "http://127.0.0.1:9";

/**
 * Looks for an executable `terraform` in the directories of `pathEnv` (default: this process's
 * PATH). Returns its path, or undefined when there is none, so a test can `t.skip()` clearly.
 */
export async function findTerraform(
  pathEnv = process.env["PATH"] ?? "",
  tool = process.env["TFCK_TEST_TERRAFORM"] ?? "terraform",
): Promise<string | undefined> {
  // TFCK_TEST_TERRAFORM=tofu: CI's e2e matrix drives OpenTofu through the same files.
  if (tool !== "terraform" && tool !== "tofu") {
    throw new Error(`TFCK_TEST_TERRAFORM is ${JSON.stringify(tool)}: terraform or tofu`);
  }
  const name = process.platform === "win32" ? `${tool}.exe` : tool;
  for (const dir of pathEnv.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}

/**
 * For a test that found no terraform: skips it with one SKIP line, or, under CI=true, fails
 * it. CI exists to run the end-to-end tests; a CI run that skipped them would pass having
 * proved nothing about terraform and the helper together.
 */
export function skipWithoutTerraform(
  t: Pick<TestContext, "skip">,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const tool = env["TFCK_TEST_TERRAFORM"] ?? "terraform";
  const why = `${tool} is not on PATH, so the end-to-end tests cannot run it (install it, e.g. into /usr/local/bin)`;
  if (env["CI"] === "true") throw new Error(`${why}; under CI=true they must run`);
  t.skip(`SKIP: ${why}`);
}

/**
 * Runs `binary args...` in `cwd` with exactly `env`, captures stdout and stderr as UTF-8 text,
 * and resolves when it exits — or when it is killed after `timeoutMs`. Never rejects because of
 * the exit status; rejects only if the process cannot be started.
 */
export function runTerraform(
  binary: string,
  args: readonly string[],
  options: RunTerraformOptions,
): Promise<TerraformResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd: options.cwd, env: options.env, stdio: "pipe" });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    const answer = promptAnswerer(
      options.stdin === undefined ? (options.answers ?? []) : [],
      (text) => child.stdin.write(text),
      () => {
        child.stdin.end();
      },
    );
    child.stdout.on("data", (chunk: Buffer) => {
      stdout.push(chunk);
      answer(chunk.toString("utf8"));
    });
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    // Terraform may exit before reading all of stdin; that is its business, not an error here.
    child.stdin.on("error", () => {});
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({
        exitCode,
        signal,
        timedOut,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
      });
    });
  });
}

/**
 * Returns a function to feed with stdout text; it writes each answer once its prompt has
 * appeared since the previous answer, and calls `end` after the last (at once if none).
 */
function promptAnswerer(
  answers: readonly PromptAnswer[],
  write: (text: string) => void,
  end: () => void,
): (stdoutText: string) => void {
  let next = 0;
  let seen = "";
  if (answers.length === 0) end();
  return (stdoutText) => {
    seen += stdoutText;
    let current = answers[next];
    while (current !== undefined && matches(seen, current.prompt)) {
      write(`${current.answer}\n`);
      seen = "";
      next += 1;
      if (next === answers.length) end();
      current = answers[next];
    }
  };
}

function matches(text: string, prompt: string | RegExp): boolean {
  return typeof prompt === "string" ? text.includes(prompt) : prompt.test(text);
}

/** Where Terraform keeps its CLI config and its own directory for a given HOME. */
export interface TerraformPaths {
  /** The CLI config read without `TF_CLI_CONFIG_FILE`: `.terraformrc`, or `terraform.rc`. */
  readonly cliConfigFile: string;
  /** `.terraform.d` (or `terraform.d`): `credentials.tfrc.json` and `plugins/` are in it. */
  readonly configDir: string;
  /** Where Terraform looks for credentials helpers: `<configDir>/plugins`. */
  readonly pluginDir: string;
}

/**
 * Terraform's own places for a private `home` (internal/command/cliconfig/config_unix.go,
 * config_windows.go, plugins.go): `~/.terraformrc` and `~/.terraform.d` on Unix; on Windows
 * `terraform.rc` and `terraform.d` in the folder SHGetFolderPathW(CSIDL_APPDATA) gives, the
 * registry's `%USERPROFILE%\AppData\Roaming` expanded with the process's USERPROFILE (the
 * folder must exist), which {@link windowsHomeEnv} points at `home`.
 */
export function terraformPaths(home: string, platform = process.platform): TerraformPaths {
  const windows = platform === "win32";
  const appData = windows ? roamingAppData(home) : home;
  const configDir = join(appData, windows ? "terraform.d" : ".terraform.d");
  const cliConfigFile = join(appData, windows ? "terraform.rc" : ".terraformrc");
  return { cliConfigFile, configDir, pluginDir: join(configDir, "plugins") };
}

/**
 * On Windows, what makes `home` the user's profile for a child built from scratch:
 * USERPROFILE, APPDATA and LOCALAPPDATA inside it, and SystemRoot, without which Winsock
 * cannot start and no Go program reaches the network. Nothing elsewhere.
 */
export function windowsHomeEnv(home: string): Record<string, string> {
  if (process.platform !== "win32") return {};
  const systemRoot = process.env["SystemRoot"] ?? "C:\\Windows";
  return {
    SystemRoot: systemRoot,
    USERPROFILE: home,
    APPDATA: roamingAppData(home),
    LOCALAPPDATA: join(home, "AppData", "Local"),
  };
}

/** `%USERPROFILE%\AppData\Roaming`, the registry's default for CSIDL_APPDATA. */
function roamingAppData(home: string): string {
  return join(home, "AppData", "Roaming");
}

/**
 * The environment for a hermetic terraform run: PATH from this process and nothing else
 * inherited (no TF_* variable, no proxy, no TF_PLUGIN_CACHE_DIR), a private HOME and XDG dirs,
 * `TF_IN_AUTOMATION=1`, `CHECKPOINT_DISABLE=1`, and a dead proxy so only loopback is reachable.
 */
export function terraformEnv(options: TerraformEnvOptions): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    ...windowsHomeEnv(options.home),
    HOME: options.home,
    XDG_CONFIG_HOME: join(options.home, ".config"),
    XDG_CACHE_HOME: join(options.home, ".cache"),
    XDG_DATA_HOME: join(options.home, ".local", "share"),
    // Keeps Terraform from finding system-wide implied plugin mirrors under /usr/share.
    XDG_DATA_DIRS: join(options.home, ".local", "share"),
    TMPDIR: tmpdir(),
    TF_IN_AUTOMATION: "1",
    CHECKPOINT_DISABLE: "1",
    HTTPS_PROXY: DEAD_PROXY,
    HTTP_PROXY: DEAD_PROXY,
  };
  if (options.caFile !== undefined) env["SSL_CERT_FILE"] = options.caFile;
  if (options.cliConfigFile !== undefined) env["TF_CLI_CONFIG_FILE"] = options.cliConfigFile;
  return { ...env, ...options.extra };
}

/**
 * The text of a CLI configuration file (HCL) with the given credentials, credentials helper and
 * network mirror. Throws if a value cannot be written safely as an HCL string.
 */
export function cliConfig(options: CliConfigOptions): string {
  const blocks: string[] = [];
  for (const [host, token] of Object.entries(options.credentials ?? {})) {
    blocks.push(`credentials ${hclString(host)} {\n  token = ${hclString(token)}\n}\n`);
  }
  if (options.credentialsHelper !== undefined) {
    const { type, args = [] } = options.credentialsHelper;
    blocks.push(
      `credentials_helper ${hclString(type)} {\n  args = [${args.map(hclString).join(", ")}]\n}\n`,
    );
  }
  if (options.networkMirrorUrl !== undefined) {
    const url = hclString(options.networkMirrorUrl);
    blocks.push(`provider_installation {\n  network_mirror {\n    url = ${url}\n  }\n}\n`);
  }
  return blocks.join("\n");
}

/** Writes {@link cliConfig}`(options)` to `path` (mode 0600: it may hold tokens); returns `path`. */
export async function writeCliConfig(path: string, options: CliConfigOptions): Promise<string> {
  await writeFile(path, cliConfig(options), { mode: 0o600 });
  return path;
}

/**
 * Creates an empty private HOME (mode 0700) under `os.tmpdir()`, with the `.terraform.d` dir
 * Terraform keeps its CLI state in (`AppData\Roaming\terraform.d` on Windows), so no test
 * reads or writes the real user's files.
 */
export async function makePrivateHome(): Promise<PrivateHome> {
  const path = await mkdtemp(join(tmpdir(), "tf-home-"));
  await mkdir(terraformPaths(path).configDir, { recursive: true, mode: 0o700 });
  const cleanup = (): Promise<void> => rm(path, { recursive: true, force: true });
  return { path, cleanup, [Symbol.asyncDispose]: cleanup };
}

/**
 * The environment variable name that gives Terraform a token for `host` (`TF_TOKEN_...`).
 * Dots become underscores as Terraform documents; a `:port` is kept as is, because Terraform
 * maps `_` back to `.` only, so a port can be expressed only with a literal colon. Such a name
 * can't be set from a shell, but can be passed to a child process's environment directly.
 */
export function tokenEnvVarName(host: string): string {
  return `TF_TOKEN_${host.replaceAll(".", "_")}`;
}

/** An HCL quoted string. HCL's escapes are a superset of JSON's, except for template sequences. */
function hclString(value: string): string {
  if (value.includes("${") || value.includes("%{")) {
    throw new Error("values containing ${ or %{ are not supported in the CLI config helper");
  }
  return JSON.stringify(value);
}
