/**
 * `npm run release`: builds every target and puts each binary in an archive under
 * release/, with a SHA256SUMS file: tar.xz for Linux and macOS (the run bit kept), zip for
 * Windows. The macOS binaries carry what the build leaves (an ad hoc signature on arm64,
 * none on x64); the GitHub workflow re-signs them on a Mac where an identity is configured.
 * Each archive holds the binary, LICENSE and a short README (packaging/archive-README.md).
 * Then the npm packages, Homebrew formula and Scoop manifest (scripts/write-channels.ts).
 *   npm run release [-- --target linux-x64 --target win-x64 --os linux --out DIR --release-url URL --quick]
 * --os keeps the targets of these OSes only (CI's Linux job: linux and win32; the Macs do darwin).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { packageVersion, ROOT } from "./packages.ts";
import { hostTarget, TARGET_NAMES, TARGETS } from "./targets.ts";
import type { Target, TargetName } from "./targets.ts";
import { releaseUrl } from "./project-home.ts";
import { archiveReadme, countOf } from "./channels.ts";
import type { ReleaseArchive } from "./channels.ts";
import { writeChannels } from "./write-channels.ts";

const root = ROOT;
/** Lists what a release wrote into its --out directory. */
const OWN_FILES = ".release-files";
const { values } = parseArgs({
  options: {
    target: { type: "string", multiple: true },
    os: { type: "string", multiple: true },
    out: { type: "string" },
    "release-url": { type: "string" },
    // xz -1 instead of -9: for tests, which check what an archive holds, not its size.
    quick: { type: "boolean", default: false },
  },
});
const targets = (values.target ?? [...TARGET_NAMES])
  .filter((name) => {
    const target = (TARGETS as Readonly<Record<string, Target | undefined>>)[name];
    // An unknown name stays, for the loop below to refuse.
    return values.os === undefined || target === undefined || values.os.includes(target.os);
  })
  // This machine's target first: its build's profiling run lays out every target's bytecode.
  .sort((a, b) => Number(b === hostTarget()) - Number(a === hostTarget()));
const version = packageVersion(root);
const out = path.resolve(values.out ?? path.join(root, "release"));
// Before anything is built (a full release takes minutes): the tools the archives need.
const missing = missingTools(targets);
if (missing.length > 0) {
  refuse(
    `release: ${missing.map(({ tool }) => tool).join(", ")} not found on PATH: sudo apt-get install ${[...new Set(missing.map(({ apt }) => apt))].join(" ")}`,
  );
}
clearOwnFiles(out, values.out === undefined);
mkdirSync(out, { recursive: true });

const readme = archiveReadme(
  readFileSync(path.join(root, "packaging/archive-README.md"), "utf8"),
  version,
);
const sums: string[] = [];
const archives: ReleaseArchive[] = [];
for (const name of targets) {
  const target = TARGETS[name as keyof typeof TARGETS] as
    (typeof TARGETS)[keyof typeof TARGETS] | undefined;
  if (target === undefined)
    throw new Error(`unknown target ${name}: one of ${TARGET_NAMES.join(", ")}`);
  execFileSync("npx", ["tsx", "scripts/build.ts", "--target", name], {
    cwd: root,
    stdio: "inherit",
  });
  const binaryName = `terraform-credentials-keychain${target.exeSuffix}`;
  const staging = path.join(out, `terraform-credentials-keychain_${version}_${name}`);
  mkdirSync(staging);
  copyFileSync(path.join(root, "dist", name, binaryName), path.join(staging, binaryName));
  writeFileSync(path.join(staging, "README.md"), readme);
  copyFileSync(path.join(root, "LICENSE"), path.join(staging, "LICENSE"));
  const files = [binaryName, "LICENSE", "README.md"];
  const archive = target.os === "win32" ? zip(staging, files) : tarXz(staging, files);
  rmSync(staging, { recursive: true });
  const digest = createHash("sha256").update(readFileSync(archive)).digest("hex");
  sums.push(`${digest}  ${path.basename(archive)}`);
  archives.push({ target: name as TargetName, file: path.basename(archive), sha256: digest });
  console.log(
    `${path.relative(root, archive)}: ${(statSync(archive).size / 1024 / 1024).toFixed(1)} MiB`,
  );
}
writeFileSync(path.join(out, "SHA256SUMS"), `${sums.join("\n")}\n`);
console.log(`${path.relative(root, out)}/SHA256SUMS: ${countOf(sums.length, "archive")}`);
writeChannels(out, {
  root,
  version,
  archives,
  binaryOf: ({ target }) =>
    path.join(root, "dist", target, `terraform-credentials-keychain${TARGETS[target].exeSuffix}`),
  baseUrl: values["release-url"] ?? releaseUrl(version),
});
// What this run wrote, so that the next one replaces it and nothing else.
const written = readdirSync(out).filter((name) => name !== OWN_FILES);
writeFileSync(path.join(out, OWN_FILES), `${written.join("\n")}\n`);

