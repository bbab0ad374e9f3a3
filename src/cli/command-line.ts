import type { GlobalOptions } from "./options.ts";

/**
 * A command line a person can paste into a POSIX shell and run as printed: words made only
 * of safe characters stay bare, others are single-quoted.
 */
export function commandLine(words: readonly string[]): string {
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`))
    .join(" ");
}

/** How messages name the store the options select. */
export function storeName(backend: GlobalOptions["backend"]): string {
  return backend === "pass" ? "pass" : "the keychain";
}
