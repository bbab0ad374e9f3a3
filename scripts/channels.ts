/**
 * What `npm run release` writes besides the archives, from their names and SHA-256s: the npm
 * packages (a launcher plus one package per platform), a Homebrew formula and a Scoop
 * manifest. Pure text and objects; scripts/release.ts writes them to disk.
 */
import { PROJECT_HOME, releaseUrl } from "./project-home.ts";
import type { ProjectHome } from "./project-home.ts";
import type { TargetName } from "./targets.ts";

export const PROGRAM = "terraform-credentials-keychain";
const DESCRIPTION =
  "A Terraform and OpenTofu credentials helper that keeps API tokens in the operating system's keychain";
/** The npm metadata that says where the project lives, from package.json (project-home.ts). */
const HOME_FIELDS = {
  homepage: PROJECT_HOME.homepage,
  repository: PROJECT_HOME.repository,
  bugs: { url: PROJECT_HOME.bugs },
};

/** One release archive: the target it holds and its file name and SHA-256 (hex). */
export interface ReleaseArchive {
  readonly target: TargetName;
  readonly file: string;
  readonly sha256: string;
}

const NPM_PLATFORMS: Readonly<Record<TargetName, { os: string; cpu: string }>> = {
  "linux-x64": { os: "linux", cpu: "x64" },
  "linux-arm64": { os: "linux", cpu: "arm64" },
  "darwin-x64": { os: "darwin", cpu: "x64" },
  "darwin-arm64": { os: "darwin", cpu: "arm64" },
  "win-x64": { os: "win32", cpu: "x64" },
  "win-arm64": { os: "win32", cpu: "arm64" },
};

/** The npm package holding one target's binary (the launcher derives the same name). */
export function platformPackageName(target: TargetName): string {
  return `${PROGRAM}-${target}`;
}

/** The binary's file name for a target, as it sits in `bin/` of its npm package. */
export function binaryName(target: TargetName): string {
  return `${PROGRAM}${target.startsWith("win-") ? ".exe" : ""}`;
}

/** package.json of one platform's package: npm installs only the one matching os and cpu. */
export function platformPackageJson(version: string, target: TargetName): object {
  const { os, cpu } = NPM_PLATFORMS[target];
  return {
    name: platformPackageName(target),
    version,
    description: `The ${target} binary of ${PROGRAM}; install ${PROGRAM} instead`,
    license: "MIT",
    // npm's provenance check compares repository.url with the repository that built it.
    ...HOME_FIELDS,
    os: [os],
    cpu: [cpu],
    // The Linux binaries link glibc: on musl (Alpine) npm skips the package and the
    // launcher says so, instead of a binary that cannot start.
    ...(os === "linux" ? { libc: ["glibc"] } : {}),
    files: [`bin/${binaryName(target)}`, "LICENSE"],
    // Not for Node to load: keeps tools from treating the binary as a module.
    preferUnplugged: true,
  };
}

