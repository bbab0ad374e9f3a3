import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { nativeSandbox } from "./keychain-backends.ts";

/** A temporary Keychain, made the user's default for the run, and a HOME that finds it. */
export interface TemporaryKeychain {
  /** This process's environment, with HOME a temporary directory (see `nativeSandbox`). */
  readonly env: Record<string, string>;
  readonly home: string;
  /** Gives the user back the default keychain and search list, and deletes this one. */
  close(): Promise<void>;
}

const security = (...args: string[]) =>
  execFileSync("/usr/bin/security", args, { encoding: "utf8", timeout: 60_000 });
/** `security` prints each keychain as a quoted path on a line of its own. */
const keychainPaths = (text: string) =>
  [...text.matchAll(/"([^"]+)"/g)].map((match) => match[1] ?? "").filter((name) => name !== "");

/**
 * Creates a keychain in a temporary directory, unlocked and without an auto-lock timeout,
 * puts it first in the user's search list and makes it the default keychain, where the
 * helper's store writes: the helper's default service can be used without touching the
 * user's own items. macOS only; one at a time (the default keychain is the user's, for every
 * process), which scripts/test.sh gives by running one test file at a time.
 */
export async function startTemporaryKeychain(): Promise<TemporaryKeychain> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-keychain-"));
  const keychain = path.join(dir, "tests.keychain-db");
  const password = randomBytes(16).toString("hex");
  const previousDefault = keychainPaths(security("default-keychain", "-d", "user"));
  const previousList = keychainPaths(security("list-keychains", "-d", "user"));
  const restore = () => {
    security("list-keychains", "-d", "user", "-s", ...previousList);
    if (previousDefault[0] !== undefined)
      security("default-keychain", "-d", "user", "-s", previousDefault[0]);
  };
  try {
    security("create-keychain", "-p", password, keychain);
    security("set-keychain-settings", keychain);
    security("unlock-keychain", "-p", password, keychain);
    security("list-keychains", "-d", "user", "-s", keychain, ...previousList);
    security("default-keychain", "-d", "user", "-s", keychain);
  } catch (error) {
    restore();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  // After the default is set: the sandbox links the preferences that name it.
  const sandbox = nativeSandbox();
  return {
    env: sandbox.env,
    home: sandbox.home,
    async close() {
      try {
        restore();
        security("delete-keychain", keychain);
      } finally {
        sandbox.remove();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
