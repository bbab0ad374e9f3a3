import { lstatSync, realpathSync, rmSync } from "node:fs";
import { CliError } from "../errors.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import { parseCredentialsObject } from "../protocol/credentials-object.ts";
import type { CredentialStore } from "../stores/credential-store.ts";
import { credentialsFileWithout, parseCredentialsFile } from "../terraform/credentials-file.ts";
import type { TerraformLocations } from "../terraform/locations.ts";
import { modeIfExists, readTextIfExists, writeFileAtomically } from "../system/files.ts";

const EMPTY_FILE = '{\n  "credentials": {}\n}\n';

export interface ImportedHost {
  readonly file: string;
  readonly host: string;
  readonly outcome: "moved" | "copied" | "failed";
  /** Why it failed; never holds a token. */
  readonly reason?: string;
}

/**
 * `import`: moves every host of each `credentials.tfrc.json` into `store`. Each object is
 * stored, read back and compared before its host leaves the file; a host that fails stays.
 * The file is then rewritten atomically with its permissions, or removed when nothing is
 * left in it; with `keep` it is not touched. When the store cannot be reached at all the
 * file is left exactly as it was and the error is thrown.
 */
export async function importCredentials(
  store: CredentialStore,
  locations: TerraformLocations,
  keep: boolean,
): Promise<ImportedHost[]> {
  const results: ImportedHost[] = [];
  let storeReached = false;
  // Two spellings of one host (App.Example.COM, app.example.com) reach one entry: the
  // second may only move when it holds the same object, else its token would be lost.
  const imported = new Map<string, string>();
  for (const file of locations.credentialsFiles) {
    const text = readTextIfExists(file);
    if (text === undefined) continue;
    const parsed = parseCredentialsFile(text, file);
    const moved = new Set<number>();
    for (const [index, { name, object }] of parsed.hosts.entries()) {
      const failed = (error: unknown) => {
        if (!(error instanceof CliError)) throw error;
        results.push({ file, host: name, outcome: "failed", reason: error.message });
      };
      let host, stored;
      try {
        host = normalizeHostname(name);
        stored = parseCredentialsObject(object, `the credentials for ${name} in ${file}`);
      } catch (error) {
        failed(error);
        continue;
      }
      const earlier = imported.get(host);
      if (earlier !== undefined && earlier !== stored) {
        failed(
          new CliError(`another spelling of ${host} with different credentials was imported first`),
        );
        continue;
      }
      // Until one write has succeeded, a failing store is unreachable as a whole: then
      // nothing has moved, and the import fails with every file untouched.
      try {
        await store.store(host, stored);
        storeReached = true;
        if ((await store.get(host)) !== stored) {
          throw new CliError("the keychain returned something else when read back");
        }
      } catch (error) {
        if (!storeReached) throw error;
        failed(error);
        continue;
      }
      imported.set(host, stored);
      moved.add(index);
      results.push({ file, host: name, outcome: keep ? "copied" : "moved" });
    }
    if (keep || moved.size === 0) continue;
    // A symlinked file (a dotfile manager's) is edited where it lives: replacing or
    // removing the link would leave the tokens in its target. Emptied, it keeps an empty
    // credentials object, so that the link still points at a file.
    const isLink = lstatSync(file).isSymbolicLink();
    const target = isLink ? realpathSync(file) : file;
    const rest = credentialsFileWithout(parsed, moved) ?? (isLink ? EMPTY_FILE : undefined);
    if (rest === undefined) rmSync(target, { force: true });
    else writeFileAtomically(target, rest, modeIfExists(target) ?? 0o600);
  }
  return results;
}
