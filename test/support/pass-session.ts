import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { PATIENCE_MS } from "./timing.ts";

const execFileAsync = promisify(execFile);

/** A private GPG keyring and password store, as a headless machine would have. */
export interface PassSession {
  /**
   * Environment for processes that should use this store: PATH, LANG, a private HOME,
   * GNUPGHOME and PASSWORD_STORE_DIR; no DBUS_SESSION_BUS_ADDRESS, DISPLAY or GPG_TTY.
   */
  readonly env: Record<string, string>;
  /** PASSWORD_STORE_DIR: initialised with `pass init` for the session's key. */
  readonly storeDir: string;
  /** The private HOME. */
  readonly home: string;
  /** The fingerprint of the session's key, which .gpg-id names. */
  readonly fingerprint: string;
  /** Stops the gpg-agent (and dirmngr) started for GNUPGHOME and removes everything. */
  close(): Promise<void>;
}

export interface PassSessionOptions {
  /** Make the store a git repository (`pass git init`), so that pass commits each change. */
  readonly git?: boolean;
  /** Protect the key with this passphrase; it is not cached, so decrypting needs a pinentry. */
  readonly passphrase?: string;
  /**
   * No key and no store: an empty GNUPGHOME and a PASSWORD_STORE_DIR that does not exist, as
   * on a machine pass was never set up on (`fingerprint` is then empty).
   */
  readonly bare?: boolean;
}

/** The Debian packages a pass session needs, for error messages. */
export const PASS_PACKAGES = "pass gnupg git";

/**
 * Creates a temp directory with a private GNUPGHOME (0700) holding a throwaway ed25519 key
 * with a cv25519 encryption subkey (quick to make, no entropy wait), and a password store
 * initialised for it. Without `passphrase` the key has none, as a CI key would.
 */
export async function startPassSession(options: PassSessionOptions = {}): Promise<PassSession> {
  const sandbox = mkdtempSync(path.join(os.tmpdir(), "tfck-pass-"));
  const home = path.join(sandbox, "home");
  const gnupgHome = path.join(sandbox, "gnupg");
  const storeDir = path.join(sandbox, "store");
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(gnupgHome, { mode: 0o700 });
  // Tests must not reach key servers or WKD when a recipient is missing.
  writeFileSync(path.join(gnupgHome, "gpg.conf"), "no-auto-key-retrieve\nauto-key-locate local\n");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    HOME: home,
    GNUPGHOME: gnupgHome,
    PASSWORD_STORE_DIR: storeDir,
  };
  const run = async (file: string, args: readonly string[]) => {
    try {
      return (await execFileAsync(file, args, { env, timeout: PATIENCE_MS })).stdout;
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new Error(
        `${file} ${args.join(" ")} failed (apt-get install ${PASS_PACKAGES}): ${detail}`,
        { cause: error },
      );
    }
  };
  const close = async () => {
    // Kills gpg-agent and the dirmngr a lookup may have started; both were started for this
    // GNUPGHOME only.
    await execFileAsync("gpgconf", ["--kill", "all"], { env, timeout: 10_000 }).catch(
      () => undefined,
    );
    rmSync(sandbox, { recursive: true, force: true });
  };

  if (options.bare === true) return { env, storeDir, home, fingerprint: "", close };
  try {
    const secret = options.passphrase ?? "";
    // With an empty passphrase the key is left unprotected; a non-empty one needs loopback,
    // as no pinentry can be shown here.
    const unlock = ["--batch", "--pinentry-mode", "loopback", "--passphrase", secret];
    await run("gpg", [
      ...unlock,
      "--quick-gen-key",
      "tfck test <tfck@example.invalid>",
      "ed25519",
      "cert",
      "never",
    ]);
    const listing = await run("gpg", ["--batch", "--with-colons", "--list-secret-keys"]);
    const fingerprint = /^fpr:+([0-9A-F]{40}):/m.exec(listing)?.[1];
    if (fingerprint === undefined) throw new Error(`no fingerprint in gpg's listing:\n${listing}`);
    await run("gpg", [...unlock, "--quick-add-key", fingerprint, "cv25519", "encr", "never"]);
    // The agent caches a passphrase given through loopback: forget it.
    if (secret !== "") await run("gpgconf", ["--kill", "gpg-agent"]);

    await run("pass", ["init", fingerprint]);
    if (options.git === true) {
      // pass commits with the user's git identity; give the private HOME one.
      writeFileSync(
        path.join(home, ".gitconfig"),
        "[user]\n\tname = tfck test\n\temail = tfck@example.invalid\n[init]\n\tdefaultBranch = main\n",
      );
      await run("pass", ["git", "init"]);
    }
    return { env, storeDir, home, fingerprint, close };
  } catch (error) {
    await close();
    throw error;
  }
}
