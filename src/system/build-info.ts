// Replaced by the build (`bun build --define`); from source they are absent.
declare const __TFCK_VERSION__: string | undefined;
declare const __TFCK_KEYRING_SHA256__: string | undefined;
declare const __TFCK_TARGET__: string | undefined;

/** The version this binary was built as; `0.0.0-dev` when run from source. */
export const VERSION: string =
  typeof __TFCK_VERSION__ === "string" ? __TFCK_VERSION__ : "0.0.0-dev";

/** SHA-256 of the keychain addon embedded in the single executable; undefined from source. */
export const KEYRING_SHA256: string | undefined =
  typeof __TFCK_KEYRING_SHA256__ === "string" ? __TFCK_KEYRING_SHA256__ : undefined;

/** The release target this binary was built for (`linux-x64`, …); `source` when run from source. */
export const TARGET: string = typeof __TFCK_TARGET__ === "string" ? __TFCK_TARGET__ : "source";

/** True when running as the built single executable, false from source. */
export function isSingleExecutable(): boolean {
  // Only the build names a target.
  return TARGET !== "source";
}

/**
 * What `--version` prints, so a bug report names the binary: `0.1.0 (linux-x64, Node 24.21.0)`.
 * The runtime is read from the running process: in a single executable it is the one the
 * build embedded.
 */
export function versionLine(
  version: string,
  target: string,
  versions: Readonly<Record<string, string | undefined>>,
): string {
  const runtime =
    versions["bun"] !== undefined ? `Bun ${versions["bun"]}` : `Node ${versions["node"] ?? "?"}`;
  return `${version} (${target}, ${runtime})`;
}
