// The real `terraform` is the referee of terraform/view.ts and of `import`: for layouts
// generated from a fixed seed (a host in two or three sources, tokenless blocks, drop-ins
// with tokens and with the helper block, TF_CLI_CONFIG_FILE and TERRAFORM_CONFIG, TF_TOKEN_
// variables, host names differing in case or by :443, CRLF and comments, hard links and
// symlinks), it asks `terraform init` which token each host receives (the fixture records a
// hash of the Authorization header), and checks that
// - the view names that token;
// - after `import`, and again after `import --force`, Terraform sends the same token for
//   every host (now through the helper), or import exited non-zero with no byte changed;
// - no token import reports as moved is left in plain text in a file under HOME;
// - a `get` typed with no options returns the token Terraform sends through the helper.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { viewsOf } from "../../src/commands/read-view.ts";
import { normalizeHostname } from "../../src/protocol/hostname.ts";
import { hostIn, sends } from "../../src/terraform/view.ts";
import { optionsOfArgs } from "../../src/commands/options.ts";
import { requireBuiltHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startPassSession } from "../support/pass-session.ts";
import { startConnectProxy } from "./support/connect-proxy.ts";
import { newToken, startFixtureServer } from "./support/fixture-server.ts";
import { describeRun, regularFiles, runProgram } from "./support/helper-harness.ts";
import { findTerraform, runTerraform, skipWithoutTerraform } from "./support/terraform.ts";
import type { TerraformResult } from "./support/terraform.ts";
import { generateLayouts, layoutEnv, type Layout } from "./support/view-layouts.ts";
import { TEST_PATIENCE_MS } from "../support/timing.ts";

const SEED = 35;
const ROUNDS = 3; // layouts per family
const CONCURRENCY = 3;
const terraform = await findTerraform();
const layouts = generateLayouts(SEED, ROUNDS);
/** CI drives these files with OpenTofu too (TFCK_TEST_TERRAFORM=tofu): its view is the referee's. */
const TOOL = process.env.TFCK_TEST_TERRAFORM === "tofu" ? "OpenTofu" : "Terraform";

/** What Terraform sent a host: a token of the layout, "none", or "unknown" (not one of them). */
type Sent = string;

describe(
  "the real terraform referees the view and import",
  { concurrency: CONCURRENCY },
  async () => {
    if (terraform === undefined) {
      test("terraform is on PATH", (t) => skipWithoutTerraform(t));
      return;
    }
    const elsewhere = linuxOnly("the referee suite, with the pass store in a private GPG home");
    if (elsewhere !== false) {
      test("layouts", { skip: elsewhere }, () => {});
      return;
    }
    const helper = requireBuiltHelper();
    const hosts = layouts.flatMap((layout) => layout.hosts);
    const server = await startFixtureServer({
      token: newToken(),
      tokensByHost: Object.fromEntries(hosts.map((host) => [host, newToken()])),
      acceptAnyToken: true,
    });
    const proxy = await startConnectProxy(server.port);
    const session = await startPassSession();
    const root = mkdtempSync(path.join(tmpdir(), "tfck-view-"));
    after(async () => {
      rmSync(root, { recursive: true, force: true });
      await Promise.all([server.close(), proxy.close(), session.close()]);
    });

    for (const layout of layouts) {
      test(layout.name, { timeout: TEST_PATIENCE_MS }, async () => {
        const home = path.join(root, layout.name.replace(/\W+/g, "-"));
        build(home, layout);
        const env = {
          ...session.env,
          ...layoutEnv(home, proxy.url, server.caFile, layout.env),
        };
        const run = (args: readonly string[]) => runProgram(helper, args, { env, cwd: home });
        for (const [service, tokens] of Object.entries(layout.stored)) {
          for (const [host, token] of Object.entries(tokens)) {
            const stored = await runProgram(
              helper,
              ["--backend", "pass", "--service", service, "store", host],
              { env, cwd: home, stdin: JSON.stringify({ token }) },
            );
            assert.equal(stored.exitCode, 0, describeRun(stored));
          }
        }
        let inits = 0;
        const init = async (): Promise<Map<string, Sent>> => {
          // A fresh root module each time: a second init in one directory asks no registry.
          const work = path.join(root, `${path.basename(home)}-work-${String(inits++)}`);
          mkdirSync(work);
          writeFileSync(path.join(work, "main.tf"), configuration(layout, server.module.version));
          const from = server.requests.length;
          const result = await runTerraform(terraform, ["init", "-input=false", "-no-color"], {
            cwd: work,
            env,
            timeoutMs: 240_000,
          });
          return sentPerHost(layout, server.requests.slice(from), result);
        };

        // What the view reads in this HOME now.
        const viewNow = () =>
          viewsOf({
            env,
            platform: process.platform,
            arch: process.arch,
            homedir: home,
            execPath: "",
            isSea: false,
          });

        // 1. The view names the token terraform init sends.
        const views = viewNow();
        const service = serviceOf(
          views[TOOL].helpers.find(({ name }) => name === "keychain")?.args,
        );
        const before = await init();
        for (const host of layout.hosts) {
          const expected = expectedTokens(layout, views, host, service);
          assert.ok(
            expected.includes(before.get(host) ?? "none"),
            `${host}: terraform sent ${before.get(host) ?? "none"}, the view says ${expected.join(" or ")}`,
          );
        }

        // 2. After import, then import --force (which drops copies holding other tokens), the
        // same token for every host, or a refusal that changed no byte.
        let after = before;
        for (const args of [["import"], ["import", "--force"]]) {
          const bytesBefore = snapshot(home);
          const imported = await run(args);
          after = await init();
          const unchanged = sameBytes(bytesBefore, snapshot(home));
          const changedHosts = layout.hosts.filter((host) => {
            const expected = expectedTokens(layout, views, host, service);
            const now = after.get(host) ?? "none";
            // Two spellings with different tokens: Terraform picks one of them each run.
            return expected.length > 1 ? !expected.includes(now) : now !== before.get(host);
          });
          if (changedHosts.length > 0) {
            assert.ok(
              imported.exitCode !== 0 && unchanged,
              `${args.join(" ")} changed what terraform sends for ${changedHosts.map((host) => `${host} (${before.get(host) ?? "none"} -> ${after.get(host) ?? "none"})`).join(", ")}\n${describeRun(imported)}`,
            );
          }

          // 3. No token import moved is left in plain text under HOME, hard links included.
          for (const host of movedHosts(imported.stdout)) {
            const token = before.get(host);
            if (token === undefined || token === "none" || token === "unknown") continue;
            const holders = regularFiles(home).then((files) =>
              files.filter((file) => readFileSync(file).includes(Buffer.from(token))),
            );
            assert.deepEqual(
              await holders,
              [],
              `${host}: ${args.join(" ")} said moved, but its token is still in plain text`,
            );
          }
        }

        // 4. A typed get with no options returns what Terraform gets through the helper.
        const viewsAfter = viewNow();
        for (const host of layout.hosts) {
          if (sends(hostIn(viewsAfter[TOOL], normalizeHostname(host))).from !== "helper") continue;
          const got = await run(["get", host]);
          assert.equal(got.exitCode, 0, describeRun(got));
          const token = (JSON.parse(got.stdout) as { token?: string }).token;
          assert.equal(
            token ?? "none",
            after.get(host) ?? "none",
            `${host}: get and terraform disagree`,
          );
        }
      });
    }
  },
);

