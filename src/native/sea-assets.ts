/** What the build embeds in the single executable, and under which asset names. */

/** The keychain addon, unpacked and dlopened by load-keyring.ts. */
export const KEYRING_ASSET = "keyring.node";

/** The bundled program, wrapped by `wrapProgram`, that sea-entry.ts compiles and runs. */
export const PROGRAM_ASSET = "program.js";

/** V8's code cache for PROGRAM_ASSET; empty when the build could not make one. */
export const PROGRAM_CACHE_ASSET = "program.cache";

/** The name the program's functions carry in stack traces. */
export const PROGRAM_FILENAME = "terraform-credentials-keychain.cjs";

/**
 * Wraps CommonJS code as one function expression taking what a module receives, so that
 * `vm.Script#runInThisContext` returns it. The code cache is made for exactly this text.
 */
export function wrapProgram(commonJs: string): string {
  return `(function (exports, require, module, __filename, __dirname) {${commonJs}\n})`;
}
