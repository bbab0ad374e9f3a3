/**
 * The single executable's entry point: compiles the bundled program from the code cache
 * the build made for it, and runs it.
 *
 * Node's own SEA code cache is made before the code runs, so it holds the top level of the
 * bundle and none of its functions: every function a `get` calls was parsed and compiled
 * again on every start, about 5 ms of it. The cache embedded here holds every function
 * (scripts/code-cache.cjs), and reading it costs about 1 ms. A cache V8 refuses (another
 * Node release or other V8 flags) costs only that time: the program then compiles lazily.
 * TF_CREDENTIALS_KEYCHAIN_DEBUG=1 says which of these happened.
 */
import { writeSync } from "node:fs";
import { getAsset, getRawAsset } from "node:sea";
import { Script } from "node:vm";
import { debugging } from "../errors.ts";
import { PROGRAM_ASSET, PROGRAM_CACHE_ASSET, PROGRAM_FILENAME } from "./sea-assets.ts";

type ModuleFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: NodeJS.Module,
  filename: string,
  dirname: string,
) => void;

const rawCache = getRawAsset(PROGRAM_CACHE_ASSET);
const cache = typeof rawCache === "string" ? new Uint8Array() : new Uint8Array(rawCache);
const script = new Script(getAsset(PROGRAM_ASSET, "utf8"), {
  filename: PROGRAM_FILENAME,
  ...(cache.byteLength > 0 ? { cachedData: cache } : {}),
});
if (debugging(process.env)) {
  // Straight to the descriptor: a stderr stream here would outlive main.ts's early exit.
  const state =
    cache.byteLength === 0
      ? "absent (a cross-built binary): compiling from source"
      : script.cachedDataRejected === true
        ? "refused by V8: compiling from source"
        : "accepted";
  writeSync(2, `debug: code cache ${state}\n`);
}
(script.runInThisContext() as ModuleFunction)(exports, require, module, __filename, __dirname);
