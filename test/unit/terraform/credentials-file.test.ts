import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CliError, ExitCode } from "../../../src/errors.ts";
import {
  credentialsFileWithout,
  parseCredentialsFile,
} from "../../../src/terraform/credentials-file.ts";

const FILE = "/home/user/.terraform.d/credentials.tfrc.json";
const SECRET = "SECRET-tok3n.atlasv1.abcdef";
const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Asserts that `text` is refused with exactly `message`, which never holds the secret. */
function assertRefused(text: string, message: string): void {
  assert.throws(
    () => parseCredentialsFile(text, FILE),
    (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.equal(error.message, message);
      assert.equal(error.exitCode, ExitCode.Failure);
      assert.ok(!error.message.includes(SECRET), "the message never holds the token");
      assert.ok(!String(error.stack).includes(SECRET), "nor does the stack");
      assert.equal(error.cause, undefined, "no cause that could carry the text");
      return true;
    },
  );
}

describe("parseCredentialsFile", () => {
  test("a file as terraform login writes it gives one host per entry", () => {
    const text = json({
      credentials: {
        "app.terraform.io": { token: SECRET },
        "tfe.example.com": { token: "other" },
      },
    });
    const parsed = parseCredentialsFile(text, FILE);
    assert.deepEqual(parsed.hosts, [
      { name: "app.terraform.io", object: `{"token":"${SECRET}"}`, line: 3 },
      { name: "tfe.example.com", object: '{"token":"other"}', line: 6 },
    ]);
  });

  test("extra properties of a host are kept, nested ones too", () => {
    const object = { token: SECRET, organization: "acme", nested: { list: [1, "two", null] } };
    const parsed = parseCredentialsFile(json({ credentials: { "app.example.com": object } }), FILE);
    assert.equal(parsed.hosts.length, 1);
    assert.equal(parsed.hosts[0]?.name, "app.example.com");
    assert.deepEqual(JSON.parse(parsed.hosts[0].object), object);
  });

  test("a host without a token, or with an empty object, is still listed", () => {
    const parsed = parseCredentialsFile(
      json({ credentials: { "a.example.com": {}, "b.example.com": { other: true } } }),
      FILE,
    );
    assert.deepEqual(parsed.hosts, [
      { name: "a.example.com", object: "{}", line: 3 },
      { name: "b.example.com", object: '{"other":true}', line: 4 },
    ]);
  });

  test("host names are given as written, not normalised", () => {
    const parsed = parseCredentialsFile(json({ credentials: { "App.Example.COM": {} } }), FILE);
    assert.deepEqual(
      parsed.hosts.map((host) => host.name),
      ["App.Example.COM"],
    );
  });

  test("a file without credentials, or an empty object, has no hosts", () => {
    assert.deepEqual(parseCredentialsFile("{}", FILE).hosts, []);
    assert.deepEqual(parseCredentialsFile('{"credentials": {}}', FILE).hosts, []);
    assert.deepEqual(parseCredentialsFile('{"other": 1}', FILE).hosts, []);
  });

  test("each host's object keeps every token's bytes: numbers are not rounded, strings not re-escaped", () => {
    const text =
      '{"credentials": {"a.example.com": {"token":"t", "n": 12345678901234567890, "big": 1e400,\n "z": -0, "s": "\\u00e9} \\" x"}}}';
    assert.deepEqual(parseCredentialsFile(text, FILE).hosts, [
      {
        name: "a.example.com",
        object: '{"token":"t","n":12345678901234567890,"big":1e400,"z":-0,"s":"\\u00e9} \\" x"}',
        line: 1,
      },
    ]);
  });

  test("every member is listed, __proto__ and a repeated name included", () => {
    const text = '{"credentials": {"__proto__": {"token":"p"}, "a.b": {}, "a.b": {"x":1}}}';
    assert.deepEqual(
      parseCredentialsFile(text, FILE).hosts.map((host) => host.name),
      ["__proto__", "a.b", "a.b"],
    );
  });

  test("white space around the JSON is fine", () => {
    assert.equal(
      parseCredentialsFile('\n  {"credentials":{"a.example.com":{}}}\n\n', FILE).hosts.length,
      1,
    );
  });

  const notJson: ReadonlyArray<readonly [string, string]> = [
    ["an empty file", ""],
    ["a truncated file", `{"credentials": {"a.example.com": {"token": "${SECRET}"`],
    ["HCL instead of JSON", `credentials "a.example.com" {\n  token = "${SECRET}"\n}\n`],
    ["two objects", `{"credentials": {}} {"token": "${SECRET}"}`],
    ["a trailing comma", `{"credentials": {"a.example.com": {"token": "${SECRET}"},}}`],
  ];
  for (const [name, text] of notJson) {
    test(`${name} is not JSON: refused naming the file, never quoting it`, () => {
      assertRefused(text, `${FILE} is not valid JSON; fix it or move its tokens by hand`);
    });
  }

  const shapeMessage = `${FILE} is not a Terraform credentials file ({"credentials": {"HOST": {"token": "..."}}})`;
  const wrongShapes: ReadonlyArray<readonly [string, string]> = [
    ["a top-level array", `[{"token": "${SECRET}"}]`],
    ["a top-level string", JSON.stringify(SECRET)],
    ["null", "null"],
    ["a number", "42"],
    ["credentials as an array", `{"credentials": [{"token": "${SECRET}"}]}`],
    ["credentials as null", '{"credentials": null}'],
    ["credentials as a string", `{"credentials": "${SECRET}"}`],
  ];
  // A bad host is the importer's to refuse, host by host: the file as a whole still parses.
  const badHosts: ReadonlyArray<readonly [string, string, unknown]> = [
    ["the token itself", `{"credentials": {"a.example.com": "${SECRET}"}}`, SECRET],
    ["an array", `{"credentials": {"a.example.com": ["${SECRET}"]}}`, [SECRET]],
    ["null", '{"credentials": {"a.example.com": null}}', null],
    [
      "an object with a number token",
      '{"credentials": {"a.example.com": {"token": 12345}}}',
      { token: 12345 },
    ],
  ];
  for (const [name, text, value] of badHosts) {
    test(`a host whose value is ${name} is passed on as its JSON, for the importer to refuse`, () => {
      const parsed = parseCredentialsFile(text, FILE);
      assert.equal(parsed.hosts.length, 1);
      assert.equal(parsed.hosts[0]?.name, "a.example.com");
      assert.deepEqual(JSON.parse(parsed.hosts[0].object), value);
    });
  }
  for (const [name, text] of wrongShapes) {
    test(`${name} is refused as not a credentials file, never quoting it`, () => {
      assertRefused(text, shapeMessage);
    });
  }
});

