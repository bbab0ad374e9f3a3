// Replaced by the build (`bun build --define`); from source they are absent.
declare const __TFCK_VERSION__: string | undefined;
declare const __TFCK_KEYRING_SHA256__: string | undefined;

/** The version this binary was built as; `0.0.0-dev` when run from source. */
export const VERSION: string =
  typeof __TFCK_VERSION__ === "string" ? __TFCK_VERSION__ : "0.0.0-dev";

/** SHA-256 of the keychain addon embedded in the single executable; undefined from source. */
export const KEYRING_SHA256: string | undefined =
  typeof __TFCK_KEYRING_SHA256__ === "string" ? __TFCK_KEYRING_SHA256__ : undefined;
