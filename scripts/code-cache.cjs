/**
 * Makes and checks the V8 code cache embedded beside the program (see src/native/sea-entry.ts).
 * It must run on the very Node binary that will run the program, with no extra flags: V8
 * accepts a cache only from its own version with the same flags.
 *   node code-cache.cjs make  PROGRAM.js CACHE   compile every function, write the cache
 *   node code-cache.cjs check PROGRAM.js CACHE   exit 1 unless V8 accepts the cache
 */
"use strict";
const { readFileSync, writeFileSync } = require("node:fs");
const { setFlagsFromString } = require("node:v8");
const { Script } = require("node:vm");

const [mode, programFile, cacheFile] = process.argv.slice(2);
const source = readFileSync(programFile, "utf8");

if (mode === "make") {
  // Compile eagerly so the cache holds every function, not just the top level; then put the
  // flag back, since the flags are part of what V8 checks when it reads the cache.
  setFlagsFromString("--no-lazy");
  const script = new Script(source, { filename: "program" });
  setFlagsFromString("--lazy");
  writeFileSync(cacheFile, script.createCachedData());
} else if (mode === "check") {
  const script = new Script(source, { filename: "program", cachedData: readFileSync(cacheFile) });
  if (script.cachedDataRejected !== false) {
    console.error(`V8 refused the code cache ${cacheFile}`);
    process.exit(1);
  }
} else {
  console.error("usage: node code-cache.cjs make|check PROGRAM.js CACHE");
  process.exit(2);
}
