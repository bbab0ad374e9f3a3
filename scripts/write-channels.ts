/**
 * Writes the release's other channels next to its archives (see scripts/channels.ts):
 *   npm/<package>/            one directory per npm package, ready for `npm publish <dir>`
 *                             (the platform packages first, then terraform-credentials-keychain)
 *   homebrew/terraform-credentials-keychain.rb   for a tap (when a macOS or Linux archive exists)
 *   scoop/terraform-credentials-keychain.json    for a bucket (when the win-x64 archive exists)
 */
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  binaryName,
  homebrewFormula,
  mainPackageJson,
  platformPackageJson,
  platformPackageName,
  PROGRAM,
  scoopManifest,
} from "./channels.ts";
import type { ReleaseArchive } from "./channels.ts";

export interface ChannelSources {
  readonly root: string;
  readonly version: string;
  readonly archives: readonly ReleaseArchive[];
  /** The built binary of each archive's target. */
  readonly binaryOf: (archive: ReleaseArchive) => string;
  readonly baseUrl: string;
}

export function writeChannels(out: string, sources: ChannelSources): void {
  const { root, version, archives, baseUrl } = sources;
  const license = path.join(root, "LICENSE");
  const npm = path.join(out, "npm");
  for (const archive of archives) {
    const dir = path.join(npm, platformPackageName(archive.target));
    mkdirSync(path.join(dir, "bin"), { recursive: true });
    writeJson(path.join(dir, "package.json"), platformPackageJson(version, archive.target));
    const binary = path.join(dir, "bin", binaryName(archive.target));
    copyFileSync(sources.binaryOf(archive), binary);
    chmodSync(binary, 0o755);
    copyFileSync(license, path.join(dir, "LICENSE"));
  }
  const main = path.join(npm, PROGRAM);
  mkdirSync(path.join(main, "bin"), { recursive: true });
  writeJson(
    path.join(main, "package.json"),
    mainPackageJson(
      version,
      archives.map((archive) => archive.target),
    ),
  );
  const launcher = path.join(main, "bin", "launcher.cjs");
  copyFileSync(path.join(root, "packaging/npm-launcher.cjs"), launcher);
  chmodSync(launcher, 0o755);
  copyFileSync(path.join(root, "README.md"), path.join(main, "README.md"));
  copyFileSync(license, path.join(main, "LICENSE"));
  console.log(`${path.relative(root, npm)}/: ${archives.length + 1} npm packages`);

  if (archives.some((archive) => !archive.target.startsWith("win-"))) {
    const formula = path.join(out, "homebrew", `${PROGRAM}.rb`);
    mkdirSync(path.dirname(formula), { recursive: true });
    writeFileSync(formula, homebrewFormula(version, archives, baseUrl));
    console.log(`${path.relative(root, formula)}: Homebrew formula`);
  }
  if (archives.some((archive) => archive.target === "win-x64")) {
    const manifest = path.join(out, "scoop", `${PROGRAM}.json`);
    mkdirSync(path.dirname(manifest), { recursive: true });
    writeJson(manifest, scoopManifest(version, archives, baseUrl));
    console.log(`${path.relative(root, manifest)}: Scoop manifest`);
  }
}

function writeJson(file: string, value: object): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}
