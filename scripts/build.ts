/**
 * Builds the single executable: `npm run build [-- --target <os>-<arch>]`.
 *
 * `bun build --compile` bundles src/main.ts, compiles it to bytecode and appends it to a
 * copy of the target's Bun runtime: dist/<target>/terraform-credentials-keychain[.exe];
 * the host's target is also copied to dist/terraform-credentials-keychain. Bun itself is a
 * pinned devDependency; the target's runtime and its @napi-rs/keyring addon are fetched
 * from the npm registry (`npm pack`, cached under build/cache), so any target builds here
 * and Bun never downloads anything. On macOS the addon is embedded as a file (`--asset`)
 * that src/stores/macos-keychain/load-keyring.ts writes once into a private cache and dlopens; Linux and
 * Windows binaries have none (src/stores/secret-service/ speaks D-Bus itself, and
 * src/stores/credential-manager/ calls advapi32 through Bun's FFI).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { KEYRING_ASSET } from "../src/stores/macos-keychain/embedded-addon.ts";
import { checkSignature, isValidSignature, parseMachO, withoutSignature } from "./macho.ts";
import { PACKAGE_CACHE, packageDir, packageVersion, ROOT } from "./packages.ts";
import { hostTarget, TARGET_NAMES, TARGETS } from "./targets.ts";
import { onPath } from "../test/support/find-command.ts";
import { KEYRING_PACKAGES, startKeyringSession } from "../test/support/keyring-session.ts";

const root = ROOT;
const distDir = path.join(root, "dist");

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

const version = packageVersion(root);
const bunVersion = packageVersion(path.join(root, "node_modules/bun"));
const work = path.join(root, "build", targetName);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

// macOS embeds the keychain addon as a file (`--asset` takes a path relative to the working
// directory); Linux and Windows binaries embed no native code.
let addonArgs: string[] = [];
if (target.keyring !== undefined) {
  const addon = path.join(
    fetchPackage(
      target.keyring.package,
      packageVersion(path.join(root, "node_modules/@napi-rs/keyring")),
    ),
    target.keyring.file,
  );
  copyFileSync(addon, path.join(work, KEYRING_ASSET));
  const addonSha256 = createHash("sha256").update(readFileSync(addon)).digest("hex");
  addonArgs = [
    `--asset=${KEYRING_ASSET}`,
    `--define=__TFCK_KEYRING_SHA256__=${JSON.stringify(addonSha256)}`,
  ];
}
const runtime = path.join(fetchPackage(target.bunPackage, bunVersion), target.bunBinary);

/** Where the profiling run of the host's build leaves its order files, for every target. */
const ORDER_DIR = path.join(root, "build", "bytecode-order");
/** The verbs whose run lays the bytecode out, most important first. */
const PROFILED = ["get", "store", "forget"] as const;

const outDir = path.join(distDir, targetName);
mkdirSync(outDir, { recursive: true });
const executable = path.join(outDir, `terraform-credentials-keychain${target.exeSuffix}`);
rmSync(executable, { force: true });
compile([]);
// The profiling run speaks to a private Secret Service: only a Linux build does that (a
// macOS build would write into the login Keychain). Other targets take its order.
const order =
  targetName === host && target.os === "linux" ? await profileOrder(executable) : savedOrder();
if (order.length > 0) compile(order);
// The executable carries its source map; the copies Bun also writes beside it would only
// end up in the release archives.
for (const name of readdirSync(outDir)) {
  if (name.endsWith(".map")) rmSync(path.join(outDir, name));
}
if (target.os === "darwin") signForMacOs(executable);
if (targetName === host) {
  copyFileSync(executable, path.join(distDir, `terraform-credentials-keychain${target.exeSuffix}`));
}
console.log(
  `built ${path.relative(root, executable)} (${targetName}, Bun ${bunVersion} ${target.bunPackage}, ${(statSync(executable).size / 1e6).toFixed(0)} MB)`,
);

/**
 * Compiles the executable; `order` lays its bytecode out by the order files a profiling run
 * wrote (see profileOrder), so that what a protocol verb runs sits together.
 */
function compile(order: readonly string[]): void {
  execFileSync(
    bunExecutable(),
    [
      "build",
      path.join(root, "src/main.ts"),
      // The deadline's watchdog thread (Windows), a second entry point that the bundle loads
      // with `new Worker(new URL(...))`.
      path.join(root, "src/system/deadline-watchdog-worker.ts"),
      "--compile",
      `--target=${target.bunTarget}`,
      `--compile-executable-path=${runtime}`,
      `--outfile=${executable}`,
      "--minify",
      "--bytecode",
      // ESM with splitting: each dynamic import() is a chunk of its own, so a protocol verb
      // never evaluates, nor pages in, commander and the commands for people (src/cli/run.ts
      // loads them only for other command lines), nor another platform's store. CommonJS, or
      // ESM in one chunk, costs every call for all of it (docs/speed.md).
      "--format=esm",
      "--splitting",
      ...(order.length === 0 ? [] : [`--bytecode-order=${order.join(",")}`]),
      // Debug traces (TF_CREDENTIALS_KEYCHAIN_DEBUG=1) name src/ files and lines, not the
      // minified bundle's /$bunfs/root/...:76:2802.
      "--sourcemap=linked",
      // A call lives ~15 ms: compiling hot code (the Diffie-Hellman loop, the wire codec) costs
      // more than it saves. A tier-up threshold 1000 times the default keeps nearly everything in
      // the interpreter: measured here, a get took 15.2 ms instead of 19.5 ms and 42.6 MiB
      // instead of 46.9 MiB (docs/speed.md). exec over many hosts still tiers up where it pays.
      "--compile-jit-policy=1000",
      // Terraform runs the helper in the user's project directory, which may be an untrusted
      // clone: nothing there may change what runs (a bunfig.toml `preload` would run its code
      // inside the helper, beside every token).
      "--no-compile-autoload-dotenv",
      "--no-compile-autoload-bunfig",
      "--no-compile-autoload-tsconfig",
      "--no-compile-autoload-package-json",
      // Loaded from the embedded copy (stores/macos-keychain/load-keyring.ts), never bundled.
      "--external=@napi-rs/keyring",
      ...addonArgs,
      `--define=__TFCK_VERSION__=${JSON.stringify(version)}`,
      `--define=__TFCK_TARGET__=${JSON.stringify(targetName)}`,
    ],
    // Bun's progress lines are noise; its errors go to stderr.
    { cwd: work, stdio: ["ignore", "ignore", "inherit"] },
  );
}

