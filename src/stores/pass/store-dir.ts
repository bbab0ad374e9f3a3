import path from "node:path";
import { CliError } from "../../errors.ts";

/**
 * The store's directory: pass reads `${PASSWORD_STORE_DIR:-$HOME/.password-store}`, so an
 * empty value counts as unset. A relative one is refused: Terraform runs the helper in each
 * configuration's directory, where it would name another store each time.
 */
export function passStoreDir(
  env: Readonly<Record<string, string | undefined>>,
  homedir: string,
): string {
  const dir = env.PASSWORD_STORE_DIR || path.join(homedir, ".password-store");
  if (!path.isAbsolute(dir)) {
    throw new CliError(
      `PASSWORD_STORE_DIR is the relative path ${JSON.stringify(dir)}: Terraform runs the helper from each configuration's directory, where it names another store; set it to an absolute path`,
    );
  }
  return dir;
}
