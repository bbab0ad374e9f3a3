/**
 * SHA256SUMS and the channels of a release, from its archives alone: see
 * scripts/gather-release.ts, which runs it in the publishing job.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { binaryName, PROGRAM } from "./channels.ts";
import type { ReleaseArchive } from "./channels.ts";
import { releaseUrl } from "./project-home.ts";
import { TARGET_NAMES } from "./targets.ts";
import type { TargetName } from "./targets.ts";
import { writeChannels } from "./write-channels.ts";

export interface GatherOptions {
  /** The project's root: LICENSE, README.md and packaging/ are read from it. */
  readonly root: string;
  readonly version: string;
  /** Where the archives are; SHA256SUMS, npm/, homebrew/ and scoop/ are written beside them. */
  readonly dir: string;
  /** The download location of the archives (default: the version's GitHub release). */
  readonly baseUrl?: string;
}

/**
 * Writes the release's checksums and channels. Throws when an archive of a target is
 * missing, when a file is not an archive of this version, or when an archive lacks its binary:
 * a release that would leave a platform out, or ship another version, is not published.
 */
export function gatherRelease(options: GatherOptions): readonly ReleaseArchive[] {
  const { root, version, dir } = options;
  const files = readdirSync(dir).filter((file) => file.startsWith(`${PROGRAM}_`));
  const archives: ReleaseArchive[] = [];
  for (const file of files) {
    const target = TARGET_NAMES.find((name) => file === archiveName(version, name));
    if (target === undefined) {
      throw new Error(`${file}: not an archive of ${PROGRAM} ${version} for a known target`);
    }
    const sha256 = createHash("sha256")
      .update(readFileSync(path.join(dir, file)))
      .digest("hex");
    archives.push({ target, file, sha256 });
  }
  const missing = TARGET_NAMES.filter((name) => !archives.some((one) => one.target === name));
  if (missing.length > 0) throw new Error(`no archive for ${missing.join(", ")} in ${dir}`);
  archives.sort((a, b) => TARGET_NAMES.indexOf(a.target) - TARGET_NAMES.indexOf(b.target));

  writeFileSync(
    path.join(dir, "SHA256SUMS"),
    archives.map(({ file, sha256 }) => `${sha256}  ${file}\n`).join(""),
  );
  const unpacked = mkdtempSync(path.join(os.tmpdir(), "tfck-gather-"));
  try {
    const binaries = new Map(
      archives.map((archive) => [archive.target, unpack(dir, archive, unpacked)]),
    );
    writeChannels(dir, {
      root,
      version,
      archives,
      binaryOf: ({ target }) => binaries.get(target)!,
      baseUrl: options.baseUrl ?? releaseUrl(version),
    });
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
  }
  return archives;
}

/** The file name scripts/release.ts (and the Mac jobs) give a target's archive. */
export function archiveName(version: string, target: TargetName): string {
  return `${PROGRAM}_${version}_${target}.${target.startsWith("win-") ? "zip" : "tar.xz"}`;
}

/** Takes the binary out of one archive into its own directory under `into`; its path. */
function unpack(dir: string, archive: ReleaseArchive, into: string): string {
  const out = path.join(into, archive.target);
  mkdirSync(out);
  const binary = binaryName(archive.target);
  const file = path.join(dir, archive.file);
  if (archive.file.endsWith(".zip")) {
    execFileSync("unzip", ["-q", file, binary, "-d", out]);
  } else {
    execFileSync("tar", ["-xJf", file, "-C", out, binary]);
  }
  return path.join(out, binary);
}