/**
 * Runs `store`, `get` and `forget` of the freshly built `executable` in a private D-Bus
 * session with its own gnome-keyring (test/support/keyring-session.ts), each writing the
 * order in which its functions ran (BUN_BYTECODE_ORDER_OUT: hashes, no data), and returns
 * the order files, `get` first: Terraform runs it most. Without gnome-keyring here (a
 * machine that has only Node, a Mac), the build goes without and says so.
 */
async function profileOrder(executable: string): Promise<string[]> {
  rmSync(ORDER_DIR, { recursive: true, force: true });
  if (onPath("gnome-keyring-daemon") === undefined || onPath("dbus-daemon") === undefined) {
    console.log(
      `no gnome-keyring and dbus-daemon here: bytecode in build order (${KEYRING_PACKAGES} lay it out by a profiling run)`,
    );
    return [];
  }
  mkdirSync(ORDER_DIR, { recursive: true });
  const session = await startKeyringSession();
  try {
    for (const verb of ["store", "get", "forget"] as const) {
      execFileSync(executable, ["--service", "bytecode-order", verb, "profile.example.com"], {
        cwd: work,
        env: { ...session.env, BUN_BYTECODE_ORDER_OUT: path.join(ORDER_DIR, `${verb}.txt`) },
        input: verb === "store" ? '{"token":"profile-only"}' : "",
        stdio: ["pipe", "ignore", "inherit"],
      });
    }
  } finally {
    await session.close();
  }
  return PROFILED.map((verb) => path.join(ORDER_DIR, `${verb}.txt`));
}

/**
 * Another target's order files: those of the last profiled build here (Linux), which ran
 * the same protocol code; a function only this target has is laid out after them.
 */
function savedOrder(): string[] {
  const files = PROFILED.map((verb) => path.join(ORDER_DIR, `${verb}.txt`));
  if (files.every((file) => existsSync(file))) return files;
  console.log("no bytecode order from a Linux build here yet: bytecode in build order");
  return [];
}

/**
 * macOS kills an arm64 binary at exec unless its signature matches every page, and any
 * binary whose signature does not match. Bun signs darwin-arm64 ad hoc; darwin-x64 keeps
 * the runtime's signature over bytes Bun changed, so it is removed (Intel Macs run
 * unsigned binaries). A release identity re-signs either on a Mac (see README).
 */
function signForMacOs(file: string): void {
  const bytes = readFileSync(file);
  if (isValidSignature(checkSignature(bytes))) return;
  if (parseMachO(bytes).cpu === "arm64") {
    throw new Error(`${file}: Bun left no valid ad hoc signature, and arm64 needs one`);
  }
  writeFileSync(file, withoutSignature(bytes));
}

/**
 * The pinned Bun that compiles. Its npm package's postinstall puts the host's binary in
 * bun/bin; when install scripts did not run, the binary is still in the platform package.
 */
function bunExecutable(): string {
  const exe = process.platform === "win32" ? ".exe" : "";
  const installed = path.join(root, "node_modules/bun/bin/bun.exe");
  if (existsSync(installed) && statSync(installed).size > 1_000_000) return installed;
  const arch = process.arch === "arm64" ? "aarch64" : process.arch;
  const os = process.platform === "win32" ? "windows" : process.platform;
  const platformBinary = path.join(
    root,
    "node_modules/@oven",
    `bun-${os}-${arch}`,
    "bin",
    `bun${exe}`,
  );
  if (existsSync(platformBinary)) return platformBinary;
  throw new Error(`no Bun binary in node_modules: run "npm ci"`);
}

/** Unpacks `name@version` from the npm registry into the build cache, once. */
function fetchPackage(name: string, packageVersion: string): string {
  const dir = packageDir(name, packageVersion);
  if (existsSync(path.join(dir, "package.json"))) return dir;
  mkdirSync(PACKAGE_CACHE, { recursive: true });
  const tarball = execFileSync(
    "npm",
    ["pack", `${name}@${packageVersion}`, "--silent", "--pack-destination", PACKAGE_CACHE],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  )
    .trim()
    .split("\n")
    .at(-1);
  if (tarball === undefined) {
    throw new Error(`npm pack ${name}@${packageVersion} printed no file name`);
  }
  const unpack = `${dir}.partial`;
  rmSync(unpack, { recursive: true, force: true });
  mkdirSync(unpack, { recursive: true });
  execFileSync("tar", [
    "-xzf",
    path.join(PACKAGE_CACHE, tarball),
    "-C",
    unpack,
    "--strip-components=1",
  ]);
  rmSync(path.join(PACKAGE_CACHE, tarball));
  renameSync(unpack, dir);
  return dir;
}
