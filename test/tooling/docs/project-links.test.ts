/**
 * Honest install routes: every link to the project's own GitHub organisation in the README,
 * docs/ and the archive's README lies under package.json's repository (scripts/project-home.ts),
 * and every relative link names a file that exists.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { DOCUMENTS } from "../../support/documents.ts";
import { ROOT } from "../../../scripts/packages.ts";
import { PROJECT_HOME } from "../../../scripts/project-home.ts";

const owner = new URL(PROJECT_HOME.repositoryUrl).pathname.split("/")[1]!;

for (const document of DOCUMENTS) {
  test(`${document}: links to the project lie under package.json's repository, relative links resolve`, () => {
    const text = readFileSync(path.join(ROOT, document), "utf8");
    const own = [...text.matchAll(/https:\/\/github\.com\/([\w.-]+)\/[^\s)>\]`"']*/g)].filter(
      (match) => match[1] === owner,
    );
    for (const [url] of own) {
      assert.ok(
        url.startsWith(`${PROJECT_HOME.repositoryUrl}/`) ||
          url === PROJECT_HOME.repositoryUrl ||
          url.startsWith(`${PROJECT_HOME.repositoryUrl}.git`),
        `${document}: ${url}`,
      );
    }
    for (const [, target] of text.matchAll(/\]\(((?!https?:|#)[^)#\s]+)(?:#[^)]*)?\)/g)) {
      assert.ok(
        existsSync(path.join(ROOT, path.dirname(document), target!)),
        `${document}: ${target}`,
      );
    }
  });
}

test("the README names the clone URL and the releases page from package.json", () => {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  assert.ok(readme.includes(`git clone ${PROJECT_HOME.repositoryUrl}.git`));
  assert.ok(readme.includes(`${PROJECT_HOME.repositoryUrl}/releases`));
  assert.ok(readme.includes(PROJECT_HOME.bugs));
});
