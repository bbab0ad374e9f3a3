/**
 * `npm run bench`: whole-process latency of the built helper against two anchors on the
 * same private gnome-keyring: `secret-tool` (lookup/store/clear, libsecret's own CLI) and
 * `docker-credential-secretservice` (get/store/erase, the Go helper Docker ships). Each
 * round runs the three in a rotating order, and the figures are medians of the per-round
 * ratios. Also a bare Bun start as the floor, sizes, and what the kernel does for each verb:
 * its minor page faults and peak RSS, each against an empty program that the same Bun
 * compiles with the same flags here, so that the ratios mean the same at any hour and on any
 * machine (a fault is dear where a VM is busy; counts repeat within a few faults).
 *   npm run bench [-- --rounds 30]
 *
 * `--against OTHER` compares the built helper with another build of it instead: four fresh
 * copies, OTHER, the build, OTHER again and the build again, made one after another just
 * before the timing, each round in a rotating order. A binary's age in the page cache alone
 * changes its time on some machines (docs/speed.md), so only copies made together compare;
 * the second copy of OTHER against the first shows the noise.
 *   npm run bench -- --against /tmp/old-build [--rounds 150]
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { requireBuiltHelper } from "../test/support/helper-process.ts";
import { startKeyringSession } from "../test/support/keyring-session.ts";
import { packageDir, packageVersion, ROOT } from "./packages.ts";
import { hostTarget, TARGETS } from "./targets.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "30" }, against: { type: "string" } },
});
const rounds = Number(values.rounds);
const helper = requireBuiltHelper();
const SERVICE = "bench";
const HOST = "app.terraform.io";
const SECRET = `bench-${"x".repeat(90)}`;
const OBJECT = JSON.stringify({ token: SECRET });
const DOCKER = "docker-credential-secretservice";
const DOCKER_URL = `https://${HOST}`;
/** Issue 37's targets: the largest median ratio to each anchor, per verb. */
const TARGETS_OF: Readonly<Record<string, Readonly<Record<string, number>> | undefined>> = {
  get: { "secret-tool": 1.2, [DOCKER]: 0.92 },
  store: { "secret-tool": 1.25 },
  forget: { "secret-tool": 1.5 },
};
/** Issue 45's targets: minor faults and peak RSS of each verb, as multiples of the empty program's. */
const KERNEL_TARGET = 1.5;
/** Runs of each verb under /usr/bin/time: faults and RSS barely vary, so a median of a few. */
const KERNEL_RUNS = 5;

const session = await startKeyringSession();
const env = session.env;
// Nothing in the repository's directory (its package.json, tsconfig.json) for any of them.
const cwd = mkdtempSync(path.join(os.tmpdir(), "tfck-bench-"));

// Terraform gives a helper pipes for stdout and stderr (Go's os.Pipe), and so does the bench,
// to all three alike: Node's own are sockets, which the helper writes another way.
const PIPES = ["stdout", "stderr"].map((name) => {
  const fifo = path.join(cwd, name);
  execFileSync("mkfifo", [fifo]);
  return fifo;
});

