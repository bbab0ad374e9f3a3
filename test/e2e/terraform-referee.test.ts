// The generated referee: for random CLI configurations (support/referee-layouts.ts), the real
// `terraform` judges `doctor --json`. Per layout, one `terraform init` of a root module that
// pulls a module from each of the layout's hosts, through the fixture server (which records a
// hash of each Authorization header) and recording credentials helpers in the plugin
// directory (which log the args they are run with), gives Terraform's verdict: the token each
// host gets and where the generator put it, the helper and args it ran, the files its config
// diagnostics name, and whether it crashed. `doctor --json` of the built helper gives ours.
//
//   REFEREE_LAYOUTS=5000   how many layouts (default 200), seeds REFEREE_BASE.. (default 1)
//   REFEREE_SEED=1234      that one layout alone
//   REFEREE_OUT=file       also append each disagreement to the file as it is found
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { DoctorReport, HelperReport, ToolReport } from "../../src/commands/doctor-report.ts";
import { requireBuiltHelper } from "../support/helper-process.ts";
import { startConnectProxy } from "./support/connect-proxy.ts";
import { newToken, startFixtureServer, type FixtureServer } from "./support/fixture-server.ts";
import { runProgram } from "./support/helper-harness.ts";
import { helperToken, refereeLayout, type RefereeLayout } from "./support/referee-layouts.ts";
import { layoutEnv } from "./support/view-layouts.ts";
import { findTerraform, runTerraform, skipWithoutTerraform } from "./support/terraform.ts";

const terraform = await findTerraform();
const CONCURRENCY = 3;
/** Layouts per fixture server. */
const CHUNK = 200;
/** Failing layouts printed in full. */
const SHOWN = 10;
const seeds = seedsToRun(process.env);
const out = process.env.REFEREE_OUT === "" ? undefined : process.env.REFEREE_OUT;