function tarXz(dir: string, files: string[]): string {
  const archive = `${dir}.tar.xz`;
  // xz -9 takes a Bun binary to ~35% of its size, well below gzip -9 (the target: <= 45 MB).
  execFileSync("tar", ["-cJf", archive, "--owner=0", "--group=0", "-C", dir, ...files], {
    env: { ...process.env, XZ_OPT: `${values.quick ? "-1" : "-9"} -T0` },
  });
  return archive;
}

function zip(dir: string, files: string[]): string {
  const archive = `${dir}.zip`;
  try {
    execFileSync("zip", ["-q", "-9", "-X", archive, ...files], { cwd: dir });
    // Recompressed with 7-Zip's deflate: still plain deflate that every unzip (Explorer's
    // included) reads, and smaller than zip -9.
    execFileSync("advzip", ["--quiet", "--recompress", "-3", archive]);
  } catch (error) {
    throw new Error(`zip failed (apt-get install zip advancecomp): ${(error as Error).message}`);
  }
  return archive;
}

function refuse(message: string): never {
  console.error(message);
  process.exit(1);
}

/**
 * Makes room in `dir` for a release: release/ (the default) is the project's own and is
 * emptied; another directory must be new, empty, or one a release wrote before, and then
 * only what that release listed goes (another file in it stays).
 */
function clearOwnFiles(dir: string, isDefault: boolean): void {
  if (!existsSync(dir)) return;
  if (isDefault) {
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (error) {
    refuse(`release: --out ${dir} is not a directory it can use (${(error as Error).message})`);
  }
  if (entries.length === 0) return;
  if (!entries.includes(OWN_FILES)) {
    refuse(
      `release: --out ${dir} is not empty and no release wrote it: choose a new or empty directory (nothing was changed)`,
    );
  }
  const own = readFileSync(path.join(dir, OWN_FILES), "utf8")
    .split("\n")
    .filter((name) => name !== "" && !name.includes("/") && name !== "." && name !== "..");
  for (const name of [...own, OWN_FILES])
    rmSync(path.join(dir, name), { recursive: true, force: true });
}

/** The programs the archives of `targets` need that PATH does not have, with their apt package. */
function missingTools(names: readonly string[]): { tool: string; apt: string }[] {
  const oses = new Set(
    names.map((name) => (TARGETS as Readonly<Record<string, Target | undefined>>)[name]?.os),
  );
  const needed = [
    ...([...oses].some((os) => os !== undefined && os !== "win32")
      ? [
          { tool: "tar", apt: "tar" },
          { tool: "xz", apt: "xz-utils" },
        ]
      : []),
    ...(oses.has("win32")
      ? [
          { tool: "zip", apt: "zip" },
          { tool: "advzip", apt: "advancecomp" },
        ]
      : []),
  ];
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((dir) => dir !== "");
  return needed.filter(
    ({ tool }) =>
      !dirs.some((dir) => {
        try {
          accessSync(path.join(dir, tool), constants.X_OK);
          return true;
        } catch {
          return false;
        }
      }),
  );
}
