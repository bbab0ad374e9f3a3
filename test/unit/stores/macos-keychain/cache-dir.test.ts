import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { addonCacheDir } from "../../../../src/stores/macos-keychain/cache-dir.ts";
import { CliError } from "../../../../src/errors.ts";

interface Case {
  readonly name: string;
  readonly platform: NodeJS.Platform;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homedir: string;
  readonly expected: string;
}

const cases: readonly Case[] = [
  {
    name: "linux uses an absolute XDG_CACHE_HOME",
    platform: "linux",
    env: { XDG_CACHE_HOME: "/var/cache/tester" },
    homedir: "/home/tester",
    expected: "/var/cache/tester/terraform-credentials-keychain",
  },
  {
    name: "linux cleans a trailing slash off XDG_CACHE_HOME",
    platform: "linux",
    env: { XDG_CACHE_HOME: "/var/cache/tester/" },
    homedir: "/home/tester",
    expected: "/var/cache/tester/terraform-credentials-keychain",
  },
  {
    name: "linux ignores a relative XDG_CACHE_HOME, as the XDG spec requires",
    platform: "linux",
    env: { XDG_CACHE_HOME: "relative/cache" },
    homedir: "/home/tester",
    expected: "/home/tester/.cache/terraform-credentials-keychain",
  },
  {
    name: "linux ignores an empty XDG_CACHE_HOME",
    platform: "linux",
    env: { XDG_CACHE_HOME: "" },
    homedir: "/home/tester",
    expected: "/home/tester/.cache/terraform-credentials-keychain",
  },
  {
    name: "linux falls back to ~/.cache when XDG_CACHE_HOME is unset",
    platform: "linux",
    env: {},
    homedir: "/home/tester",
    expected: "/home/tester/.cache/terraform-credentials-keychain",
  },
  {
    name: "other Unixes follow the Linux rules",
    platform: "freebsd",
    env: { XDG_CACHE_HOME: "/xdg" },
    homedir: "/home/tester",
    expected: "/xdg/terraform-credentials-keychain",
  },
  {
    name: "darwin uses ~/Library/Caches",
    platform: "darwin",
    env: {},
    homedir: "/Users/tester",
    expected: "/Users/tester/Library/Caches/terraform-credentials-keychain",
  },
  {
    name: "darwin ignores XDG_CACHE_HOME",
    platform: "darwin",
    env: { XDG_CACHE_HOME: "/Users/tester/.cache" },
    homedir: "/Users/tester",
    expected: "/Users/tester/Library/Caches/terraform-credentials-keychain",
  },
  {
    name: "win32 uses LOCALAPPDATA when set",
    platform: "win32",
    env: { LOCALAPPDATA: "D:\\Profiles\\tester\\Local" },
    homedir: "C:\\Users\\tester",
    expected: "D:\\Profiles\\tester\\Local\\terraform-credentials-keychain\\cache",
  },
  {
    name: "win32 falls back to AppData\\Local in the home directory when LOCALAPPDATA is unset",
    platform: "win32",
    env: {},
    homedir: "C:\\Users\\tester",
    expected: "C:\\Users\\tester\\AppData\\Local\\terraform-credentials-keychain\\cache",
  },
  {
    name: "win32 ignores XDG_CACHE_HOME",
    platform: "win32",
    env: { XDG_CACHE_HOME: "C:\\xdg" },
    homedir: "C:\\Users\\tester",
    expected: "C:\\Users\\tester\\AppData\\Local\\terraform-credentials-keychain\\cache",
  },
  {
    name: "win32 treats an empty LOCALAPPDATA as unset",
    platform: "win32",
    env: { LOCALAPPDATA: "" },
    homedir: "C:\\Users\\tester",
    expected: "C:\\Users\\tester\\AppData\\Local\\terraform-credentials-keychain\\cache",
  },
  {
    name: "win32 ignores a relative LOCALAPPDATA, as Linux does a relative XDG_CACHE_HOME",
    platform: "win32",
    env: { LOCALAPPDATA: "Local" },
    homedir: "C:\\Users\\tester",
    expected: "C:\\Users\\tester\\AppData\\Local\\terraform-credentials-keychain\\cache",
  },
];

for (const { name, platform, env, homedir, expected } of cases) {
  test(name, () => {
    const dir = addonCacheDir(env, platform, homedir);
    assert.equal(dir, expected);
    const paths = platform === "win32" ? path.win32 : path.posix;
    assert.ok(paths.isAbsolute(dir), `${dir} is not absolute`);
  });
}

const refused: readonly Omit<Case, "expected">[] = [
  { name: "linux refuses an empty HOME", platform: "linux", env: {}, homedir: "" },
  {
    name: "linux refuses an empty HOME with an empty XDG_CACHE_HOME",
    platform: "linux",
    env: { XDG_CACHE_HOME: "" },
    homedir: "",
  },
  { name: "linux refuses a relative HOME", platform: "linux", env: {}, homedir: "home/tester" },
  { name: "darwin refuses an empty HOME", platform: "darwin", env: {}, homedir: "" },
  { name: "darwin refuses a relative HOME", platform: "darwin", env: {}, homedir: "." },
  {
    name: "win32 refuses an empty home without LOCALAPPDATA",
    platform: "win32",
    env: {},
    homedir: "",
  },
  {
    name: "win32 refuses a home on the current drive's root without LOCALAPPDATA",
    platform: "win32",
    env: { LOCALAPPDATA: "Local" },
    homedir: "\\Users\\tester",
  },
];

for (const { name, platform, env, homedir } of refused) {
  test(`${name}, instead of a cache under the working directory`, () => {
    assert.throws(
      () => addonCacheDir(env, platform, homedir),
      (error: unknown) => {
        assert.ok(error instanceof CliError);
        assert.match(error.message, /^the home directory is (empty|relative)/);
        return true;
      },
    );
  });
}

test("linux with an empty HOME still uses an absolute XDG_CACHE_HOME", () => {
  assert.equal(
    addonCacheDir({ XDG_CACHE_HOME: "/xdg" }, "linux", ""),
    "/xdg/terraform-credentials-keychain",
  );
});
