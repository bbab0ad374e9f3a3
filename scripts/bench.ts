/**
 * `npm run bench`: whole-process latency of the built helper against secret-tool, on the
 * same private gnome-keyring, paired and alternated in one run (A B A B ...), plus the peak
 * RSS of a `get` and the sizes of the binary and its release archive.
 *   npm run bench [-- --pairs 30]
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { requireBuiltHelper } from "../test/support/helper-process.ts";
import { startKeyringSession } from "../test/support/keyring-session.ts";
import { packageDir, packageVersion } from "./packages.ts";
import { hostTarget, TARGETS } from "./targets.ts";

const { values } = parseArgs({ options: { pairs: { type: "string", default: "30" } } });
const pairs = Number(values.pairs);
const helper = requireBuiltHelper();
const SERVICE = "bench";
const HOST = "app.terraform.io";
const OBJECT = JSON.stringify({ token: `bench-${"x".repeat(90)}` });

const session = await startKeyringSession();
const env = session.env;

function timed(command: string, args: string[], input?: string): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, {
    env,
    input,
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr.toString()}`);
  return elapsed;
}

const ours = {
  get: () => timed(helper, ["--service", SERVICE, "get", HOST]),
  store: () => timed(helper, ["--service", SERVICE, "store", HOST], OBJECT),
  forget: () => timed(helper, ["--service", SERVICE, "forget", HOST]),
};
// secret-tool on its own entry in the same collection, with the same size of secret.
const attributes = ["service", "secret-tool-bench", "username", HOST];
const theirs = {
  get: () => timed("secret-tool", ["lookup", ...attributes]),
  store: () => timed("secret-tool", ["store", "--label=bench", ...attributes], OBJECT),
  forget: () => timed("secret-tool", ["clear", ...attributes]),
};

// The floor: the binary's own Bun runtime starting and doing nothing, which every call pays
// before any of the helper's code runs (cached by npm run build).
const host = TARGETS[hostTarget()];
const bareNode = path.join(
  packageDir(host.bunPackage, packageVersion("node_modules/bun")),
  host.bunBinary,
);

interface Row {
  readonly verb: string;
  readonly a: number[];
  readonly b: number[];
}
const rows: Row[] = [];
try {
  // Warm-up: unpack the addon into the cache, as any first run does once.
  ours.store();
  theirs.store();
  for (const verb of ["get", "store", "forget"] as const) {
    const row: Row = { verb, a: [], b: [] };
    for (let i = 0; i < pairs; i++) {
      if (verb === "forget") {
        // Something to delete each time, written outside the timing.
        ours.store();
        theirs.store();
      }
      const aFirst = i % 2 === 0;
      if (aFirst) {
        row.a.push(ours[verb]());
        row.b.push(theirs[verb]());
      } else {
        row.b.push(theirs[verb]());
        row.a.push(ours[verb]());
      }
    }
    rows.push(row);
  }
  if (existsSync(bareNode)) {
    theirs.store();
    const row: Row = { verb: "bun -e 0", a: [], b: [] };
    for (let i = 0; i < pairs; i++) {
      const measures = [
        () => row.a.push(timed(bareNode, ["-e", "0"])),
        () => row.b.push(theirs.get()),
      ];
      for (const measure of i % 2 === 0 ? measures : measures.reverse()) measure();
    }
    rows.push(row);
  }
  ours.store();
  const rss = peakRss([helper, "--service", SERVICE, "get", HOST]);
  const rssTheirs = peakRss(["secret-tool", "lookup", ...attributes]);
  report(rows, rss, rssTheirs);
} finally {
  await session.close();
}

function peakRss(command: string[]): number | undefined {
  if (!existsSync("/usr/bin/time")) return undefined;
  const result = spawnSync("/usr/bin/time", ["-f", "%M", ...command], { env, encoding: "utf8" });
  const kib = Number(result.stderr.trim().split("\n").at(-1));
  return Number.isFinite(kib) ? kib / 1024 : undefined;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

function report(rows: Row[], rss: number | undefined, rssTheirs: number | undefined): void {
  const ms = (n: number) => n.toFixed(1).padStart(6);
  console.log(
    `node ${process.version} harness; ${pairs} alternating pairs per verb; times in ms (median, p10-p90)`,
  );
  console.log("");
  console.log(
    "| verb   | helper median | helper p10-p90 | secret-tool median | secret-tool p10-p90 | ratio median (p10-p90) | target |",
  );
  console.log(
    "| ------ | ------------- | -------------- | ------------------ | ------------------- | ---------------------- | ------ |",
  );
  for (const { verb, a, b } of rows) {
    const ratios = a.map((value, i) => value / b[i]!);
    const median = quantile(ratios, 0.5);
    const target = verb === "bun -e 0" ? "floor, no target" : median <= 2.5 ? "met" : "MISSED";
    console.log(
      `| ${verb.padEnd(6)} | ${ms(quantile(a, 0.5))}        | ${ms(quantile(a, 0.1))}-${ms(quantile(a, 0.9)).trim()}  | ${ms(quantile(b, 0.5))}             | ${ms(quantile(b, 0.1))}-${ms(quantile(b, 0.9)).trim()}       | ${median.toFixed(2)}x (${quantile(ratios, 0.1).toFixed(2)}-${quantile(ratios, 0.9).toFixed(2)}) | ${target} (<= 2.5x) |`,
    );
  }
  const binary = statSync(helper).size;
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  console.log("");
  console.log(
    `peak RSS of get: ${rss === undefined ? "n/a (apt-get install time)" : `${rss.toFixed(1)} MiB`} (secret-tool lookup: ${rssTheirs === undefined ? "n/a" : `${rssTheirs.toFixed(1)} MiB`}); target <= 60 MiB`,
  );
  console.log(`binary: ${mib(binary)} = ${(binary / 1e6).toFixed(1)} MB (target <= 100 MB)`);
  const archives = existsSync("release")
    ? readdirSync("release").filter((name) => /\.(tar\.xz|zip)$/.test(name))
    : [];
  if (archives.length === 0) console.log("release archives: none yet (npm run release)");
  for (const name of archives.sort()) {
    const size = statSync(path.join("release", name)).size;
    console.log(
      `release archive ${name}: ${mib(size)} = ${(size / 1e6).toFixed(1)} MB (target <= 35 MB)`,
    );
  }
}