function timed(command: string, args: string[], input?: string): number {
  const readEnds = PIPES.map((fifo) => openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
  const writeEnds = PIPES.map((fifo) => openSync(fifo, constants.O_WRONLY));
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, {
    env,
    cwd,
    input,
    stdio: [input === undefined ? "ignore" : "pipe", writeEnds[0], writeEnds[1]],
  });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  writeEnds.forEach((fd) => closeSync(fd));
  const [, stderr = ""] = readEnds.map((fd) => {
    const text = drained(fd);
    closeSync(fd);
    return text;
  });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed: ${stderr}`);
  }
  return elapsed;
}

/** What is in the pipe of read end `fd`, its writers closed. */
function drained(fd: number): string {
  const buffer = Buffer.alloc(65536);
  let text = "";
  for (let count = readSync(fd, buffer); count > 0; count = readSync(fd, buffer)) {
    text += buffer.toString("utf8", 0, count);
  }
  return text;
}

type Verb = "get" | "store" | "forget";
type Tool = () => number;
const attributes = ["service", "secret-tool-bench", "username", HOST];
const dockerEntry = JSON.stringify({ ServerURL: DOCKER_URL, Username: "bench", Secret: SECRET });
/** A build's three verbs on the entry of `service` (one entry per tool: a forget deletes one). */
const helperTools = (binary: string, service = SERVICE): Record<Verb, Tool> => ({
  get: () => timed(binary, ["--service", service, "get", HOST]),
  store: () => timed(binary, ["--service", service, "store", HOST], OBJECT),
  forget: () => timed(binary, ["--service", service, "forget", HOST]),
});
const anchorTools: Record<string, Record<Verb, Tool>> = {
  helper: helperTools(helper),
  // On its own entry in the same collection, with the same size of secret.
  "secret-tool": {
    get: () => timed("secret-tool", ["lookup", ...attributes]),
    store: () => timed("secret-tool", ["store", "--label=bench", ...attributes], OBJECT),
    forget: () => timed("secret-tool", ["clear", ...attributes]),
  },
  [DOCKER]: {
    get: () => timed(DOCKER, ["get"], DOCKER_URL),
    store: () => timed(DOCKER, ["store"], dockerEntry),
    forget: () => timed(DOCKER, ["erase"], DOCKER_URL),
  },
};
const tools = values.against === undefined ? anchorTools : pairedCopies(values.against);
const names = Object.keys(tools);

// The floor: the binary's own Bun runtime starting and doing nothing, which every call pays
// before any of the helper's code runs (cached by npm run build).
const host = TARGETS[hostTarget()];
const bareBun = path.join(
  packageDir(host.bunPackage, packageVersion(path.join(ROOT, "node_modules/bun"))),
  host.bunBinary,
);

const times: Record<string, Record<string, number[]>> = {};
try {
  // Warm-up: the page cache holds every binary before the first timing.
  for (const name of names) tools[name]!.store();
  for (const verb of ["get", "store", "forget"] as const) {
    times[verb] = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      // Something to delete each time, written outside the timing.
      if (verb === "forget") for (const name of names) tools[name]!.store();
      const order = names.map((_, i) => names[(i + round) % names.length]!);
      for (const name of order) times[verb][name]!.push(tools[name]![verb]());
    }
  }
  if (values.against !== undefined) {
    reportPairs();
  } else {
    anchorsAndSizes();
  }
} finally {
  await session.close();
  rmSync(cwd, { recursive: true, force: true });
}

/** The copies `--against` times: `other` and the build, twice each, fresh from one moment. */
function pairedCopies(other: string): Record<string, Record<Verb, Tool>> {
  const copies: Record<string, Record<Verb, Tool>> = {};
  for (const [name, source] of [
    ["other", other],
    ["built", helper],
    ["other again", other],
    ["built again", helper],
  ] as const) {
    const slug = name.replace(" ", "-");
    const copy = path.join(cwd, slug);
    copyFileSync(source, copy);
    chmodSync(copy, 0o755);
    copies[name] = helperTools(copy, `${SERVICE}-${slug}`);
  }
  return copies;
}

function reportPairs(): void {
  console.log(
    `${rounds} rounds per verb, order rotated; each copy against the first copy of ${values.against ?? ""}: median of the per-round ratios (p10-p90)`,
  );
  console.log("");
  console.log("| verb | copy | ms | ratio |");
  console.log("| ---- | ---- | -- | ----- |");
  for (const [verb, byCopy] of Object.entries(times)) {
    const reference = byCopy[names[0]!]!;
    for (const name of names) {
      const ratios = byCopy[name]!.map((value, i) => value / reference[i]!);
      console.log(
        `| ${verb} | ${name} | ${quantile(byCopy[name]!, 0.5).toFixed(2)} | ${quantile(ratios, 0.5).toFixed(3)}x (${quantile(ratios, 0.1).toFixed(2)}-${quantile(ratios, 0.9).toFixed(2)}) |`,
      );
    }
  }
}

function anchorsAndSizes(): void {
  if (existsSync(bareBun)) {
    tools["secret-tool"]!.store();
    times["bun -e 0"] = { helper: [], "secret-tool": [] };
    for (let round = 0; round < rounds; round++) {
      const measures = [
        () => times["bun -e 0"]!.helper!.push(timed(bareBun, ["-e", "0"])),
        () => times["bun -e 0"]!["secret-tool"]!.push(tools["secret-tool"]!.get()),
      ];
      for (const measure of round % 2 === 0 ? measures : measures.reverse()) measure();
    }
  }
  report(kernelCosts());
}

interface KernelCost {
  readonly faults: number;
  readonly rssMiB: number;
}

/**
 * Median minor faults and peak RSS of each verb of the helper, of the anchors' get, and of an
 * empty program compiled by the same Bun with the build's flags, all with the bench's pipes.
 */
function kernelCosts(): Record<string, KernelCost> {
  const empty = compiled("empty", "");
  const floor = compiled("floor", readFileSync(path.join(ROOT, "scripts/bench-floor.ts"), "utf8"));
  const measure = (command: string[], input?: string, before?: () => void): KernelCost => {
    const runs: KernelCost[] = [];
    for (let run = 0; run < KERNEL_RUNS; run++) {
      before?.();
      runs.push(underTime(command, input));
    }
    return {
      faults: quantile(
        runs.map((cost) => cost.faults),
        0.5,
      ),
      rssMiB: quantile(
        runs.map((cost) => cost.rssMiB),
        0.5,
      ),
    };
  };
  const store = () => tools.helper!.store();
  tools[DOCKER]!.store();
  tools["secret-tool"]!.store();
  return {
    empty: measure([empty]),
    "Bun's floor of a get": measure([floor]),
    get: measure([helper, "--service", SERVICE, "get", HOST], undefined, store),
    store: measure([helper, "--service", SERVICE, "store", HOST], OBJECT),
    forget: measure([helper, "--service", SERVICE, "forget", HOST], undefined, store),
    "secret-tool lookup": measure(["secret-tool", "lookup", ...attributes]),
    [`${DOCKER} get`]: measure([DOCKER, "get"], DOCKER_URL),
  };
}

/** A program of `source`, compiled as scripts/build.ts compiles the helper, by the same Bun. */
function compiled(name: string, source: string): string {
  const entry = path.join(cwd, `${name}.ts`);
  const program = path.join(cwd, name);
  writeFileSync(entry, source);
  execFileSync(
    bareBun,
    [
      "build",
      entry,
      "--compile",
      `--compile-executable-path=${bareBun}`,
      `--outfile=${program}`,
      "--minify",
      "--bytecode",
      "--format=esm",
      "--compile-jit-policy=1000",
    ],
    { cwd, stdio: ["ignore", "ignore", "inherit"] },
  );
  return program;
}

/** GNU time's minor faults and peak RSS of `command`, with the bench's pipes as stdout and stderr. */
function underTime(command: string[], input?: string): KernelCost {
  // GNU time's figures go to a file: the command's stdout and stderr are the bench's pipes.
  const report = path.join(cwd, "time");
  timed("/usr/bin/time", ["-o", report, "-f", "%R %M", ...command], input);
  const [faults = NaN, kib = NaN] = readFileSync(report, "utf8")
    .trim()
    .split("\n")
    .at(-1)!
    .split(" ")
    .map(Number);
  return { faults, rssMiB: kib / 1024 };
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

function report(kernel: Record<string, KernelCost>): void {
  const ms = (values: readonly number[]) =>
    `${quantile(values, 0.5).toFixed(1)} (${quantile(values, 0.1).toFixed(1)}-${quantile(values, 0.9).toFixed(1)})`;
  console.log(
    `Bun ${packageVersion(path.join(ROOT, "node_modules/bun"))} ${host.bunPackage}; node ${process.version} harness; ${rounds} rounds per verb, order rotated; ms as median (p10-p90)`,
  );
  console.log("");
  console.log("| verb | helper ms | anchor | anchor ms | ratio median (p10-p90) | target |");
  console.log("| ---- | --------- | ------ | --------- | ---------------------- | ------ |");
  for (const [verb, byTool] of Object.entries(times)) {
    const ours = byTool.helper!;
    for (const anchor of names.slice(1)) {
      const theirs = byTool[anchor];
      if (theirs === undefined) continue;
      const ratios = ours.map((value, i) => value / theirs[i]!);
      const median = quantile(ratios, 0.5);
      const limit = TARGETS_OF[verb]?.[anchor];
      const target =
        limit === undefined ? "-" : `${median <= limit ? "met" : "MISSED"} (<= ${limit}x)`;
      console.log(
        `| ${verb} | ${ms(ours)} | ${anchor} | ${ms(theirs)} | ${median.toFixed(2)}x (${quantile(ratios, 0.1).toFixed(2)}-${quantile(ratios, 0.9).toFixed(2)}) | ${target} |`,
      );
    }
  }
  const empty = kernel.empty!;
  console.log("");
  console.log(
    `| program | minor faults | x empty | peak RSS MiB | x empty | target (each <= ${KERNEL_TARGET}x) |`,
  );
  console.log("| ------- | ------------ | ------- | ------------ | ------- | ------ |");
  for (const [name, cost] of Object.entries(kernel)) {
    const faults = cost.faults / empty.faults;
    const rss = cost.rssMiB / empty.rssMiB;
    const ours = name === "get" || name === "store" || name === "forget";
    const label = name === "empty" ? "empty program (same Bun)" : ours ? `helper ${name}` : name;
    const target = !ours ? "-" : faults <= KERNEL_TARGET && rss <= KERNEL_TARGET ? "met" : "MISSED";
    console.log(
      `| ${label} | ${cost.faults} | ${faults.toFixed(2)}x | ${cost.rssMiB.toFixed(1)} | ${rss.toFixed(2)}x | ${target} |`,
    );
  }
  const binary = statSync(helper).size;
  console.log(`binary: ${(binary / 1e6).toFixed(1)} MB`);
  const release = path.join(ROOT, "release");
  const archives = existsSync(release)
    ? readdirSync(release).filter((name) => /\.(tar\.xz|zip)$/.test(name))
    : [];
  if (archives.length === 0) console.log("release archives: none yet (npm run release)");
  for (const name of archives.sort()) {
    console.log(
      `release archive ${name}: ${(statSync(path.join(release, name)).size / 1e6).toFixed(1)} MB`,
    );
  }
}
