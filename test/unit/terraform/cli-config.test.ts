import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CliError, ExitCode } from "../../../src/errors.ts";
import {
  addCredentialsHelper,
  findCredentialsBlockItems,
  findCredentialsHelpers,
  removeCredentialsBlocks,
  removeCredentialsHelper,
  renderCredentialsHelper,
} from "../../../src/terraform/cli-config.ts";

// Fixtures follow what Terraform and OpenTofu parse: HCL 1 (hcl/scanner/scanner.go), see
// src/terraform/cli-config.ts. Lines are joined here so that "${" stays literal in them.
const lines = (...parts: string[]) => parts.map((part) => `${part}\n`).join("");

const KEYCHAIN = 'credentials_helper "keychain" {}\n';
const WORK = 'credentials_helper "keychain" {\n  args = ["--service", "work"]\n}\n';

/** A realistic CLI config with every kind of top-level item Terraform knows. */
const COMPLEX = lines(
  "# ~/.terraformrc",
  'plugin_cache_dir   = "$HOME/.terraform.d/plugin-cache"',
  "disable_checkpoint = true",
  "",
  '/* credentials_helper "commented" {',
  "     args = []",
  "   } */",
  "",
  "provider_installation {",
  "  filesystem_mirror {",
  '    path    = "/usr/share/terraform/providers"',
  '    include = ["example.com/*/*"]',
  "  }",
  "  direct {",
  '    exclude = ["example.com/*/*"]',
  "  }",
  "}",
  "",
  'host "example.com" {',
  "  services = {",
  '    "modules.v1" = "https://modules.example.com/v1/",',
  "  }",
  "}",
  "",
  'credentials "app.terraform.io" {',
  '  token = "xxxxxx.atlasv1.zzzzzzzzzzzzz"',
  "}",
);

/** Block text hidden in every construct that can hold it. */
const TRICKY = lines(
  '# credentials_helper "line-comment" {}',
  '// credentials_helper "slash-comment" {}',
  '/* credentials_helper "block-comment" {} */',
  'quoted = "credentials_helper \\"string\\" { } }"',
  'braces = "}{"',
  'path   = "C:\\\\dir\\\\"',
  "banner = <<EOF",
  'credentials_helper "heredoc" {',
  "}",
  "  EOF is not alone on this line",
  "EOF",
  "indented = <<-EOT",
  '  credentials_helper "indented-heredoc" {}',
  "  EOT",
  'merged = "${merge({a = "{}"}, {b = "}{"})}"',
  'format = "${format("credentials_helper %q {}", "template")}"',
  'joined = "${join(",", [',
  '  "credentials_helper \\"multi-line\\" {}",',
  '])}"',
  'directive = "%{ if true }}{%{ endif }"',
  'host "example.com" {',
  '  credentials_helper "nested" {}',
  "}",
);

