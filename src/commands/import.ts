import { rmSync } from "node:fs";
import { CliError } from "../errors.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import { parseCredentialsObject } from "../protocol/credentials-object.ts";
import type { CredentialStore } from "../stores/credential-store.ts";
import { credentialsFileWithout, parseCredentialsFile } from "../terraform/credentials-file.ts";
import type { TerraformLocations } from "../terraform/locations.ts";
import { modeIfExists, readTextIfExists, writeFileAtomically } from "../files.ts";

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
    const { hosts, document } = parseCredentialsFile(text, file);
    const moved = new Set<string>();
    for (const { name, object } of hosts) {
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
      moved.add(name);
      results.push({ file, host: name, outcome: keep ? "copied" : "moved" });
    }
    if (keep || moved.size === 0) continue;
    const rest = credentialsFileWithout(document, moved);
    if (rest === undefined) rmSync(file, { force: true });
    else writeFileAtomically(file, rest, modeIfExists(file) ?? 0o600);
  }
  return results;
}
