import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { isSingleExecutable } from "../../system/build-info.ts";
import { writeFileAtomically } from "../../system/files.ts";
import type * as KeyringModule from "@napi-rs/keyring";
import { embeddedAddon, type EmbeddedFile } from "./embedded-addon.ts";

/** The native keychain binding, as `@napi-rs/keyring` exports it. */
export type KeyringBinding = typeof KeyringModule;

/**
 * Loads the keychain addon. From source it is `@napi-rs/keyring` in node_modules. The
 * single executable embeds it (embedded-addon.ts), and dlopen cannot load a file
 * inside the binary, so the addon is written once to a private per-user cache (`cacheDir`)
 * under a name that is its SHA-256 (computed by the build), and `process.dlopen`ed from
 * there.
 */
export function loadKeyring(cacheDir: string, expectedSha256: string | undefined): KeyringBinding {
  if (isSingleExecutable()) {
    if (expectedSha256 === undefined) throw new Error("this build embeds no keychain addon");
    return loadFromCache(embeddedAddon(), cacheDir, expectedSha256);
  }
  return createRequire(import.meta.url)("@napi-rs/keyring") as KeyringBinding;
}

/**
 * Writes `embedded` once to `cacheDir` under its SHA-256 and dlopens that copy: the
 * runtime-independent half of loading the addon.
 */
function loadFromCache(embedded: EmbeddedFile, cacheDir: string, sha256: string): KeyringBinding {
  const file = path.join(cacheDir, `keyring-${sha256}.node`);
  ensurePrivateDirectory(cacheDir);
  // Processes that start at once each write their own temp copy and rename it into place:
  // the last rename wins with identical bytes, and none loads a half-written file.
  removeLeftoverCopies(cacheDir);
  const writeCopy = () => writeFileAtomically(file, embedded.bytes(), 0o700);
  if (!isTrustedCopy(file, embedded)) writeCopy();
  return dlopenRepairing(file, sha256, writeCopy);
}

/**
 * Removes the temp copies (`.keyring-*.tmp`) that first runs killed before their rename
 * left behind. Only those older than a minute: a younger one may be a concurrent first
 * run's, still being written. Listing the small directory costs microseconds.
 */
function removeLeftoverCopies(cacheDir: string): void {
  for (const name of readdirSync(cacheDir)) {
    if (!/^\.keyring-.*\.tmp$/.test(name)) continue;
    const leftover = path.join(cacheDir, name);
    try {
      if (Date.now() - lstatSync(leftover).mtimeMs > 60_000) rmSync(leftover, { force: true });
    } catch {
      // Renamed or removed meanwhile.
    }
  }
}

/**
 * dlopens the cached copy at `file`. The cheap checks before it (owner, mode, size) cannot
 * see a copy of the right size with other bytes (disk corruption, a bad restore), which
 * would then fail on every call ("invalid ELF header"): when dlopen fails, the copy's
 * SHA-256 is compared with the build's, and a copy that differs is written again and
 * loaded once more. Hashing happens only on this failure path, so a normal call pays nothing.
 */
function dlopenRepairing(file: string, sha256: string, writeCopy: () => void): KeyringBinding {
  const load = () => {
    const module = { exports: {} as KeyringBinding };
    process.dlopen(module, file);
    return module.exports;
  };
  try {
    return load();
  } catch (error) {
    const { createHash } = process.getBuiltinModule("node:crypto");
    if (createHash("sha256").update(readFileSync(file)).digest("hex") === sha256) throw error;
    writeCopy();
    return load();
  }
}

/**
 * Creates `dir` as 0700 and checks that it is a real directory owned by this user that no
 * one else can write to: another user able to plant a file there could run code as us.
 */
function ensurePrivateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  if (!stat.isDirectory()) {
    throw new Error(`the addon cache ${dir} is not a directory`);
  }
  if (uid !== undefined && (stat.uid !== uid || (stat.mode & 0o077) !== 0)) {
    throw new Error(
      `the addon cache ${dir} must be a 0700 directory owned by you; remove it to start afresh`,
    );
  }
}

/**
 * True when `file` is a regular file of ours, writable by no one else, holding the embedded
 * addon byte for byte: a Keychain item trusts the signature of the program that made it,
 * so the library it loads must be exactly the one that was signed with it.
 */
function isTrustedCopy(file: string, embedded: EmbeddedFile): boolean {
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return false;
  }
  const uid = process.getuid?.();
  const ownerOk = uid === undefined || (stat.uid === uid && (stat.mode & 0o022) === 0);
  if (!stat.isFile() || !ownerOk || stat.size !== embedded.size) return false;
  return Buffer.compare(readFileSync(file), embedded.bytes()) === 0;
}
