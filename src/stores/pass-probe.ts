import { accessSync, constants, existsSync } from "node:fs";
import path from "node:path";
import { passStoreDir } from "./pass-store.ts";
import type { ProbeResult } from "./probe-result.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Whether the pass store can work here, found without running gpg (which could ask for a
 * passphrase): `pass` on PATH, and a store that `pass init` has set up.
 */
export function probePass(env: Env, homedir: string, platform: NodeJS.Platform): ProbeResult {
  const onPath = (env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => dir !== "")
    .some((dir) => isExecutable(path.join(dir, platform === "win32" ? "pass.exe" : "pass")));
  if (!onPath) {
    return {
      status: "fail",
      summary: "pass is not installed (not on PATH)",
      fix: 'install pass and gnupg (e.g. "apt-get install pass"), then "pass init <gpg-id>"',
      safeToOpen: false,
    };
  }
  let storeDir;
  try {
    storeDir = passStoreDir(env, homedir);
  } catch (error) {
    return {
      status: "fail",
      summary: (error as Error).message,
      fix: "set PASSWORD_STORE_DIR to an absolute path, or unset it",
      safeToOpen: false,
    };
  }
  if (!existsSync(path.join(storeDir, ".gpg-id"))) {
    return {
      status: "fail",
      summary: `the password store in ${storeDir} is not initialised`,
      fix: 'run "pass init <gpg-id>" with a key from "gpg --list-secret-keys"',
      safeToOpen: false,
    };
  }
  return {
    status: "ok",
    summary: `pass is installed and ${storeDir} is initialised`,
    safeToOpen: true,
  };
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
