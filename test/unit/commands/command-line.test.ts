import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { commandLine } from "../../../src/commands/command-line.ts";

describe("commandLine: a next step that runs as printed", () => {
  test("POSIX: safe words bare, others single-quoted with ' escaped", () => {
    assert.equal(
      commandLine(["/home/a b/tfck", "--service", "it's", "install"], "linux"),
      "'/home/a b/tfck' --service 'it'\\''s' install",
    );
  });

  test("Windows: a plain path runs bare in PowerShell", () => {
    assert.equal(
      commandLine(
        ["C:\\Users\\me\\AppData\\Roaming\\terraform.d\\plugins\\tfck.exe", "doctor"],
        "win32",
      ),
      "C:\\Users\\me\\AppData\\Roaming\\terraform.d\\plugins\\tfck.exe doctor",
    );
  });

  test("Windows: a quoted program gets PowerShell's call operator, and ' is doubled", () => {
    assert.equal(
      commandLine(["Z:\\Program Files\\tfck.exe", "--service", "it's", "install"], "win32"),
      "& 'Z:\\Program Files\\tfck.exe' --service 'it''s' install",
    );
  });
});
