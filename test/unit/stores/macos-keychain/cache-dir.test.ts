import assert from "node:assert/strict";
import { test } from "node:test";
import { addonCacheDir } from "../../../../src/stores/macos-keychain/cache-dir.ts";
import { CliError } from "../../../../src/errors.ts";

test("the addon cache is in ~/Library/Caches", () => {
  assert.equal(
    addonCacheDir("/Users/tester"),
    "/Users/tester/Library/Caches/terraform-credentials-keychain",
  );
});

for (const [name, homedir] of [
  ["an empty HOME", ""],
  ["a relative HOME", "."],
  ["a HOME relative to the working directory", "Users/tester"],
] as const) {
  test(`${name} is refused, instead of a cache under the working directory`, () => {
    assert.throws(
      () => addonCacheDir(homedir),
      (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.match(error.message, /^the home directory is (empty|relative)/);
        return true;
      },
    );
  });
}