/** package.json of the package users install: a launcher, and every platform as optional. */
export function mainPackageJson(version: string, targets: readonly TargetName[]): object {
  return {
    name: PROGRAM,
    version,
    description: DESCRIPTION,
    license: "MIT",
    ...HOME_FIELDS,
    keywords: ["terraform", "opentofu", "credentials-helper", "keychain"],
    bin: { [PROGRAM]: "bin/launcher.cjs" },
    files: ["bin/launcher.cjs", "README.md", "LICENSE"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(
      targets.map((target) => [platformPackageName(target), version]),
    ),
  };
}

const HOMEBREW_SECTIONS = [
  { block: "on_macos", targets: { on_arm: "darwin-arm64", on_intel: "darwin-x64" } },
  { block: "on_linux", targets: { on_arm: "linux-arm64", on_intel: "linux-x64" } },
] as const;

/**
 * A Homebrew formula for a tap: one archive per OS and CPU. Brew keeps the binary in its
 * Cellar; `install` copies it into the plugin directory, which the caveats say.
 */
export function homebrewFormula(
  version: string,
  archives: readonly ReleaseArchive[],
  baseUrl = releaseUrl(version),
): string {
  const byTarget = new Map(archives.map((archive) => [archive.target, archive]));
  const sections: string[] = [];
  for (const { block, targets } of HOMEBREW_SECTIONS) {
    const arches: string[] = [];
    for (const [arch, target] of Object.entries(targets)) {
      const archive = byTarget.get(target);
      if (archive === undefined) continue;
      arches.push(
        `    ${arch} do`,
        `      url ${rubyString(`${baseUrl}/${archive.file}`)}`,
        `      sha256 ${rubyString(archive.sha256)}`,
        "    end",
      );
    }
    if (arches.length > 0) sections.push(`  ${block} do`, ...arches, "  end", "");
  }
  if (sections.length === 0) throw new Error("no macOS or Linux archive for the Homebrew formula");
  return [
    "class TerraformCredentialsKeychain < Formula",
    `  desc ${rubyString("Terraform/OpenTofu credentials helper using the OS keychain")}`,
    `  homepage ${rubyString(PROJECT_HOME.repositoryUrl)}`,
    `  version ${rubyString(version)}`,
    '  license "MIT"',
    "",
    ...sections,
    "  def install",
    `    bin.install ${rubyString(PROGRAM)}`,
    "  end",
    "",
    "  def caveats",
    "    <<~EOS",
    "      To have Terraform and OpenTofu use it, run once (and again after each upgrade):",
    `        ${PROGRAM} install`,
    "    EOS",
    "  end",
    "",
    "  test do",
    `    assert_match version.to_s, shell_output("#{bin}/${PROGRAM} --version")`,
    "  end",
    "end",
    "",
  ].join("\n");
}

/** Scoop's architecture names for the Windows targets. */
const SCOOP_ARCHITECTURES = { "win-x64": "64bit", "win-arm64": "arm64" } as const;

/** A Scoop manifest for a bucket: the win-x64 zip, and the win-arm64 zip when there is one. */
export function scoopManifest(
  version: string,
  archives: readonly ReleaseArchive[],
  baseUrl = releaseUrl(version),
): object {
  if (!archives.some((archive) => archive.target === "win-x64")) {
    throw new Error("no win-x64 archive for the Scoop manifest");
  }
  const architecture: Record<string, { url: string; hash: string }> = {};
  for (const [target, name] of Object.entries(SCOOP_ARCHITECTURES)) {
    const archive = archives.find((one) => one.target === target);
    if (archive !== undefined) {
      architecture[name] = { url: `${baseUrl}/${archive.file}`, hash: archive.sha256 };
    }
  }
  return {
    version,
    description: DESCRIPTION,
    homepage: PROJECT_HOME.repositoryUrl,
    license: "MIT",
    architecture,
    bin: binaryName("win-x64"),
    notes: `To have Terraform and OpenTofu use it, run once (and again after each update): ${PROGRAM} install`,
  };
}

/**
 * The README inside each release archive: packaging/archive-README.md with `{{version}}`,
 * `{{homepage}}`, `{{releases}}` and `{{bugs}}` filled in from package.json (project-home.ts).
 * Throws when the template holds any other `{{...}}`, so no placeholder ships.
 */
export function archiveReadme(
  template: string,
  version: string,
  home: ProjectHome = PROJECT_HOME,
): string {
  const values: Readonly<Record<string, string>> = {
    version,
    homepage: home.homepage,
    releases: `${home.repositoryUrl}/releases`,
    bugs: home.bugs,
  };
  return template.replace(/\{\{(\w*)\}\}/g, (placeholder, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`archive README: unknown placeholder ${placeholder}`);
    return value;
  });
}

/** "1 archive", "2 archives". */
export function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** A double-quoted Ruby string literal; `#` escaped so nothing is interpolated. */
function rubyString(text: string): string {
  return `"${text.replace(/[\\"#]/g, (char) => `\\${char}`)}"`;
}
