import type { GlobalOptions } from "./options.ts";

/**
 * A command line a person can paste into their shell and run as printed: words made only of
 * safe characters stay bare, others are single-quoted. On Windows that shell is PowerShell:
 * a quote is doubled inside quotes, and a quoted program needs the call operator `&` (a
 * quoted string alone is only printed back). Neither form is for cmd.exe, whose quoting
 * rules depend on each program.
 */
export function commandLine(words: readonly string[], platform: NodeJS.Platform): string {
  if (platform === "win32") {
    const quoted = words.map((word) =>
      /^[\w.:\\/=+-]+$/.test(word) ? word : `'${word.replace(/'/g, "''")}'`,
    );
    return quoted[0]?.startsWith("'") === true ? `& ${quoted.join(" ")}` : quoted.join(" ");
  }
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`))
    .join(" ");
}

/** How messages name the store the options select. */
export function storeName(backend: GlobalOptions["backend"]): string {
  return backend === "pass" ? "pass" : "the keychain";
}
