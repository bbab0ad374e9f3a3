import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { projectHome, releaseUrl } from "../../../scripts/project-home.ts";

const REPO = "https://github.com/acme/helper";
const good = {
  repository: { type: "git", url: `git+${REPO}.git` },
  homepage: `${REPO}#readme`,
  bugs: { url: `${REPO}/issues` },
};

describe("the project's canonical home in package.json", () => {
  test("the repository's web address comes from repository.url", () => {
    const home = projectHome(good);
    assert.equal(home.repositoryUrl, REPO);
    assert.deepEqual(home.repository, good.repository);
    assert.equal(releaseUrl("1.2.3", home), `${REPO}/releases/download/v1.2.3`);
  });

  const bad: Array<[string, object, RegExp]> = [
    ["no repository", { ...good, repository: undefined }, /repository must be/],
    [
      "a repository outside GitHub",
      { ...good, repository: { type: "git", url: "git+https://gitlab.com/a/b.git" } },
      /repository must be/,
    ],
    [
      "a homepage elsewhere",
      { ...good, homepage: "https://example.com" },
      /homepage must lie under/,
    ],
    [
      "a homepage in a look-alike repository",
      { ...good, homepage: `${REPO}-fork` },
      /homepage must lie under/,
    ],
    ["no bugs URL", { ...good, bugs: undefined }, /bugs\.url must lie under/],
  ];
  for (const [what, json, message] of bad) {
    test(`refuses ${what}`, () => {
      assert.throws(() => projectHome(json), message);
    });
  }
});
