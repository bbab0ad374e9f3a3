import { readdirSync } from "node:fs";
import path from "node:path";
import { CliError } from "../errors.ts";
import { readTextIfExists } from "../system/files.ts";
import {
  configDirFileNames,
  readConfigFile,
  type ConfigFileContent,
} from "../terraform/config-dir.ts";
import type { TerraformLocations } from "../terraform/locations.ts";

/** A `*.tfrc` or `*.tfrc.json` file Terraform merges into its CLI config, as read. */
export type ConfigDirFile =
  | ({ readonly file: string } & ConfigFileContent & { readonly error?: undefined })
  | { readonly file: string; readonly error: string };

/** Every config-directory file of `locations`, read; one that cannot be read says why. */
export function readConfigDirFiles(locations: TerraformLocations): ConfigDirFile[] {
  return locations.configDirs.flatMap((dir) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return []; // No directory: nothing merged from it.
    }
    return configDirFileNames(names).map((name): ConfigDirFile => {
      const file = path.join(dir, name);
      try {
        const text = readTextIfExists(file);
        return text === undefined
          ? { file, helpers: [], credentialsHosts: [] }
          : { file, ...readConfigFile(file, text) };
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        return { file, error: error.message };
      }
    });
  });
}

/** The config-directory files that set a credentials_helper other than `ours`. */
export function otherHelperFiles(
  files: readonly ConfigDirFile[],
  ours: string,
): Array<{ file: string; name: string }> {
  return files.flatMap(({ file, ...content }) =>
    content.error === undefined
      ? content.helpers.filter((name) => name !== ours).map((name) => ({ file, name }))
      : [],
  );
}