describe("credentialsFileWithout", () => {
  const text = json({
    credentials: {
      "a.example.com": { token: "a" },
      "b.example.com": { token: "b", extra: [1] },
    },
  });
  const without = (source: string, removed: number[]) =>
    credentialsFileWithout(parseCredentialsFile(source, FILE), new Set(removed));

  test("removing the first host keeps the others as they were written", () => {
    assert.equal(
      without(text, [0]),
      '{\n  "credentials": {\n    "b.example.com": {\n      "token": "b",\n      "extra": [\n        1\n      ]\n    }\n  }\n}',
    );
  });

  test("removing the last host keeps the others as they were written", () => {
    assert.equal(
      without(text, [1]),
      '{\n  "credentials": {\n    "a.example.com": {\n      "token": "a"\n    }\n  }\n}',
    );
  });

  test("the bytes of what stays are kept, odd spacing and number spellings included", () => {
    const odd = '{ "x" : 1.50,"credentials":{ "a":{"n":1e400} ,\t"b" :{"n":-0}, "c":{} } }\n';
    assert.equal(without(odd, [1]), '{ "x" : 1.50,"credentials":{ "a":{"n":1e400}, "c":{} } }\n');
  });

  test("removing every host of a file with nothing else gives undefined: the file should go", () => {
    assert.equal(without(text, [0, 1]), undefined);
  });

  test("a document without credentials and nothing else gives undefined", () => {
    assert.equal(without("{}", []), undefined);
    assert.equal(without('{"credentials": {}}', []), undefined);
  });

  test("other top-level keys are kept, so the file stays even with no host left", () => {
    assert.equal(
      without('{"comment": "kept", "credentials": {"a.example.com": {"token": "a"}}, "n": 1}', [0]),
      '{"comment": "kept", "credentials": {}, "n": 1}',
    );
  });

  test("removing nothing keeps the text as it is", () => {
    assert.equal(without(text, []), text);
  });

  test("of a repeated name, only the member at the index goes", () => {
    assert.equal(
      without('{"credentials": {"a": {"t":1}, "a": {"t":2}}}', [1]),
      '{"credentials": {"a": {"t":1}}}',
    );
  });
});
