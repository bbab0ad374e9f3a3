/**
 * macOS kills an arm64 binary at exec unless it carries a code signature whose page hashes
 * all match the file, and refuses any binary whose signature does not match. This builds
 * both darwin targets and reads their signatures with the project's own Mach-O reader.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { before, describe, test } from "node:test";
import {
  checkSignature,
  isValidSignature,
  parseMachO,
  withoutSignature,
} from "../../scripts/macho.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const binaries: Record<string, Buffer> = {};

// On Windows npx is a .cmd that execFileSync cannot start; Linux and macOS run this.
describe(
  "the macOS binaries' code signatures",
  {
    skip:
      process.platform === "win32"
        ? "SKIP: the darwin builds are checked on Linux and macOS"
        : false,
  },
  () => {
    before(() => {
      for (const target of ["darwin-arm64", "darwin-x64"]) {
        execFileSync("npx", ["tsx", "scripts/build.ts", "--target", target], {
          cwd: ROOT,
          stdio: "ignore",
        });
        binaries[target] = readFileSync(
          path.join(ROOT, "dist", target, "terraform-credentials-keychain"),
        );
      }
    });

    test("darwin-arm64 is signed, and every page hash matches the file", () => {
      const file = binaries["darwin-arm64"]!;
      assert.equal(parseMachO(file).cpu, "arm64");
      const check = checkSignature(file);
      assert.ok(check.present, "no LC_CODE_SIGNATURE");
      for (const directory of check.directories) {
        assert.equal(directory.mismatched, 0);
        assert.equal(directory.codeLimit, check.offset, "the signature leaves bytes unsigned");
      }
      assert.ok(isValidSignature(check));
    });

    test("darwin-x64 is validly signed or not signed at all", () => {
      const file = binaries["darwin-x64"]!;
      assert.equal(parseMachO(file).cpu, "x64");
      const check = checkSignature(file);
      assert.ok(!check.present || isValidSignature(check), JSON.stringify(check));
    });

    test("the reader sees one changed byte, and a removed signature leaves a well-formed file", () => {
      const file = Buffer.from(binaries["darwin-arm64"]!);
      const macho = parseMachO(file);
      const text = macho.segments.find((segment) => segment.name === "__TEXT")!;
      const at = text.fileoff + Math.floor(text.filesize / 2);
      file[at] = file[at]! ^ 0xff;
      const check = checkSignature(file);
      assert.ok(check.present);
      assert.deepEqual(
        check.directories.map((directory) => directory.mismatched),
        check.directories.map(() => 1),
      );
      assert.equal(isValidSignature(check), false);

      const unsigned = withoutSignature(file);
      const after = parseMachO(unsigned);
      assert.equal(checkSignature(unsigned).present, false);
      assert.equal(after.commands.length, macho.commands.length - 1);
      const linkedit = after.segments.find((segment) => segment.name === "__LINKEDIT")!;
      assert.equal(linkedit.fileoff + linkedit.filesize, unsigned.length);
    });
  },
);