function assertCliError(action: () => unknown, pattern: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof CliError, `expected a CliError, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.doesNotMatch(error.message, /\n/, "the message is one line");
    return true;
  });
}

/** What a test expects of one block: its fields, and the text its range covers. */
interface Expected {
  readonly name: string;
  readonly args?: string[];
  readonly argsUnparsed?: boolean;
  readonly block: string;
}

function found(text: string): Expected[] {
  return findCredentialsHelpers(text).map((helper) => ({
    name: helper.name,
    ...(helper.args === undefined ? {} : { args: helper.args }),
    ...(helper.argsUnparsed ? { argsUnparsed: true } : {}),
    block: text.slice(helper.start, helper.end),
  }));
}

describe("findCredentialsHelpers", () => {
  const cases: Record<string, { text: string; expected: Expected[] }> = {
    "finds nothing in an empty file": { text: "", expected: [] },
    "finds nothing in a whitespace-only file": { text: " \n\t\r\n  ", expected: [] },
    "finds a one-line block": {
      text: KEYCHAIN,
      expected: [{ name: "keychain", block: KEYCHAIN }],
    },
    "finds a block with args over several lines": {
      text: `a = 1\n\n${WORK}\nb = 2\n`,
      expected: [{ name: "keychain", args: ["--service", "work"], block: WORK }],
    },
    "accepts a bare identifier label": {
      text: "credentials_helper keychain {}\n",
      expected: [{ name: "keychain", block: "credentials_helper keychain {}\n" }],
    },
    "matches the block type case-insensitively, as Terraform's decoder does": {
      text: 'Credentials_Helper "keychain" {}\n',
      expected: [{ name: "keychain", block: 'Credentials_Helper "keychain" {}\n' }],
    },
    "accepts a quoted block type, as HCL 1 does": {
      text: '"credentials_helper" "keychain" {}\n',
      expected: [{ name: "keychain", block: '"credentials_helper" "keychain" {}\n' }],
    },
    "decodes escapes in the label": {
      text: 'credentials_helper "key\\u0063hain" {}\n',
      expected: [{ name: "keychain", block: 'credentials_helper "key\\u0063hain" {}\n' }],
    },
    "ignores block text in comments, strings, heredocs, templates and nested blocks": {
      text: TRICKY,
      expected: [],
    },
    "finds the real block after block text in comments, strings, heredocs and templates": {
      text: `${TRICKY}${KEYCHAIN}`,
      expected: [{ name: "keychain", block: KEYCHAIN }],
    },
    "skips a multi-line /* */ comment holding a whole block": {
      text: `/*\n${KEYCHAIN}*/\n${WORK}`,
      expected: [{ name: "keychain", args: ["--service", "work"], block: WORK }],
    },
    "does not end a <<- heredoc at an unindented marker line, as HCL 1 does not": {
      text: lines("x = <<-EOT", '  credentials_helper "hidden" {}', "EOT", "  EOT") + KEYCHAIN,
      expected: [{ name: "keychain", block: KEYCHAIN }],
    },
    "ends a heredoc at an indented marker with a CRLF line break": {
      text: 'x = <<EOF\r\ncredentials_helper "hidden" {}\r\n  EOF\r\ncredentials_helper "k" {}\r\n',
      expected: [{ name: "k", block: 'credentials_helper "k" {}\r\n' }],
    },
    "finds the helper among provider_installation, host and credentials blocks": {
      text: `${COMPLEX}\n${WORK}\n${COMPLEX}`,
      expected: [{ name: "keychain", args: ["--service", "work"], block: WORK }],
    },
    "finds two helpers in file order": {
      text: `${KEYCHAIN}\na = 1\n\ncredentials_helper "other" {\n  args = ["x"]\n}\n`,
      expected: [
        { name: "keychain", block: KEYCHAIN },
        { name: "other", args: ["x"], block: 'credentials_helper "other" {\n  args = ["x"]\n}\n' },
      ],
    },
    "covers a CRLF line break after the block": {
      text: 'a = 1\r\n\r\ncredentials_helper "keychain" {\r\n  args = ["a"]\r\n}\r\nb = 2\r\n',
      expected: [
        {
          name: "keychain",
          args: ["a"],
          block: 'credentials_helper "keychain" {\r\n  args = ["a"]\r\n}\r\n',
        },
      ],
    },
    "ends at the end of a file without a final line break": {
      text: 'a = 1\ncredentials_helper "keychain" {}',
      expected: [{ name: "keychain", block: 'credentials_helper "keychain" {}' }],
    },
    "covers a comma and a comment on the closing line": {
      text: 'credentials_helper "keychain" {}, # installed by hand\nb = 2\n',
      expected: [
        { name: "keychain", block: 'credentials_helper "keychain" {}, # installed by hand\n' },
      ],
    },
    "starts at the start of the line when the block is indented": {
      text: 'a = 1\n  credentials_helper "keychain" {\n  }\n',
      expected: [{ name: "keychain", block: '  credentials_helper "keychain" {\n  }\n' }],
    },
    "covers only the block when the line holds more than the block": {
      text: '/* c */ credentials_helper "keychain" {} x = 1\n',
      expected: [{ name: "keychain", block: 'credentials_helper "keychain" {}' }],
    },
  };
  for (const [behaviour, { text, expected }] of Object.entries(cases)) {
    it(behaviour, () => assert.deepEqual(found(text), expected));
  }

  const helperWith = (body: string) => `credentials_helper "k" {\n${body}\n}\n`;
  const argsCases: Record<string, { body: string; args?: string[]; argsUnparsed?: true }> = {
    "reads an empty args list": { body: "  args = []", args: [] },
    "reads args over several lines with comments and a trailing comma": {
      body: '  args = [\n    "--service", # which entry\n    /* and */ "work",\n  ]',
      args: ["--service", "work"],
    },
    "decodes the escapes HCL 1 knows": {
      body: String.raw`  args = ["a\"b", "c\\d", "t\tn\n", "\u00e9\U0001F600", "\x41\101"]`,
      args: ['a"b', "c\\d", "t\tn\n", "é😀", "AA"],
    },
    "matches args case-insensitively": { body: '  ARGS = ["a"]', args: ["a"] },
    "leaves args undefined when absent, ignoring other attributes": { body: '  other = ["a"]' },
    "marks an interpolation as unparsed": { body: '  args = ["${HOME}/x"]', argsUnparsed: true },
    "marks a single string as unparsed": { body: '  args = "--service"', argsUnparsed: true },
    "marks a number in the list as unparsed": { body: '  args = ["a", 1]', argsUnparsed: true },
    "marks a heredoc in the list as unparsed": {
      body: "  args = [<<EOF\na\nEOF\n  ]",
      argsUnparsed: true,
    },
    "marks args given twice as unparsed": {
      body: '  args = ["a"]\n  args = ["b"]',
      argsUnparsed: true,
    },
    "marks an escape for a raw byte as unparsed": {
      body: String.raw`  args = ["\xff"]`,
      argsUnparsed: true,
    },
  };
  for (const [behaviour, expected] of Object.entries(argsCases)) {
    it(behaviour, () => {
      const [helper, ...rest] = findCredentialsHelpers(helperWith(expected.body));
      assert.equal(rest.length, 0);
      assert.ok(helper !== undefined);
      assert.deepEqual(helper.args, expected.args);
      assert.equal(helper.argsUnparsed, expected.argsUnparsed ?? false);
    });
  }

  const unreadable: Record<string, string> = {
    "refuses an unterminated string": 'x = "abc\n',
    "refuses a string broken by a line break": 'x = "abc\ndef"\n',
    "refuses an unterminated interpolation": 'x = "${abc"\n',
    "refuses an unterminated /* comment": `${KEYCHAIN}/* abc\n`,
    "refuses an unterminated heredoc": "x = <<EOF\nabc\n",
    "refuses a heredoc whose marker line has no line break, as HCL 1 does": "x = <<EOF\nabc\nEOF",
    "refuses a heredoc marker followed by more text": "x = <<EOF abc\nEOF\n",
    "refuses an unclosed block": 'credentials_helper "keychain" {\n',
    "refuses an unclosed nested block": "provider_installation {\n  direct {\n}\n",
    "refuses an unclosed list": "x = [1, 2\n",
    "refuses a stray closing brace": `${KEYCHAIN}}\n`,
    "refuses mismatched brackets": "x = [1}\n",
    "refuses an invalid escape": String.raw`x = "\q"` + "\n",
    "refuses a lone slash": "x = 1 / 2\n",
    "refuses a name without a value": "x\n",
    "refuses labels before an equals sign": "a b = 1\n",
    "refuses a missing value": "x =\n",
    "refuses a byte order mark, as Terraform does": `\uFEFF${KEYCHAIN}`,
  };
  for (const [behaviour, text] of Object.entries(unreadable)) {
    it(behaviour, () =>
      assertCliError(
        () => findCredentialsHelpers(text),
        /^could not read the CLI config file as HCL: .+ on line \d+; fix the file or edit it by hand$/,
      ),
    );
  }

  it("says on which line the problem starts", () =>
    assertCliError(
      () => findCredentialsHelpers('a = 1\n\nb = "oops\n'),
      /literal not terminated on line 3;/,
    ));

  for (const [behaviour, text] of Object.entries({
    "refuses a JSON config": '{"credentials_helper": {"keychain": {}}}\n',
    "refuses a JSON config after leading white space": '\n  \u00a0{"disable_checkpoint": true}',
  })) {
    it(behaviour, () =>
      assertCliError(
        () => findCredentialsHelpers(text),
        /^the CLI config file is in JSON syntax, which this tool does not edit; add or remove the credentials_helper block by hand$/,
      ),
    );
  }

  for (const [behaviour, text] of Object.entries({
    "refuses a credentials_helper without a label": "credentials_helper {\n  keychain {}\n}\n",
    "refuses a credentials_helper with two labels": 'credentials_helper "a" "b" {}\n',
    "refuses a credentials_helper attribute": "credentials_helper = {\n  keychain = {}\n}\n",
    "refuses a label with an interpolation": 'credentials_helper "${x}" {}\n',
  })) {
    it(behaviour, () =>
      assertCliError(
        () => findCredentialsHelpers(`a = 1\n${text}`),
        /^the CLI config file has a credentials_helper on line 2 written in a form this tool does not edit; edit it by hand$/,
      ),
    );
  }
});

describe("findCredentialsBlockItems: the hosts", () => {
  const hostsOfBlocks = (text: string) => findCredentialsBlockItems(text).map(({ host }) => host);

  it("lists the hosts of top-level credentials blocks, as written", () =>
    assert.deepEqual(
      hostsOfBlocks(
        lines(
          'credentials "app.terraform.io" {',
          '  token = "x"',
          "}",
          'Credentials "Example.COM" {}',
          "credentials localhost {}",
          '# credentials "commented.example" {}',
          'host "h.example" {',
          '  credentials "nested.example" {}',
          "}",
        ) + COMPLEX,
      ),
      ["app.terraform.io", "Example.COM", "localhost", "app.terraform.io"],
    ));

  it("skips other spellings of credentials", () =>
    assert.deepEqual(
      hostsOfBlocks('credentials {}\ncredentials "a" "b" {}\ncredentials = {}\n'),
      [],
    ));

  it("finds none in an empty file", () => assert.deepEqual(hostsOfBlocks(""), []));

  it("refuses text it cannot read", () =>
    assertCliError(() => hostsOfBlocks('credentials "a" {'), /as HCL/));
});

describe("renderCredentialsHelper", () => {
  it("renders a one-line block without args", () =>
    assert.equal(renderCredentialsHelper("keychain", []), KEYCHAIN));

  it("renders args on their own line", () =>
    assert.equal(renderCredentialsHelper("keychain", ["--service", "work"]), WORK));

  it("escapes quotes, backslashes and control characters", () =>
    assert.equal(
      renderCredentialsHelper('k"\\', ['a"b', "c\\d", "x\ny\r\tz", "\u0001\u007f\u0085"]),
      String.raw`credentials_helper "k\"\\" {
  args = ["a\"b", "c\\d", "x\ny\r\tz", "\u0001\u007f\u0085"]
}
`,
    ));

  it("leaves %{, lone $ and non-ASCII text alone, since HCL 1 reads them literally", () =>
    assert.equal(
      renderCredentialsHelper("k", ["%{x}", "$HOME", "a$", "$$", "é😀"]),
      'credentials_helper "k" {\n  args = ["%{x}", "$HOME", "a$", "$$", "é😀"]\n}\n',
    ));

  for (const [behaviour, name, args] of [
    ["refuses ${ in an argument, which Terraform would read as an interpolation", "k", ["${x}"]],
    ["refuses ${ in the name", "a${b", []],
    ["refuses an unpaired surrogate", "k", ["\uD800"]],
  ] as const) {
    it(behaviour, () =>
      assert.throws(
        () => renderCredentialsHelper(name, args),
        (error: unknown) =>
          error instanceof CliError &&
          error.exitCode === ExitCode.Usage &&
          /^cannot write .+ to the CLI config: /.test(error.message),
      ),
    );
  }

  it("reads back as the same name and args", () => {
    const args = ['a"b', "c\\d", "line\nbreak", "\u0000\u001f\u009f", "%{x}", "é😀", "", " "];
    const text = renderCredentialsHelper("küche", args);
    assert.deepEqual(found(text), [{ name: "küche", args, block: text }]);
  });

  it("reads back every C0 and C1 control character, quote, backslash and escape look-alike", () => {
    const everyLowCode = String.fromCodePoint(...Array.from({ length: 0xa1 }, (_, code) => code));
    const args = [
      everyLowCode,
      "\x07\b\f\v",
      String.raw`\n\t\u0041\x41\101\\`,
      "trailing\\",
      '"',
      '\\"',
      "$",
      "{$}",
      "\u2028\ufeff\u{10ffff}😀é",
    ];
    for (const name of args) {
      const text = renderCredentialsHelper(name, args);
      assert.deepEqual(found(text), [{ name, args, block: text }]);
    }
  });
});

describe("addCredentialsHelper", () => {
  const args = ["--service", "work"];

  const added: Record<string, { text: string; expected: string }> = {
    "adds to an empty file without a blank line": { text: "", expected: WORK },
    "adds after one blank line": { text: "a = 1\n", expected: `a = 1\n\n${WORK}` },
    "adds a missing final line break first": { text: "a = 1", expected: `a = 1\n\n${WORK}` },
    "adds one blank line even after blank lines, so that removing restores them": {
      text: "a = 1\n\n",
      expected: `a = 1\n\n\n${WORK}`,
    },
    "adds after a whitespace-only file": { text: "  ", expected: `  \n\n${WORK}` },
    "keeps CRLF line breaks in a CRLF file": {
      text: "a = 1\r\nb = 2",
      expected: `a = 1\r\nb = 2\r\n\r\n${WORK.replaceAll("\n", "\r\n")}`,
    },
  };
  for (const [behaviour, { text, expected }] of Object.entries(added)) {
    it(behaviour, () =>
      assert.deepEqual(addCredentialsHelper(text, "keychain", args), {
        text: expected,
        change: "added",
      }),
    );
  }

  it("adds an empty block when there are no args", () =>
    assert.deepEqual(addCredentialsHelper("a = 1\n", "keychain", []), {
      text: `a = 1\n\n${KEYCHAIN}`,
      change: "added",
    }));

  const same: Record<string, { text: string; args: string[] }> = {
    "is unchanged when the same helper is there": { text: `a = 1\n\n${WORK}`, args },
    "is unchanged when the same helper is spelled differently": {
      text: 'credentials_helper keychain { args = [ "--service" , "work" , ] } # mine\n',
      args,
    },
    "is unchanged when a helper without args is there and none are wanted": {
      text: KEYCHAIN,
      args: [],
    },
    "is unchanged when a helper with an empty args list is there and none are wanted": {
      text: 'credentials_helper "keychain" {\n  args = []\n}\n',
      args: [],
    },
  };
  for (const [behaviour, { text, args: wanted }] of Object.entries(same)) {
    it(behaviour, () =>
      assert.deepEqual(addCredentialsHelper(text, "keychain", wanted), {
        text,
        change: "unchanged",
      }),
    );
  }

  it("adding twice is adding once", () => {
    const once = addCredentialsHelper(COMPLEX, "keychain", args);
    assert.equal(once.change, "added");
    assert.deepEqual(addCredentialsHelper(once.text, "keychain", args), {
      text: once.text,
      change: "unchanged",
    });
  });

  const conflicts: Record<string, { text: string; message: string }> = {
    "refuses to replace a helper of another name, naming it": {
      text: 'credentials_helper "other" {}\n',
      message: 'the CLI config already sets credentials_helper "other"',
    },
    "refuses to replace the same helper with other args, naming them": {
      text: 'credentials_helper "keychain" {\n  args = ["--service", "home"]\n}\n',
      message:
        'the CLI config already sets credentials_helper "keychain" with args ["--service","home"]',
    },
    "refuses to replace args it cannot read": {
      text: 'credentials_helper "keychain" {\n  args = ["${HOME}"]\n}\n',
      message:
        'the CLI config already sets credentials_helper "keychain" (with args this tool cannot read)',
    },
    "refuses two helpers even when one is the wanted one, naming both": {
      text: `${WORK}credentials_helper "other" {}\n`,
      message:
        'the CLI config already sets credentials_helper "keychain" with args ["--service","work"] and "other"',
    },
  };
  for (const [behaviour, { text, message }] of Object.entries(conflicts)) {
    it(behaviour, () =>
      assert.throws(
        () => addCredentialsHelper(text, "keychain", args),
        (error: unknown) =>
          error instanceof CliError &&
          error.exitCode === ExitCode.Failure &&
          error.message === message &&
          error.fix?.situation === "install-over-other-helper",
      ),
    );
  }

  it("with force, replaces a helper of another name in place", () =>
    assert.deepEqual(
      addCredentialsHelper(
        'a = 1\n\n  credentials_helper "other" {\n    args = ["x"]\n  } # old\n\nb = 2\n',
        "keychain",
        args,
        { force: true },
      ),
      { text: `a = 1\n\n${WORK}\nb = 2\n`, change: "replaced" },
    ));

  it("with force, keeps the first helper's place and removes the others", () =>
    assert.deepEqual(
      addCredentialsHelper(
        `a = 1\n\ncredentials_helper "one" {}\n\nb = 2\n\ncredentials_helper "two" {}\n\nc = 3\n${KEYCHAIN}`,
        "keychain",
        args,
        { force: true },
      ),
      { text: `a = 1\n\n${WORK}\nb = 2\n\nc = 3\n`, change: "replaced" },
    ));

  it("with force, replaces in a CRLF file with CRLF line breaks", () =>
    assert.deepEqual(
      addCredentialsHelper('a = 1\r\ncredentials_helper "other" {}\r\n', "keychain", [], {
        force: true,
      }),
      { text: 'a = 1\r\ncredentials_helper "keychain" {}\r\n', change: "replaced" },
    ));

  it("with force, leaves the same helper unchanged", () =>
    assert.deepEqual(addCredentialsHelper(WORK, "keychain", args, { force: true }), {
      text: WORK,
      change: "unchanged",
    }));

  it("refuses text Terraform cannot read, even with force, with Terraform's reason", () =>
    assertCliError(
      () => addCredentialsHelper('x = "abc\n', "keychain", args, { force: true }),
      /^Terraform ignores the CLI config file as it stands \(Error parsing the CLI config file: At 1:9: literal not terminated\)/,
    ));

  it("refuses a file Terraform drops on decoding: a block there would never be read (issue 42, cause 1)", () =>
    assertCliError(
      () =>
        addCredentialsHelper('disable_checkpoint = "true"\n', "keychain", args, {
          file: "/h/.terraformrc",
        }),
      /^Terraform ignores \/h\/\.terraformrc as it stands \(Error parsing \/h\/\.terraformrc: At 1:22: root\.disable_checkpoint: unknown type \*ast\.LiteralType\)/,
    ));

  it("refuses a JSON config", () =>
    assertCliError(() => addCredentialsHelper("{}\n", "keychain", args), /JSON syntax/));
});

describe("removeCredentialsHelper", () => {
  const cases: Record<string, { text: string; expected: string }> = {
    "removes a block between others, leaving one blank line": {
      text: `a = 1\n\n${WORK}\nb = 2\n`,
      expected: "a = 1\n\nb = 2\n",
    },
    "removes a block between lines without joining them": {
      text: `a = 1\n${KEYCHAIN}b = 2\n`,
      expected: "a = 1\nb = 2\n",
    },
    "removes a block at the start with the blank line after it": {
      text: `${KEYCHAIN}\nb = 2\n`,
      expected: "b = 2\n",
    },
    "removes the only block, leaving an empty file": { text: WORK, expected: "" },
    "removes an indented block with the comment on its closing line": {
      text: 'a = 1\n  credentials_helper "keychain" {\n  } # mine\nb = 2\n',
      expected: "a = 1\nb = 2\n",
    },
    "removes a block that ends the file without a line break": {
      text: 'a = 1\n\ncredentials_helper "keychain" {}',
      expected: "a = 1\n",
    },
    "removes every block of that name and leaves other helpers": {
      text: `${KEYCHAIN}\ncredentials_helper "other" {}\n\n${WORK}`,
      expected: 'credentials_helper "other" {}\n',
    },
    "removes a block from a CRLF file": {
      text: 'a = 1\r\n\r\ncredentials_helper "keychain" {\r\n}\r\n\r\nb = 2\r\n',
      expected: "a = 1\r\n\r\nb = 2\r\n",
    },
    "keeps what shares the block's line": {
      text: '/* c */ credentials_helper "keychain" {} x = 1\n',
      expected: "/* c */  x = 1\n",
    },
    "removes a block with a bare label among tricky text": {
      text: `${TRICKY}\ncredentials_helper keychain {}\n`,
      expected: TRICKY,
    },
  };
  for (const [behaviour, { text, expected }] of Object.entries(cases)) {
    it(behaviour, () =>
      assert.deepEqual(removeCredentialsHelper(text, "keychain"), {
        text: expected,
        removed: true,
      }),
    );
  }

  for (const [behaviour, text] of Object.entries({
    "leaves a file without a helper untouched": COMPLEX,
    "leaves an empty file untouched": "",
    "leaves a helper of another name alone": `a = 1\n\ncredentials_helper "other" {}\n`,
    "leaves block text in comments, strings and heredocs alone": TRICKY,
  })) {
    it(behaviour, () =>
      assert.deepEqual(removeCredentialsHelper(text, "keychain"), { text, removed: false }),
    );
  }

  it("refuses text it cannot read", () =>
    assertCliError(
      () => removeCredentialsHelper(`${KEYCHAIN}/* open`, "keychain"),
      /^could not read the CLI config file as HCL: /,
    ));
});

