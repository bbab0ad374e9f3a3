/**
 * `tsx scripts/archive-readme.ts FILE`: writes the README a release archive holds
 * (packaging/archive-README.md with this version and package.json's project home), as
 * scripts/release.ts does. For the macOS job, which archives its signed binary itself.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { archiveReadme } from "./channels.ts";
import { packageVersion, ROOT } from "./packages.ts";

const file = process.argv[2];
if (file === undefined) throw new Error("usage: tsx scripts/archive-readme.ts FILE");
const template = readFileSync(path.join(ROOT, "packaging/archive-README.md"), "utf8");
writeFileSync(file, archiveReadme(template, packageVersion(ROOT)));