describe(`the real terraform referees doctor --json (seeds ${describeSeeds(seeds)})`, async () => {
  if (process.env.TFCK_TEST_TERRAFORM === "tofu") {
    // Terraform's reading is the one modelled rule for rule; OpenTofu's view is judged elsewhere.
    test("layouts", { skip: "the generated referee judges with terraform" }, () => {});
    return;
  }
  if (terraform === undefined) {
    test("terraform is on PATH", (t) => skipWithoutTerraform(t));
    return;
  }
  if (process.platform !== "linux") {
    // The recording helpers are shell scripts; the referee's layouts are Linux paths.
    test("layouts", { skip: "the generated referee runs on Linux" }, () => {});
    return;
  }
  const helper = requireBuiltHelper();
  const layouts = seeds.map(refereeLayout);
  const root = mkdtempSync(path.join(tmpdir(), "tfck-referee-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  const failures: Array<{ seed: number; text: string }> = [];
  const timeout = Math.max(10 * 60_000, layouts.length * 3_000);
  /** What Terraform did across the layouts, to show in one line what the run covered. */
  const seen = new Map<string, number>();
  const count = (what: string, n = 1) => seen.set(what, (seen.get(what) ?? 0) + n);
  test(`${layouts.length} layouts agree`, { timeout }, async (t) => {
    // One fixture per chunk: its certificate names every host, and Go refuses a handshake
    // message over 64 KiB.
    for (let start = 0; start < layouts.length; start += CHUNK) {
      const chunk = layouts.slice(start, start + CHUNK);
      const server = await startFixtureServer({
        token: newToken(),
        tokensByHost: Object.fromEntries(
          chunk.flatMap((layout) => layout.hosts).map((host) => [host, newToken()]),
        ),
        acceptAnyToken: true,
      });
      const proxy = await startConnectProxy(server.port);
      try {
        let index = 0;
        const worker = async () => {
          for (let layout = chunk[index++]; layout !== undefined; layout = chunk[index++]) {
            const failure = await judge(layout, server, proxy.url);
            if (failure === undefined) continue;
            failures.push({ seed: layout.seed, text: failure });
            if (out !== undefined) appendFileSync(out, `${failure}\n\n`);
          }
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      } finally {
        await Promise.all([server.close(), proxy.close()]);
      }
    }
    t.diagnostic(`terraform: ${[...seen].map(([what, n]) => `${n} ${what}`).join(", ")}`);
    failures.sort((a, b) => a.seed - b.seed);
    const shown = failures.slice(0, SHOWN);
    assert.equal(
      failures.length,
      0,
      [
        `${failures.length} of ${layouts.length} layouts disagree with terraform (REFEREE_SEED=N reruns one${failures.length > SHOWN ? `; the first ${SHOWN} follow, REFEREE_OUT=file keeps all` : ""}):`,
        `seeds: ${failures.map(({ seed }) => seed).join(" ")}`,
        ...shown.map(({ text }) => text),
      ].join("\n\n"),
    );
  });

  /** Terraform's and doctor's verdicts on one layout: a description where they differ. */
  async function judge(
    layout: RefereeLayout,
    server: FixtureServer,
    proxyUrl: string,
  ): Promise<string | undefined> {
    const home = path.join(root, `r${layout.seed}`);
    const log = path.join(home, "helper-calls.log");
    build(home, layout, log);
    const env = {
      PATH: "/usr/bin:/bin",
      ...layoutEnv(home, proxyUrl, server.caFile, layout.env),
    };
    const doctor = await runProgram(helper, ["doctor", "--json"], {
      env,
      cwd: home,
      timeoutMs: 300_000,
    });
    let ours: Verdict;
    try {
      ours = doctorVerdict(
        layout,
        home,
        (JSON.parse(doctor.stdout) as DoctorReport).tools.Terraform,
      );
    } catch {
      return report(
        layout,
        `doctor --json failed (exit ${doctor.exitCode}): ${doctor.stderr.trim()}`,
      );
    }
    for (const token of layout.tokens) {
      if (doctor.stdout.includes(token.token)) {
        return report(layout, "doctor --json printed a token");
      }
    }
    const work = path.join(home, "work");
    mkdirSync(work);
    writeFileSync(path.join(work, "main.tf"), configuration(layout, server.module.version));
    const from = server.requests.length;
    const init = await runTerraform(terraform!, ["init", "-input=false", "-no-color"], {
      cwd: work,
      env,
      timeoutMs: 600_000,
    });
    const requests = server.requests.slice(from);
    const theirs = terraformVerdict(layout, home, init, requests, log);
    if (theirs.panic) count("crashes");
    count("dropped files", theirs.dropped.length);
    count("invalid labels", theirs.invalid.length);
    if (theirs.helpers === "several") count("layouts with several helper labels");
    for (const [sent = ""] of Object.values(theirs.hosts)) {
      count(`hosts sent ${/^(variable|file|helper|none)/.exec(sent)?.[1] ?? "other"}`);
    }
    const differences = compare(theirs, ours);
    if (Object.values(theirs.hosts).some(([sent]) => sent?.startsWith("never asked") === true)) {
      differences.push(`terraform init said:\n${(init.stdout + init.stderr).trim().slice(-1500)}`);
    }
    rmSync(home, { recursive: true, force: true });
    if (differences.length === 0) return undefined;
    return report(layout, differences.join("\n"), theirs, ours);
  }
});

/** What one side says of a layout. */
interface Verdict {
  /** Terraform crashed (every command of it does in this layout). */
  readonly panic: boolean;
  /** Files under HOME the config diagnostics name (or doctor reports dropped), relative. */
  readonly dropped: readonly string[];
  /** Credentials labels it calls invalid host names (or doctor ignores), as written. */
  readonly invalid: readonly string[];
  /** "No more than one credentials_helper block may be specified". */
  readonly helpers: "one-or-none" | "several";
  /** Per host: the places its token may come from (any of them), "helper NAME ARGS" or "none". */
  readonly hosts: Readonly<Record<string, readonly string[]>>;
}

/** A string Go's %q wrote (JSON's escapes, which it uses for the labels generated). */
function goUnquote(quoted: string): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted.slice(1, -1);
  }
}

function placeName(layout: RefereeLayout, token: string): string {
  const found = layout.tokens.find((entry) => entry.token === token);
  if (found === undefined) {
    const helper = /^helper-(\w+)-r\d+\./.exec(token);
    return helper === null ? "an unknown token" : `helper ${helper[1]}`;
  }
  return found.place.kind === "variable"
    ? `variable ${found.place.name}`
    : `file ${found.place.path} ${JSON.stringify(found.place.label)}`;
}

function terraformVerdict(
  layout: RefereeLayout,
  home: string,
  init: { stdout: string; stderr: string },
  requests: ReadonlyArray<{ host: string; kind: string; authorizationSha256?: string }>,
  log: string,
): Verdict {
  const output = `${init.stdout}\n${init.stderr}`;
  if (output.includes("TERRAFORM CRASH")) {
    return { panic: true, dropped: [], invalid: [], helpers: "one-or-none", hosts: {} };
  }
  const problems = output.split("There are some problems with the CLI configuration:")[1] ?? "";
  const section = problems.split("As a result of the above problems")[0] ?? "";
  const dropped = [
    ...new Set(
      [...section.matchAll(/Error parsing (\S+?): /g)].map((match) =>
        path.relative(home, match[1] ?? ""),
      ),
    ),
  ].sort();
  const byHash = new Map<string, string>();
  const hash = (token: string) => createHash("sha256").update(`Bearer ${token}`).digest("hex");
  for (const { token } of layout.tokens) byHash.set(hash(token), token);
  for (const name of ["keychain", "other"]) {
    byHash.set(hash(helperToken(name, layout.seed)), helperToken(name, layout.seed));
  }
  const calls = readLog(log);
  const hosts: Record<string, string[]> = {};
  for (const host of layout.hosts) {
    const request = requests.find((seen) => seen.host === host && seen.kind === "module-versions");
    if (request === undefined) {
      hosts[host] = ["never asked (see the output)"];
      continue;
    }
    const sha = request.authorizationSha256;
    const token = sha === undefined ? undefined : byHash.get(sha);
    if (sha === undefined) hosts[host] = ["none"];
    else if (token === undefined) hosts[host] = ["an unknown token"];
    else {
      const place = placeName(layout, token);
      const helper = /^helper (\w+)$/.exec(place)?.[1];
      if (helper === undefined) hosts[host] = [place];
      else {
        const call = calls.find((entry) => entry.name === helper && entry.args.at(-1) === host);
        hosts[host] = [
          `helper ${helper} ${JSON.stringify(call?.args.slice(0, -2) ?? "not logged")}`,
        ];
      }
    }
  }
  const invalid = [
    ...new Set(
      [
        ...section.matchAll(/The credentials ("(?:[^"\\]|\\.)*") block has an invalid hostname/g),
      ].map((match) => goUnquote(match[1] ?? "")),
    ),
  ].sort();
  return {
    panic: false,
    dropped,
    invalid,
    helpers: section.includes("No more than one credentials_helper") ? "several" : "one-or-none",
    hosts,
  };
}

function doctorVerdict(layout: RefereeLayout, home: string, report: ToolReport): Verdict {
  const relative = (file: string) => path.relative(home, file);
  const tokensAt = (file: string, label: string) =>
    layout.tokens
      .filter(
        ({ place }) =>
          place.kind === "file" && place.path === relative(file) && place.label === label,
      )
      .map(({ token }) => placeName(layout, token));
  const runs = (helper: HelperReport) => `helper ${helper.name} ${JSON.stringify(helper.args)}`;
  const choice = report.helperChoice;
  // Several labels: each run takes one, and runs its plugin or, without one, nothing.
  const helper =
    choice.kind === "runs"
      ? [runs(choice.helper)]
      : choice.kind === "random"
        ? [
            ...new Set(
              choice.outcomes.map((outcome) =>
                outcome.plugin === null ? "none" : runs(outcome.helper),
              ),
            ),
          ]
        : ["none"];
  const hosts: Record<string, string[]> = {};
  for (const host of layout.hosts) {
    const seen = report.hosts.find((entry) => entry.host === host);
    if (seen === undefined || seen.from === "helper") hosts[host] = helper;
    else if (seen.from === "variable") hosts[host] = [`variable ${seen.variable}`];
    else if (seen.from === "nothing") hosts[host] = ["none"];
    else if (seen.from === "file") hosts[host] = [...new Set(tokensAt(seen.file, seen.label))];
    else {
      hosts[host] = [
        ...new Set([...seen.entries.flatMap(({ file, label }) => tokensAt(file, label)), "none"]),
      ];
    }
  }
  return {
    panic: report.panic !== null,
    // A file this helper cannot read as Terraform does counts as one it says nothing of.
    dropped: report.files
      .filter(({ dropped, unreadable }) => dropped !== null || unreadable !== null)
      .map(({ file }) => relative(file))
      .sort(),
    invalid: [...new Set(report.ignored.map(({ label }) => label))].sort(),
    helpers: report.helpers.length > 1 ? "several" : "one-or-none",
    hosts,
  };
}

/** Where the verdicts differ, one line each. */
function compare(theirs: Verdict, ours: Verdict): string[] {
  if (theirs.panic || ours.panic) {
    return theirs.panic === ours.panic
      ? []
      : [
          `crash: terraform ${theirs.panic ? "crashes" : "does not crash"}, doctor ${ours.panic ? "says it does" : "does not say so"}`,
        ];
  }
  const lines: string[] = [];
  if (JSON.stringify(theirs.dropped) !== JSON.stringify(ours.dropped)) {
    lines.push(
      `dropped files: terraform ${JSON.stringify(theirs.dropped)}, doctor ${JSON.stringify(ours.dropped)}`,
    );
  }
  if (JSON.stringify(theirs.invalid) !== JSON.stringify(ours.invalid)) {
    lines.push(
      `invalid host names: terraform ${JSON.stringify(theirs.invalid)}, doctor ${JSON.stringify(ours.invalid)}`,
    );
  }
  if (theirs.helpers !== ours.helpers) {
    lines.push(`credentials_helper labels: terraform ${theirs.helpers}, doctor ${ours.helpers}`);
  }
  for (const [host, [sent = "none"] = []] of Object.entries(theirs.hosts)) {
    const expected = ours.hosts[host] ?? [];
    // Several labels of one host, or several helpers: Terraform picks one at random.
    if (!expected.includes(sent)) {
      lines.push(
        `${host}: terraform sends ${sent}; doctor says ${expected.join(" or ") || "nothing"}`,
      );
    }
  }
  return lines;
}

function report(layout: RefereeLayout, what: string, theirs?: Verdict, ours?: Verdict): string {
  const files = layout.files.map((file) => `--- ~/${file.path}\n${visible(file.text)}`).join("\n");
  const env = Object.entries(layout.env)
    .map(([name, value]) => `${name}=${value}`)
    .join(" ");
  const plugins = layout.plugins.map(({ name, dir }) => `~/${dir}/terraform-credentials-${name}`);
  return [
    `REFEREE_SEED=${layout.seed}: ${what}`,
    `env: ${env || "(none)"}; plugins: ${plugins.join(", ") || "(none)"}`,
    files,
    ...(theirs === undefined ? [] : [`terraform: ${JSON.stringify(theirs)}`]),
    ...(ours === undefined ? [] : [`doctor:    ${JSON.stringify(ours)}`]),
  ].join("\n");
}

/** A file's text as printed: control, private-use and invisible characters escaped. */
function visible(text: string): string {
  return text.replace(/[\p{Cc}\p{Co}\u00ad]/gu, (c) =>
    c === "\n" ? c : `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}

/** Writes the layout's files and its recording helpers under `home`. */
function build(home: string, layout: RefereeLayout, log: string): void {
  mkdirSync(path.join(home, ".terraform.d"), { recursive: true, mode: 0o700 });
  for (const file of layout.files) {
    const target = path.join(home, file.path);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, file.text, { mode: 0o600 });
  }
  for (const { name, dir } of layout.plugins) {
    mkdirSync(path.join(home, dir), { recursive: true });
    const script = path.join(home, dir, `terraform-credentials-${name}`);
    // Logs its args (separated by US), then answers `get` with this helper's token.
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        `{ printf '%s' ${name}; for a in "$@"; do printf '\\037%s' "$a"; done; printf '\\n'; } >> '${log}'`,
        `printf '{"token":"%s"}\\n' '${helperToken(name, layout.seed)}'`,
        "",
      ].join("\n"),
    );
    chmodSync(script, 0o755);
  }
}

function readLog(log: string): Array<{ name: string; args: string[] }> {
  let text: string;
  try {
    text = readFileSync(log, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [name = "", ...args] = line.split("\u001f");
      return { name, args };
    });
}

/** A root module with one registry module from each host. */
function configuration(layout: RefereeLayout, version: string): string {
  return layout.hosts
    .map(
      (host, index) =>
        `module "m${index}" {\n  source  = "${host}/acme/hello/null"\n  version = "${version}"\n}\n`,
    )
    .join("\n");
}

function seedsToRun(env: NodeJS.ProcessEnv): number[] {
  const one = env.REFEREE_SEED;
  if (one !== undefined && one !== "") return [Number.parseInt(one, 10)];
  const count = Number.parseInt(env.REFEREE_LAYOUTS ?? "200", 10);
  const base = Number.parseInt(env.REFEREE_BASE ?? "1", 10);
  return Array.from({ length: count }, (_, i) => base + i);
}

function describeSeeds(seeds: readonly number[]): string {
  return seeds.length === 1 ? String(seeds[0]) : `${seeds[0]}..${seeds.at(-1)}`;
}