/** Writes the layout's files under `home`, links included. */
function build(home: string, layout: Layout): void {
  mkdirSync(path.join(home, ".terraform.d", "plugins"), { recursive: true, mode: 0o700 });
  // Terraform finds the helper in its plugin directory; a symlink to the build is enough.
  symlinkSync(
    requireBuiltHelper(),
    path.join(home, ".terraform.d", "plugins", "terraform-credentials-keychain"),
  );
  for (const file of layout.files) {
    const target = path.join(home, file.path);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, file.text, { mode: 0o600 });
    if (file.alias === undefined) continue;
    const alias = path.join(home, file.alias.path);
    mkdirSync(path.dirname(alias), { recursive: true });
    if (file.alias.kind === "hard") linkSync(target, alias);
    else symlinkSync(target, alias);
  }
}

/** A root module with one registry module from each host. */
function configuration(layout: Layout, version: string): string {
  return layout.hosts
    .map(
      (host, index) =>
        `module "m${index}" {\n  source  = "${host}/acme/hello/null"\n  version = "${version}"\n}\n`,
    )
    .join("\n");
}

/** The token each host's module-versions request carried, by the hash the fixture kept. */
function sentPerHost(
  layout: Layout,
  requests: ReadonlyArray<{ host: string; kind: string; authorizationSha256?: string }>,
  result: TerraformResult,
): Map<string, Sent> {
  const byHash = new Map(
    layout.tokens.map((token) => [
      createHash("sha256").update(`Bearer ${token}`).digest("hex"),
      token,
    ]),
  );
  const sent = new Map<string, Sent>();
  for (const host of layout.hosts) {
    const request = requests.find((seen) => seen.host === host && seen.kind === "module-versions");
    assert.ok(
      request !== undefined,
      `terraform never asked ${host} for the module\n${describeRun(result)}`,
    );
    const hash = request.authorizationSha256;
    sent.set(host, hash === undefined ? "none" : (byHash.get(hash) ?? "unknown"));
  }
  return sent;
}

/** The tokens the view says Terraform may send `host` (more than one: its random pick). */
function expectedTokens(
  layout: Layout,
  views: ReturnType<typeof viewsOf>,
  host: string,
  service: string | undefined,
): Sent[] {
  const sent = sends(hostIn(views[TOOL], normalizeHostname(host)));
  switch (sent.from) {
    case "variable":
    case "file":
      return [sent.token];
    case "nothing":
      return ["none"];
    case "unknown":
      return sent.entries.map((entry) => {
        const token = entry.attributes?.find(([name]) => name === "token")?.[1];
        return token ?? "none";
      });
    case "helper":
      return [(service === undefined ? undefined : layout.stored[service]?.[host]) ?? "none"];
  }
}

function serviceOf(args: readonly string[] | undefined): string | undefined {
  if (args === undefined) return undefined;
  return optionsOfArgs(args)?.service ?? "terraform-credentials-keychain";
}

/** The hosts import reported as moved (or replaced), in comparison form. */
function movedHosts(stdout: string): string[] {
  return [
    ...stdout.matchAll(/^(?:moved: (\S+) from |replaced: the credentials for (\S+) in )/gm),
  ].flatMap((match) => {
    try {
      return [normalizeHostname(match[1] ?? match[2] ?? "")];
    } catch {
      return [];
    }
  });
}

/** Every regular file under `root` (links followed by name), with its bytes. */
function snapshot(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirEntries(dir)) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "plugins") walk(file);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        try {
          files.set(file, readFileSync(file).toString("base64"));
        } catch {
          files.set(file, "(unreadable)");
        }
      }
    }
  };
  walk(root);
  return files;
}

function readdirEntries(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function sameBytes(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  return a.size === b.size && [...a].every(([file, bytes]) => b.get(file) === bytes);
}
