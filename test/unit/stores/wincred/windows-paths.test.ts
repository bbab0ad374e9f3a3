import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { automountRoot, linuxPathOf } from "../../../../src/stores/wincred/windows-paths.ts";

describe("automountRoot", () => {
  const cases: [string, string | undefined, string][] = [
    ["no /etc/wsl.conf: /mnt/", undefined, "/mnt/"],
    ["no [automount] section: /mnt/", "[boot]\nsystemd=true\n", "/mnt/"],
    ["root given without a trailing slash", "[automount]\nroot = /win\n", "/win/"],
    ["root given with one", "[automount]\nenabled = true\nroot = /win/\n", "/win/"],
    ["quoted, section and key in other cases", '[AutoMount]\r\nRoot="/drives/"\r\n', "/drives/"],
    ["a root in another section is not the drives'", "[interop]\nroot = /x/\n", "/mnt/"],
    ["a comment after the value", "[automount]\nroot = /w/ # drives\n", "/w/"],
    ["a commented-out root", "[automount]\n# root = /w/\n", "/mnt/"],
    ["a relative root is not taken", "[automount]\nroot = w\n", "/mnt/"],
    ["the last of two wins", "[automount]\nroot = /a/\nroot = /b/\n", "/b/"],
  ];
  for (const [name, text, expected] of cases)
    test(name, () => assert.equal(automountRoot(text), expected));
});

describe("linuxPathOf, as wslpath -u maps", () => {
  const cases: [string, string, string, string | undefined][] = [
    [
      "a space and non-ASCII letters are kept",
      "C:\\Users\\Jörg Müller\\AppData\\Roaming",
      "/mnt/",
      "/mnt/c/Users/Jörg Müller/AppData/Roaming",
    ],
    ["the drive letter in lower case", "D:\\Data", "/mnt/", "/mnt/d/Data"],
    ["under another automount root", "c:\\x", "/win/", "/win/c/x"],
    ["a drive's root", "C:\\", "/mnt/", "/mnt/c"],
    ["forward slashes and doubled ones", "C:/a//b\\", "/mnt/", "/mnt/c/a/b"],
    ["a UNC path has no drive", "\\\\server\\share\\x", "/mnt/", undefined],
    ["a relative path has none", "Users\\x", "/mnt/", undefined],
  ];
  for (const [name, windows, root, expected] of cases)
    test(name, () => assert.equal(linuxPathOf(windows, root), expected));
});
