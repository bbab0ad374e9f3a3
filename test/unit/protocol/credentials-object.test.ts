import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inspect } from "node:util";
import { CliError, ExitCode } from "../../../src/errors.ts";
import {
  MAX_CREDENTIALS_BYTES,
  parseCredentialsObject,
} from "../../../src/protocol/credentials-object.ts";

const SOURCE = "the credentials object on stdin";
const SECRET = "SECRET-abc123";

/** The error `parseCredentialsObject` throws for `text`; fails the test when it returns. */
function refusal(text: string): CliError {
  try {
    parseCredentialsObject(text, SOURCE);
  } catch (error) {
    assert.ok(error instanceof CliError, `expected a CliError, got ${String(error)}`);
    return error;
  }
  assert.fail(`accepted ${JSON.stringify(text)}`);
}

/** Everything an error could show: its message and stack, and those of its causes. */
function everythingShown(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 10; depth += 1) {
    if (current instanceof Error) {
      parts.push(current.message, current.stack ?? "");
      current = current.cause;
    } else {
      parts.push(inspect(current));
      current = undefined;
    }
  }
  return parts.join("\n");
}

describe("parseCredentialsObject accepts", () => {
  const accepted = [
    ["a token", '{"token":"abc"}'],
    ["an empty token, which Terraform uses as a real credential", '{"token":""}'],
    ["an object without a token", "{}"],
    [
      "extra properties beside the token",
      '{"token":"abc","organization":"acme","expires":1700000000}',
    ],
    ["extra properties without a token", '{"organization":"acme"}'],
    [
      "nested objects and arrays",
      '{"token":"abc","meta":{"scopes":["read","write"],"inner":{"x":null}}}',
    ],
    ["a property called __proto__", '{"__proto__":{"token":5},"token":"abc"}'],
    ["unicode and escapes", '{"token":"ü☃😀\\u0000\\"quoted\\""}'],
  ] as const;
  for (const [what, text] of accepted) {
    test(`${what}, returned unchanged`, () => {
      assert.equal(parseCredentialsObject(text, SOURCE), text);
    });
  }

  test("returns the text trimmed of surrounding white space, the inside untouched", () => {
    const inner = '{ "token" : "abc",\n  "n": 12345678901234567890, "e": 1.0e+2 }';
    assert.equal(parseCredentialsObject(` \t\r\n${inner}\r\n\n `, SOURCE), inner);
  });
});

describe("parseCredentialsObject refuses", () => {
  const refused = [
    ["text that is not JSON", "not json"],
    ["an array", "[]"],
    ["an array holding an object", '[{"token":"abc"}]'],
    ["a string", '"abc"'],
    ["a number", "42"],
    ["null", "null"],
    ["true", "true"],
    ["a number token", '{"token":5}'],
    ["a null token", '{"token":null}'],
    ["an object token", '{"token":{}}'],
    ["an array token", '{"token":["abc"]}'],
    ["a boolean token", '{"token":true}'],
    ["empty input", ""],
    ["white space only", " \n\t\r\n "],
    ["two objects", "{} {}"],
    ["an object followed by a letter", "{}x"],
    ["an object followed by garbage", '{"token":"a"}garbage'],
    ["a trailing comma", '{"token":"a",}'],
    ["single quotes", "{'token':'a'}"],
    ["an unterminated object", '{"token":"a"'],
    // Only JSON's four white-space characters may surround the object (RFC 8259), not
    // what JavaScript's trim() also removes; the one BOM a file may start with is taken off
    // by the UTF-8 decoder before this, so a BOM here is a second one.
    ["no-break spaces around it", '\u00a0{"token":"a"}\u00a0'],
    ["a line separator after it", '{"token":"a"}\u2028'],
    ["an ideographic space before it", '\u3000{"token":"a"}'],
    ["a vertical tab before it", '\v{"token":"a"}'],
    ["a form feed after it", '{"token":"a"}\f'],
    ["a (second) byte order mark before it", '\ufeff{"token":"a"}'],
  ] as const;
  for (const [what, text] of refused) {
    test(`${what}, with a CliError naming the source`, () => {
      const error = refusal(text);
      assert.equal(error.exitCode, ExitCode.Failure);
      assert.ok(error.message.startsWith(`${SOURCE} `), error.message);
      assert.ok(!error.message.includes("\n"), "the message is one line");
    });
  }

  test("empty input, saying it is empty", () => {
    assert.equal(
      refusal("  \n").message,
      `${SOURCE} is empty: expected a JSON object such as {"token":"..."}`,
    );
  });

  test("a non-object, saying what JSON type it got", () => {
    assert.equal(
      refusal("[1]").message,
      `${SOURCE} is JSON array, not an object: expected {"token":"..."}`,
    );
    assert.equal(
      refusal("null").message,
      `${SOURCE} is JSON null, not an object: expected {"token":"..."}`,
    );
    assert.equal(
      refusal("7").message,
      `${SOURCE} is JSON number, not an object: expected {"token":"..."}`,
    );
  });

  test("a token that is not a string, saying so", () => {
    assert.equal(refusal('{"token":5}').message, `${SOURCE} has a "token" that is not a string`);
  });

  const withSecret = [
    ["not JSON", SECRET],
    ["an object followed by garbage", `{"token":"${SECRET}"}garbage`],
    ["two objects", `{"token":"${SECRET}"} {"token":"${SECRET}"}`],
    ["a trailing comma", `{"token":"${SECRET}",}`],
    ["an unterminated string", `{"token":"${SECRET}`],
    ["a string", `"${SECRET}"`],
    ["an array", `["${SECRET}"]`],
    ["an array token", `{"token":["${SECRET}"]}`],
    ["an object token", `{"token":{"value":"${SECRET}"}}`],
    ["a number token beside a secret", `{"token":5,"refresh":"${SECRET}"}`],
  ] as const;
  for (const [what, text] of withSecret) {
    test(`${what} without the secret in the message, stack or cause`, () => {
      const shown = everythingShown(refusal(text));
      assert.ok(!shown.includes(SECRET), shown);
      assert.ok(!shown.includes("abc123"), shown);
    });
  }
});

test("the size cap leaves room for any real credentials object", () => {
  assert.ok(MAX_CREDENTIALS_BYTES >= 16 * 1024, String(MAX_CREDENTIALS_BYTES));
});
