/**
 * The project's one canonical home: `repository`, `homepage` and `bugs` in package.json.
 * Release URLs, the npm packages' metadata, the Homebrew formula and the Scoop manifest all
 * take it from here, so no script guesses a URL of its own.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./packages.ts";

export interface ProjectHome {
  /** The GitHub repository's web address, e.g. https://github.com/owner/name. */
  readonly repositoryUrl: string;
  /** package.json's `repository`, as npm wants it (provenance checks it against the build). */
  readonly repository: { readonly type: "git"; readonly url: string };
  readonly homepage: string;
  readonly bugs: string;
}

/**
 * Reads the home from a parsed package.json. Throws unless `repository.url` names a GitHub
 * repository and `homepage` and `bugs` lie inside it: a release's download URLs are built from
 * the repository, and they must be where the homepage sends people.
 */
export function projectHome(packageJson: unknown): ProjectHome {
  const json = packageJson as {
    repository?: { type?: unknown; url?: unknown };
    homepage?: unknown;
    bugs?: { url?: unknown };
  };
  const gitUrl = json.repository?.url;
  const match =
    typeof gitUrl === "string"
      ? /^git\+(https:\/\/github\.com\/[\w.-]+\/[\w.-]+?)\.git$/.exec(gitUrl)
      : null;
  if (json.repository?.type !== "git" || match === null) {
    throw new Error(
      `package.json: repository must be {"type":"git","url":"git+https://github.com/OWNER/NAME.git"}, not ${JSON.stringify(json.repository)}`,
    );
  }
  const repositoryUrl = match[1]!;
  const within = (what: string, value: unknown): string => {
    const inside =
      typeof value === "string" &&
      (value === repositoryUrl ||
        value.startsWith(`${repositoryUrl}/`) ||
        value.startsWith(`${repositoryUrl}#`));
    if (!inside) {
      throw new Error(
        `package.json: ${what} must lie under ${repositoryUrl}, not ${JSON.stringify(value)}`,
      );
    }
    return value;
  };
  return {
    repositoryUrl,
    repository: { type: "git", url: gitUrl as string },
    homepage: within("homepage", json.homepage),
    bugs: within("bugs.url", json.bugs?.url),
  };
}

/** The home of this checkout's package.json. */
export const PROJECT_HOME: ProjectHome = projectHome(
  JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")),
);

/** Where a version's GitHub release keeps its archives (the tag is `v<version>`). */
export function releaseUrl(version: string, home: ProjectHome = PROJECT_HOME): string {
  return `${home.repositoryUrl}/releases/download/v${version}`;
}