describe("install then uninstall", () => {
  const originals: Record<string, string> = {
    "an empty file": "",
    "a file of one line break": "\n",
    "a whitespace-only file": "  \n\t\n",
    "a file of attributes": 'plugin_cache_dir = "/tmp/cache"\ndisable_checkpoint = true\n',
    "a file ending in blank lines": "a = 1\n\n\n",
    "a file ending in a comment": "a = 1\n# last words\n",
    "a file ending in a heredoc": "banner = <<EOF\n}\nEOF\n",
    "a file whose comments, strings and heredocs mention the block": TRICKY,
    "a file with provider_installation, host and credentials blocks": COMPLEX,
    "a CRLF file": "a = 1\r\n\r\nb = 2\r\n",
  };
  for (const [what, original] of Object.entries(originals)) {
    it(`gives back ${what} exactly, through repeated cycles`, () => {
      let text = original;
      for (let cycle = 0; cycle < 3; cycle++) {
        const installed = addCredentialsHelper(text, "keychain", ["--service", "work"]);
        assert.equal(installed.change, "added");
        assert.deepEqual(
          findCredentialsHelpers(installed.text).map(({ name, args }) => ({ name, args })),
          [{ name: "keychain", args: ["--service", "work"] }],
        );
        const uninstalled = removeCredentialsHelper(installed.text, "keychain");
        assert.equal(uninstalled.removed, true);
        text = uninstalled.text;
        assert.equal(text, original);
      }
    });
  }

  for (const [what, original, eol] of [
    ["a file", "a = 1", "\n"],
    ["a whitespace-only file", "   ", "\n"],
    ["a CRLF file", "a = 1\r\nb = 2", "\r\n"],
  ] as const) {
    it(`gives ${what} without a final line break one, and nothing else`, () => {
      const installed = addCredentialsHelper(original, "keychain", []);
      assert.equal(removeCredentialsHelper(installed.text, "keychain").text, original + eol);
    });
  }
});

