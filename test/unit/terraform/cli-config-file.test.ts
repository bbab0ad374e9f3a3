// The reader of CLI config files (terraform/cli-config-file.ts over terraform/hcl/) against
// the rule table of test/support/cli-config-cases.ts, one case per rule, each naming the Go
// function it follows; test/e2e/terraform-reading.test.ts has the real terraform judge them.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  loadConfigFile,
  shimPanic,
  type FileReading,
} from "../../../src/terraform/cli-config-file.ts";
import { CASES, type Outcome } from "../../support/cli-config-cases.ts";

/** A reading in the table's terms. */
function outcomeOf(reading: FileReading, file: string): Outcome | { unmodelled: string } {
  switch (reading.kind) {
    case "dropped":
      return { dropped: reading.diagnostic.replace(`Error parsing ${file}: `, "") };
    case "panic":
      return { panic: true };
    case "unmodelled":
      return { unmodelled: reading.message };
    case "read": {
      // hcl2shim, when credentialsSource converts the objects (every host here is valid).
      if (reading.credentials.some(({ attributes }) => shimPanic(attributes) !== undefined)) {
        return { panic: true };
      }
      const helpers = Object.fromEntries(reading.helpers.map(({ label, args }) => [label, args]));
      const tokens = Object.fromEntries(
        reading.credentials.map(({ label, attributes }) => {
          const token = attributes.get("token");
          return [label, token?.type.kind === "string" ? (token.value as string) : null];
        }),
      );
      return {
        ...(Object.keys(helpers).length > 0 ? { helpers } : {}),
        ...(Object.keys(tokens).length > 0 ? { tokens } : {}),
      };
    }
  }
}

describe("loadConfigFile: what Terraform makes of one CLI config file", () => {
  for (const { name, rule, text, expect } of CASES) {
    test(`${name} (${rule})`, () => {
      assert.deepEqual(outcomeOf(loadConfigFile("F", text), "F"), expect);
    });
  }

  test("a message never quotes the file's text, which may hold a token", () => {
    for (const text of [
      "x = s3cr3t.token\n",
      'credentials "h" { s3cr3t }\n',
      'credentials "h" { token = "\\777s3cr3t" }\n',
      'credentials "h" { n = 99999999999999999999 }\n',
      '{"a": s3cr3t}',
    ]) {
      const reading = loadConfigFile("F", text);
      assert.ok(reading.kind === "dropped" || reading.kind === "panic", text);
      assert.doesNotMatch(JSON.stringify(reading), /s3cr3t|99999/);
    }
  });
});
