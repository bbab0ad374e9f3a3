// CLI config files and what Terraform 1.11 makes of each (cliconfig.go loadConfigFile over
// HCL 1): the rule table of src/terraform/cli-config-file.ts. The unit test checks the
// reader against `expect`; test/e2e/terraform-reading.test.ts has the real terraform judge
// the same texts, so an expectation here is Terraform's, not ours.

/** What Terraform makes of a file. */
export type Outcome =
  /** Read: the helpers (label -> args) and credentials (label -> token, or null for none). */
  | {
      readonly helpers?: Readonly<Record<string, readonly string[]>>;
      readonly tokens?: Readonly<Record<string, string | null>>;
    }
  /** Dropped, with Terraform's message after "Error parsing FILE: ". */
  | { readonly dropped: string }
  /** Go panics: Terraform crashes on every command. */
  | { readonly panic: true };

export interface Case {
  readonly name: string;
  /** The Go function whose rule the case shows. */
  readonly rule: string;
  readonly text: string;
  readonly expect: Outcome;
}

const H = "a.example.com";

export const CASES: readonly Case[] = [
  // Scanning (hcl/scanner next, scanString, scanEscape; json/scanner scanEscape).
  {
    name: "a NUL in a comment",
    rule: "hcl/scanner Scanner.next",
    text: `# a \0 b\ncredentials "${H}" { token = "t" }\n`,
    expect: { dropped: "At 1:5: unexpected null character (0x00)" },
  },
  {
    name: "U+E123 in a comment",
    rule: "hcl/scanner Scanner.next",
    text: `# a \ue123 b\ncredentials_helper "keychain" {}\n`,
    expect: { dropped: "At 1:5: unicode code point U+E123 reserved for internal use" },
  },
  {
    name: "an unterminated string",
    rule: "hcl/scanner scanString",
    text: `credentials "${H}" { token = "t }\n`,
    expect: { dropped: "At 1:43: literal not terminated" },
  },
  {
    name: "an unknown escape",
    rule: "hcl/scanner scanEscape",
    text: `credentials "${H}" { token = "a\\qb" }\n`,
    expect: { dropped: "At 1:42: illegal char escape" },
  },
  {
    name: '"\\/" in a JSON file',
    rule: "json/scanner scanEscape",
    text: `{"credentials": {"${H}": {"token": "a\\/b"}}}`,
    expect: { dropped: "1:48: illegal char escape" },
  },
  {
    name: "an unterminated /* comment",
    rule: "hcl/scanner scanComment",
    text: `credentials_helper "keychain" {}\n/* never closed\n`,
    expect: { dropped: "At 3:1: comment not terminated" },
  },
  // Parsing (hcl/parser objectItem, object, objectType, listType; json/parser).
  {
    name: "a bare word as a value (x = yes)",
    rule: "hcl/parser Parser.object",
    text: `x = yes\ncredentials_helper "keychain" {}\n`,
    expect: { dropped: "At 1:5: Unknown token: 1:5 IDENT …" },
  },
  {
    name: "an unclosed block",
    rule: "hcl/parser Parser.objectType",
    text: `credentials_helper "keychain" {\n`,
    expect: { dropped: "At 2:2: object expected closing RBRACE got: EOF" },
  },
  {
    name: "a key without a value at the end of the file",
    rule: "hcl/parser Parser.objectItem",
    text: `credentials_helper "keychain" {}\nx\n`,
    expect: { dropped: "At 3:1: key '…' expected start of object ('{') or assignment ('=')" },
  },
  {
    name: "an assignment cut off by the end of the file is no error",
    rule: "hcl/parser Parser.objectList (errEofToken)",
    text: `credentials_helper "keychain" {}\nx =`,
    expect: { helpers: { keychain: [] } },
  },
  {
    name: "an attribute without a value just before a brace still closes its block",
    rule: "hcl/parser Parser.objectType (an error at RBRACE)",
    text: `x { a = } }\ncredentials_helper "keychain" {}\n`,
    expect: { helpers: { keychain: [] } },
  },
  {
    name: "truncated JSON: whatever follows the last value is never read",
    rule: "json/parser Parser.objectList",
    text: `{"credentials": {"${H}": {"token": "t"`,
    expect: { tokens: { [H]: "t" } },
  },
  {
    name: "JSON: a missing comma ends the object, the rest is ignored",
    rule: "json/parser Parser.objectList",
    text: `{"credentials": {"${H}": {"token": "t"}} "credentials_helper": {"keychain": {}}}`,
    expect: { tokens: { [H]: "t" } },
  },
  // Decoding into cliconfig.Config (decoder.go).
  {
    name: 'a quoted boolean (disable_checkpoint = "true")',
    rule: "decoder.go decodeBool",
    text: `disable_checkpoint = "true"\ncredentials_helper "keychain" {}\n`,
    expect: { dropped: "At 1:22: root.disable_checkpoint: unknown type *ast.LiteralType" },
  },
  {
    name: "a bare boolean",
    rule: "decoder.go decodeBool",
    text: `disable_checkpoint = true\ncredentials_helper "keychain" {}\n`,
    expect: { helpers: { keychain: [] } },
  },
  {
    name: "a quoted boolean in JSON",
    rule: "decoder.go decodeBool",
    text: `{"disable_checkpoint": "true", "credentials_helper": {"keychain": {}}}`,
    expect: { dropped: "At -: root.disable_checkpoint: unknown type *ast.LiteralType" },
  },
  {
    name: "a string where a credentials object belongs",
    rule: "decoder.go decodeMap",
    text: `credentials = { "${H}" = "t" }\n`,
    expect: {
      dropped: `At 1:35: root.credentials.${H}: not an object type for map (*ast.LiteralType)`,
    },
  },
  {
    name: "a string where a JSON credentials object belongs",
    rule: "decoder.go decodeMap",
    text: `{"credentials": {"${H}": "t"}}`,
    expect: {
      dropped: `At -: root.credentials.${H}: not an object type for map (*ast.LiteralType)`,
    },
  },
  {
    name: "a number too large for an int in credentials",
    rule: "decoder.go decodeInt",
    text: `credentials "${H}" { token = "t"\n n = 99999999999999999999 }\n`,
    expect: { dropped: 'strconv.ParseInt: parsing "…": value out of range' },
  },
  {
    name: "a float out of range in JSON credentials",
    rule: "decoder.go decodeFloat",
    text: `{"credentials": {"${H}": {"token": "t", "n": 1e400}}}`,
    expect: { dropped: 'strconv.ParseFloat: parsing "…": value out of range' },
  },
  {
    name: "keys in any case",
    rule: "ast.ObjectList Filter (strings.EqualFold)",
    text: `Credentials "${H}" { token = "t" }\nCREDENTIALS_HELPER "keychain" { ARGS = ["--backend", "pass"] }\n`,
    expect: { helpers: { keychain: ["--backend", "pass"] }, tokens: { [H]: "t" } },
  },
  {
    name: "the token attribute in another case is no token",
    rule: "svchost auth HostCredentialsFromObject",
    text: `credentials "${H}" { Token = "t" }\n`,
    expect: { tokens: { [H]: null } },
  },
  {
    name: "a JSON list of objects is read as blocks",
    rule: "json/parser flattenObjects",
    text: `{"credentials_helper": [{"keychain": {"args": ["--backend", "pass"]}}]}`,
    expect: { helpers: { keychain: ["--backend", "pass"] } },
  },
  {
    name: "JSON keys in any case",
    rule: "ast.ObjectList Filter (strings.EqualFold)",
    text: `{"CREDENTIALS_HELPER": {"keychain": {"Args": ["x"]}}, "Credentials": {"${H}": {"token": "t"}}}`,
    expect: { helpers: { keychain: ["x"] }, tokens: { [H]: "t" } },
  },
  {
    name: "credentials = { ... }",
    rule: "decoder.go decodeStruct (an item without keys left)",
    text: `credentials = { "${H}" = { token = "t" } }\n`,
    expect: { tokens: { [H]: "t" } },
  },
  {
    name: "an unlabelled credentials block",
    rule: "decoder.go decodeStruct (an item without keys left)",
    text: `credentials { "${H}" { token = "t" } }\n`,
    expect: { tokens: { [H]: "t" } },
  },
  {
    name: "credentials_helper = { ... }",
    rule: "decoder.go decodeStruct",
    text: `credentials_helper = { keychain = { args = ["a"] } }\n`,
    expect: { helpers: { keychain: ["a"] } },
  },
  {
    name: "two blocks of one host in one file merge attribute by attribute",
    rule: "decoder.go decodeMap (a key seen before)",
    text: `credentials "${H}" { token = "a" }\ncredentials "${H}" { x = "b" }\n`,
    expect: { tokens: { [H]: "a" } },
  },
  {
    name: "args given twice in one block are appended",
    rule: "decoder.go decodeSlice",
    text: `credentials_helper "keychain" {\n  args = ["a"]\n  args = ["b"]\n}\n`,
    expect: { helpers: { keychain: ["a", "b"] } },
  },
  {
    name: "a token that is a list sends nothing",
    rule: "svchost auth HostCredentialsFromObject",
    text: `credentials "${H}" { token = ["t"] }\n`,
    expect: { tokens: { [H]: null } },
  },
  {
    name: "an interpolation is kept as text",
    rule: "hcl/strconv Unquote",
    text: `credentials "${H}" { token = "a\${b}c" }\n`,
    expect: { tokens: { [H]: "a${b}c" } },
  },
  {
    name: "a heredoc token",
    rule: "hcl/token unindentHeredoc",
    text: `credentials "${H}" {\n  token = <<EOT\nabc\nEOT\n}\n`,
    expect: { tokens: { [H]: "abc\n" } },
  },
  {
    name: "JSON null is an empty string",
    rule: "json/token HCLToken",
    text: `{"credentials": {"${H}": {"token": null}}}`,
    expect: { tokens: { [H]: "" } },
  },
  {
    name: "a full configuration: provider installation, hosts, a helper and credentials",
    rule: "decoder.go decodeStruct (fields without a match are ignored)",
    text: [
      "provider_installation {",
      '  filesystem_mirror {\n    path = "/usr/share/terraform/providers"\n    include = ["example.com/*/*"]\n  }',
      '  direct {\n    exclude = ["example.com/*/*"]\n  }',
      "}",
      'host "example.com" {\n  services = {\n    "modules.v1" = "https://example.com/modules/"\n  }\n}',
      "disable_checkpoint = true",
      'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}',
      `credentials "${H}" {\n  token = "t"\n}`,
      "",
    ].join("\n"),
    expect: { helpers: { keychain: ["--backend", "pass"] }, tokens: { [H]: "t" } },
  },
  // Panics: Terraform crashes on every command.
  {
    name: "a credentials block with two labels",
    rule: "hcl2shim HCL2ValueFromConfigValue",
    text: `credentials "${H}" "b" {}\n`,
    expect: { panic: true },
  },
  {
    name: "a nested block in credentials",
    rule: "hcl2shim HCL2ValueFromConfigValue",
    text: `credentials "${H}" {\n  token = "t"\n  x {}\n}\n`,
    expect: { panic: true },
  },
  {
    name: "an octal escape beyond a byte",
    rule: "hcl/token Token.Value (Unquote fails)",
    text: `credentials "${H}" { token = "\\777" }\n`,
    expect: { panic: true },
  },
  {
    name: "an empty block where a boolean belongs",
    rule: "ast.ObjectList Pos (no items)",
    text: `disable_checkpoint {}\n`,
    expect: { panic: true },
  },
];
