/** Where the build scripts find package versions and the npm packages they fetch. */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "..");
export const PACKAGE_CACHE = path.join(ROOT, "build", "cache");

/** The `version` of the package.json in `dir`. */
export function packageVersion(dir: string): string {
  return (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string })
    .version;
}

/**
 * Where `name@version` is on this machine: node_modules when that is the installed
 * version, else its folder in the build cache (which `npm run build` fills with `npm pack`).
 */
export function packageDir(name: string, version: string): string {
  const installed = path.join(ROOT, "node_modules", name);
  if (existsSync(path.join(installed, "package.json")) && packageVersion(installed) === version) {
    return installed;
  }
  return path.join(PACKAGE_CACHE, `${name.replace("/", "+")}@${version}`);
}
