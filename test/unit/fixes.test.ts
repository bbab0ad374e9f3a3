import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { FIXES, fixFor, renderFix, type Situation } from "../../src/fixes.ts";

const USAGE = readFileSync(path.join(import.meta.dirname, "../../docs/usage.md"), "utf8")
  // Markdown tables escape the pipe.
  .replace(/\\\|/g, "|");

describe("fixes", () => {
  test("docs/usage.md shows the command of every fix, as the helper prints it", () => {
    for (const situation of Object.keys(FIXES) as Situation[]) {
      const { command } = fixFor(situation, {
        HELPER: "terraform-credentials-keychain",
        VARIABLES: "TF_TOKEN_app_terraform_io",
        ARGS: "",
      });
      if (command !== undefined) assert.ok(USAGE.includes(command), `${situation}: ${command}`);
    }
  });

  test('a fix with a command reads as run "COMMAND" (what it changes); one without says what to do', () => {
    assert.equal(
      renderFix(fixFor("keyring-locked")),
      `run "${FIXES["keyring-locked"].command}" (${FIXES["keyring-locked"].effect})`,
    );
    assert.equal(renderFix(fixFor("keyring-on-desktop")), FIXES["keyring-on-desktop"].effect);
  });

  test("placeholders not given stay as they are", () => {
    assert.equal(fixFor("keyring-locked").command, FIXES["keyring-locked"].command);
    assert.match(fixFor("keyring-locked").command ?? "", /^echo -n PASSWORD \| /);
  });

  test("no fix's text holds a line break (messages are one line)", () => {
    for (const fix of Object.values(FIXES)) assert.doesNotMatch(renderFix(fix), /[\r\n]/);
  });
});
