/**
 * The publishing job's last step before it publishes: from the archives every build job
 * made, gathered into one directory (the darwin ones as the Mac jobs signed them), writes
 * SHA256SUMS once, and the npm packages, Homebrew formula and Scoop manifest with the
 * release's real URLs. Each binary is taken out of its archive, so npm ships the very bytes
 * the archive does. Refuses a tag that is not v<package.json's version>.
 *   npx tsx scripts/gather-release.ts --dir release --tag v1.2.3
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { countOf } from "./channels.ts";
import { gatherRelease } from "./gather-archives.ts";
import { packageVersion, ROOT } from "./packages.ts";

const { values } = parseArgs({
  options: { dir: { type: "string", default: "release" }, tag: { type: "string" } },
});
const version = packageVersion(ROOT);
if (values.tag !== undefined && values.tag !== `v${version}`) {
  throw new Error(`the tag ${values.tag} is not v${version}, package.json's version`);
}
const dir = path.resolve(values.dir);
const archives = gatherRelease({ root: ROOT, version, dir });
console.log(`${path.relative(ROOT, dir)}/SHA256SUMS: ${countOf(archives.length, "archive")}`);
