/**
 * The Windows binaries' PE headers: win-arm64 cannot run here (neither Wine nor qemu-user
 * runs an ARM64 Windows program), so its headers are what can be checked: an ARM64 console
 * program, as win-x64 is an x64 one. Neither embeds the keychain addon.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { before, describe, test } from "node:test";
import { TARGETS } from "../../scripts/targets.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** IMAGE_FILE_MACHINE_AMD64 and IMAGE_FILE_MACHINE_ARM64 (winnt.h). */
const MACHINE = { "win-x64": 0x8664, "win-arm64": 0xaa64 } as const;
const IMAGE_SUBSYSTEM_WINDOWS_CUI = 3;
const PE32_PLUS = 0x20b;

interface PeHeaders {
  readonly machine: number;
  readonly magic: number;
  readonly subsystem: number;
}

/** The COFF machine, optional-header magic and subsystem of a PE file. */
function peHeaders(file: Buffer): PeHeaders {
  assert.equal(file.toString("latin1", 0, 2), "MZ", "no DOS header");
  const pe = file.readUInt32LE(0x3c);
  assert.equal(file.toString("latin1", pe, pe + 4), "PE\0\0", "no PE signature");
  const optional = pe + 24;
  return {
    machine: file.readUInt16LE(pe + 4),
    magic: file.readUInt16LE(optional),
    // At 68 in both PE32 and PE32+ optional headers.
    subsystem: file.readUInt16LE(optional + 68),
  };
}

describe("the Windows binaries' PE headers", () => {
  const binaries = new Map<keyof typeof MACHINE, Buffer>();
  before(() => {
    for (const target of ["win-x64", "win-arm64"] as const) {
      execFileSync("npx", ["tsx", "scripts/build.ts", "--target", target], {
        cwd: ROOT,
        stdio: "ignore",
      });
      binaries.set(
        target,
        readFileSync(path.join(ROOT, "dist", target, "terraform-credentials-keychain.exe")),
      );
    }
  });

  for (const target of ["win-x64", "win-arm64"] as const) {
    test(`${target} is a 64-bit console program for machine 0x${MACHINE[target].toString(16)}`, () => {
      const headers = peHeaders(binaries.get(target)!);
      assert.equal(headers.machine, MACHINE[target]);
      assert.equal(headers.magic, PE32_PLUS);
      assert.equal(headers.subsystem, IMAGE_SUBSYSTEM_WINDOWS_CUI);
    });

    test(`${target} embeds no native addon`, () => {
      assert.equal(TARGETS[target].keyring, undefined);
      // The build copies an addon it embeds into its work directory.
      assert.equal(existsSync(path.join(ROOT, "build", target, "keyring.node")), false);
    });
  }
});