describe("findCredentialsBlockItems and removeCredentialsBlocks", () => {
  const tokens = (text: string) =>
    findCredentialsBlockItems(text).map(({ host, token }) => [host, token]);

  it("reads a token only from a body that is exactly one plain string token", () =>
    assert.deepEqual(
      tokens(
        lines(
          'credentials "a.example" { token = "t\\u00e9\\"x" }',
          'credentials "b.example" {',
          '  token = "t"',
          '  organization = "acme"',
          "}",
          'credentials "c.example" {}',
          'credentials "d.example" { token = "${var.t}" }',
          'credentials "e.example" {',
          "  token = <<EOT",
          "t",
          "EOT",
          "}",
          'credentials "f.example" { token = 12 }',
          'host "h.example" {',
          '  credentials "nested.example" { token = "t" }',
          "}",
        ),
      ),
      [
        ["a.example", 't\u00e9"x'],
        ["b.example", undefined],
        ["c.example", undefined],
        ["d.example", undefined],
        ["e.example", undefined],
        ["f.example", undefined],
      ],
    ));

  it("refuses a file in JSON syntax, as for the helper block", () =>
    assert.throws(() => findCredentialsBlockItems('{"credentials": {}}'), CliError));

  it("cuts only the chosen blocks, every other byte kept", () => {
    const text =
      lines(
        "# top",
        'credentials "a.example" { token = "x" } # mine',
        "",
        'credentials "b.example" {',
        '  token = "y"',
        "}",
        "",
      ) + COMPLEX;
    const [first, second] = findCredentialsBlockItems(text);
    assert.ok(first && second);
    assert.equal(
      removeCredentialsBlocks(text, [first]),
      text.replace('credentials "a.example" { token = "x" } # mine\n', ""),
    );
    assert.equal(removeCredentialsBlocks(text, [second, first]), lines("# top", "") + COMPLEX);
  });
});
