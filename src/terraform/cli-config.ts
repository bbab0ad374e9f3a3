import { CliError, ExitCode } from "../errors.ts";
import { loadConfigFile } from "./cli-config-file.ts";
import type { TokenType as HclTokenType } from "./hcl/ast.ts";
import { Scanner } from "./hcl/scanner.ts";

// Terraform and OpenTofu read the CLI config (`.terraformrc`, `terraform.rc`, `.tofurc`,
// `*.tfrc` and `*.tfrc.json`) with HCL *1*, not HCL 2 native syntax:
// internal/command/cliconfig/cliconfig.go calls `hcl.Parse` from github.com/hashicorp/hcl.
// That matters here in three ways:
// - HCL 1 picks JSON by content, not by file name: when the first non-space character is
//   `{` the whole file is JSON (hcl `lexMode`). We only edit the native syntax.
// - Lexing follows hcl/scanner/scanner.go: `${` inside a quoted string switches to counting
//   braces and ignoring quotes until the braces balance; heredoc terminators may be indented
//   for `<<` and `<<-` alike; `/* */` comments do not nest; `%{` is ordinary text.
// - Values are decoded by hcl/strconv `Unquote`, which copies `${...}` verbatim and knows no
//   `$${` escape, so HCL 2's `$${`/`%%{` escaping would reach the helper as literal text.
// No npm package edits HCL while keeping bytes (`@cdktf/hcl2json` and `hcl2-parser` only
// convert HCL 2 to JSON), hence this editor. It tokenizes with HCL 1's scanner (hcl/), the
// one the reader uses, and only needs top-level items and their ranges, plus the body of
// each `credentials_helper` block. What Terraform makes of a file is the reader's
// (cli-config-file.ts): install refuses to add a block to a file Terraform drops.

/** A top-level `credentials_helper` block as written in a CLI config file. */
interface HelperBlock {
  /** The block's label, decoded: Terraform runs `terraform-credentials-<name>`. */
  readonly name: string;
  /**
   * The `args` list, decoded, when it is a plain list of string literals. `undefined` when
   * the block has no `args`, or when `argsUnparsed` is set.
   */
  readonly args: string[] | undefined;
  /**
   * True when `args` is present but is anything other than a list of plain string literals
   * (an interpolation, a heredoc, a number, a repeated `args`, ...): we don't guess its value.
   */
  readonly argsUnparsed: boolean;
  /** The line (1-based) of its `credentials_helper` keyword. */
  readonly line: number;
  /**
   * Offset (UTF-16 code units, as `String.prototype.slice` counts) where the block starts:
   * the start of its line when only blanks precede it there, else its first character.
   */
  readonly start: number;
  /**
   * Offset just past the block: past its closing `}`, a comma and a line comment on that
   * same line, and the line break, when the block ends its line; else just past the `}`.
   */
  readonly end: number;
}

/** What `addCredentialsHelper` did. The text is the whole new file. */
interface AddResult {
  readonly text: string;
  readonly change: "added" | "unchanged" | "replaced";
}

/** What `removeCredentialsHelper` did. The text is the whole new file. */
interface RemoveResult {
  readonly text: string;
  readonly removed: boolean;
}

/** Options for `addCredentialsHelper`. */
interface AddOptions {
  /** Replace a different credentials_helper instead of refusing. */
  readonly force?: boolean;
  /** The file the text is from, for the refusal to name. */
  readonly file?: string;
}

/**
 * Every top-level `credentials_helper` block in a CLI config file's text, in file order.
 * Blocks nested in other blocks, and text inside comments, strings and heredocs, are not
 * blocks. The block type matches case-insensitively, as Terraform's decoder does; the label
 * may be quoted or a bare identifier.
 *
 * Throws a `CliError` when the text can't be scanned (an unterminated string, comment,
 * heredoc or bracket, a stray character), when the file is in JSON syntax, or when a
 * `credentials_helper` is written in a form other than `credentials_helper "NAME" { ... }`:
 * we never guess, the person edits the file by hand.
 */
export function findCredentialsHelpers(text: string): HelperBlock[] {
  const helpers: HelperBlock[] = [];
  for (const item of topLevelItems(text)) {
    const [type, label] = item.keys;
    if (type === undefined || !isKey(text, type, "credentials_helper")) continue;
    const name = label === undefined ? undefined : decodeKey(text, label);
    if (item.assign || item.keys.length !== 2 || name === undefined) {
      throw new CliError(
        `the CLI config file has a credentials_helper on line ${lineOf(text, type.start)} written in a form this tool does not edit; edit it by hand`,
      );
    }
    const body = parseBody(new Lexer(text, item.value.end), item.value);
    helpers.push({
      name,
      ...readArgs(text, body),
      line: lineOf(text, type.start),
      start: lineStartBefore(text, type.start),
      end: blockEnd(text, item.end),
    });
  }
  return helpers;
}

/** A top-level `credentials "HOST" { ... }` block: where it stands and what it holds. */
interface CredentialsBlock {
  /** The label, decoded, as written (not normalized). */
  readonly host: string;
  /**
   * The token, when the body is exactly `token = "..."` with a plain string literal (no
   * interpolation); `undefined` for anything else (other attributes, a heredoc, no token).
   */
  readonly token: string | undefined;
  /**
   * The body's attributes in file order, names as written: the value decoded when it is a
   * plain string literal, else `undefined`. `undefined` as a whole when the body holds
   * anything but `name = value` items (a nested block) or cannot be scanned: then nobody
   * but HCL 1 knows what Terraform reads from it.
   */
  readonly attributes: ReadonlyArray<readonly [string, string | undefined]> | undefined;
  /** The line (1-based) of its `credentials` keyword. */
  readonly line: number;
  /** Where the block starts and ends, as for `HelperBlock`. */
  readonly start: number;
  readonly end: number;
}

/**
 * The top-level `credentials "HOST" { ... }` blocks of a CLI config file in native syntax, in
 * file order, with their extents and contents. The block type matches case-insensitively, as
 * HCL 1's decoder does. Hosts are as written (not normalized); such a block wins over the
 * helper for its host, even when empty. Other forms of `credentials` are skipped. Throws like
 * `findCredentialsHelpers` (a file in JSON syntax included).
 */
export function findCredentialsBlockItems(text: string): CredentialsBlock[] {
  const blocks: CredentialsBlock[] = [];
  for (const item of topLevelItems(text)) {
    const [type, label, ...more] = item.keys;
    if (type === undefined || !isKey(text, type, "credentials")) continue;
    const host = label === undefined ? undefined : decodeKey(text, label);
    if (item.assign || more.length > 0 || host === undefined) continue;
    let body: Item[] | undefined;
    try {
      body = parseBody(new Lexer(text, item.value.end), item.value);
    } catch (error) {
      // A body HCL 1 reads but we do not (say, a nested list): no plain token to move.
      if (!(error instanceof CliError)) throw error;
    }
    const attributes = body === undefined ? undefined : readAttributes(text, body);
    const [only, ...others] = attributes ?? [];
    blocks.push({
      host,
      token: only !== undefined && others.length === 0 && only[0] === "token" ? only[1] : undefined,
      attributes,
      line: lineOf(text, type.start),
      start: lineStartBefore(text, type.start),
      end: blockEnd(text, item.end),
    });
  }
  return blocks;
}

/** `name = value` items, string values decoded; `undefined` when a body holds anything else. */
function readAttributes(
  text: string,
  body: readonly Item[],
): Array<[string, string | undefined]> | undefined {
  const attributes: Array<[string, string | undefined]> = [];
  for (const item of body) {
    const [key] = item.keys;
    const name = key === undefined ? undefined : decodeKey(text, key);
    if (!item.assign || item.keys.length !== 1 || name === undefined) return undefined;
    const value =
      item.value.kind === "string"
        ? decodeString(text.slice(item.value.start + 1, item.value.end - 1))
        : undefined;
    attributes.push([name, value]);
  }
  return attributes;
}

/**
 * The text without `blocks` (found by `findCredentialsBlockItems` in this same text), every
 * other byte kept; where a block stood, at most one blank line stays, as
 * `removeCredentialsHelper` leaves it.
 */
export function removeCredentialsBlocks(text: string, blocks: readonly CredentialsBlock[]): string {
  let result = text;
  // From the end backwards, so that the offsets of the blocks before stay valid.
  for (const block of [...blocks].sort((a, b) => b.start - a.start)) result = cut(result, block);
  return result;
}

/**
 * The block `install` writes: `credentials_helper "NAME" {}` when `args` is empty, else the
 * block with an `args = [...]` line, always ending in `\n`. Strings are quoted so that HCL 1
 * (what Terraform reads) and HCL 2 decode them alike: `"` and `\` are escaped, line breaks
 * and tabs become `\n` `\r` `\t`, other control characters `\uXXXX`.
 *
 * Throws a `CliError` (`Usage`) for a name or argument containing `${`, which HCL 1 always
 * reads as an interpolation and has no escape for, or an unpaired UTF-16 surrogate.
 */
export function renderCredentialsHelper(name: string, args: readonly string[]): string {
  const header = `credentials_helper ${hclString(name)} {`;
  if (args.length === 0) return `${header}}\n`;
  return `${header}\n  args = [${args.map(hclString).join(", ")}]\n}\n`;
}

/**
 * Makes the CLI config text configure exactly the helper `name` with `args`, keeping every
 * other byte.
 *
 * - `unchanged` (same text) when the file already has exactly that one helper, however it
 *   is spelled: installing twice is installing once.
 * - `added` when the file has no helper: the block goes at the end, after a line break when
 *   the text lacks a final one, and after one blank line unless the text is empty.
 * - Otherwise Terraform allows only one helper, so this throws a `CliError` naming what is
 *   there, unless `force`: then the first helper is replaced in place, the others removed,
 *   and the result is `replaced`.
 *
 * Inserted line breaks follow the file's first line break (`\r\n` or `\n`). Throws like
 * `findCredentialsHelpers` on text it can't read, and like `renderCredentialsHelper` on
 * values it can't write. `removeCredentialsHelper` undoes `added` exactly, except that a
 * file without a final line break gets one.
 */
export function addCredentialsHelper(
  text: string,
  name: string,
  args: readonly string[],
  options: AddOptions = {},
): AddResult {
  // cliconfig.go loadConfigFile: a block in a file Terraform drops would never be read.
  const reading = loadConfigFile(options.file ?? "the CLI config file", text);
  if (reading.kind === "dropped" || reading.kind === "panic") {
    const why =
      reading.kind === "dropped"
        ? reading.diagnostic
        : `Terraform panics on it: ${reading.message}`;
    throw new CliError(
      `Terraform ignores ${options.file ?? "the CLI config file"} as it stands (${why}), so a credentials_helper block there would never be read; fix the file first`,
    );
  }
  const helpers = findCredentialsHelpers(text);
  const eol = lineBreakOf(text);
  const block = renderCredentialsHelper(name, args).replaceAll("\n", eol);

  const [first, ...others] = helpers;
  if (first === undefined) {
    let prefix = text;
    if (prefix !== "") {
      if (!prefix.endsWith("\n")) prefix += eol;
      prefix += eol;
    }
    return { text: prefix + block, change: "added" };
  }
  if (others.length === 0 && isSameHelper(first, name, args)) {
    return { text, change: "unchanged" };
  }
  if (options.force !== true) {
    const where = options.file === undefined ? "the CLI config" : `the CLI config ${options.file}`;
    throw new CliError(
      `${where} already sets credentials_helper ${helpers.map(describe).join(" and ")}`,
      undefined,
      { fix: { situation: "install-over-other-helper" } },
    );
  }

  // From the end backwards, so that the offsets of the blocks before stay valid.
  let result = text;
  for (const extra of others.reverse()) result = cut(result, extra);
  return {
    text: result.slice(0, first.start) + block + result.slice(first.end),
    change: "replaced",
  };
}

/**
 * Whether the text may hold a `credentials_helper "name"` block, for a file the view cannot
 * read as Terraform does (or that Terraform drops): a cheap look at the text, never a parse.
 */
export function mayNameHelper(text: string, name: string): boolean {
  const escaped = name.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`credentials_helper\\s+"?${escaped}"?`, "i").test(text);
}

/**
 * Removes every top-level `credentials_helper` block labelled `name`, leaving helpers of
 * other names and all other bytes alone. Where a block stood, at most one blank line stays
 * (the one `addCredentialsHelper` put before a block it appended goes with it), so install
 * and uninstall cycles give the original text back. `removed` is false, and the text the
 * same, when there was no such block. Throws like `findCredentialsHelpers`.
 */
export function removeCredentialsHelper(text: string, name: string): RemoveResult {
  const targets = findCredentialsHelpers(text).filter((helper) => helper.name === name);
  let result = text;
  // From the end backwards, so that the offsets of the blocks before stay valid.
  for (const helper of targets.reverse()) result = cut(result, helper);
  return { text: result, removed: targets.length > 0 };
}

// ---------------------------------------------------------------------------------------
// Editing

/** Removes `range` from `text`, then collapses the blank lines it leaves to at most one. */
function cut(text: string, range: { readonly start: number; readonly end: number }): string {
  let before = text.slice(0, range.start);
  let after = text.slice(range.end);
  const ownedWholeLines =
    (before === "" || before.endsWith("\n")) && (after === "" || text[range.end - 1] === "\n");
  if (!ownedWholeLines) return before + after;

  if (after === "") {
    // The block was last: drop the blank line that separated it, as `add` wrote it.
    before = before.replace(/(\r?\n)\r?\n$/, "$1");
  } else if ((before === "" || /\n\r?\n$/.test(before)) && /^\r?\n/.test(after)) {
    // Blank lines above and below (or the file's start above): keep only the one above.
    after = after.replace(/^\r?\n/, "");
  }
  return before + after;
}

/** The line break the file already uses, judged by its first one; `\n` for one-liners. */
function lineBreakOf(text: string): "\n" | "\r\n" {
  const newline = text.indexOf("\n");
  return newline > 0 && text[newline - 1] === "\r" ? "\r\n" : "\n";
}

function lineStartBefore(text: string, position: number): number {
  let start = position;
  while (start > 0 && isBlank(text[start - 1])) start--;
  return start === 0 || text[start - 1] === "\n" ? start : position;
}

function blockEnd(text: string, afterBrace: number): number {
  let end = afterBrace;
  let at = afterBrace;
  while (isBlank(text[at])) at++;
  // HCL 1 allows a comma after an item; it belongs to the block we might remove.
  if (text[at] === ",") {
    end = ++at;
    while (isBlank(text[at])) at++;
  }
  if (text[at] === "#" || text.startsWith("//", at)) {
    const newline = text.indexOf("\n", at);
    at = newline === -1 ? text.length : newline;
  }
  if (at === text.length) return at;
  if (text[at] === "\n") return at + 1;
  if (text.startsWith("\r\n", at)) return at + 2;
  return end;
}

function isBlank(char: string | undefined): boolean {
  return char === " " || char === "\t";
}

function isSameHelper(helper: HelperBlock, name: string, args: readonly string[]): boolean {
  const existing = helper.args ?? [];
  return (
    !helper.argsUnparsed &&
    helper.name === name &&
    existing.length === args.length &&
    existing.every((arg, index) => arg === args[index])
  );
}

function describe(helper: HelperBlock): string {
  const name = JSON.stringify(helper.name);
  if (helper.argsUnparsed) return `${name} (with args this tool cannot read)`;
  if (helper.args === undefined || helper.args.length === 0) return name;
  return `${name} with args ${JSON.stringify(helper.args)}`;
}

// ---------------------------------------------------------------------------------------
// Strings

// Go's escapes in a quoted string: hcl/scanner `scanEscape` accepts them, hcl/strconv
// `Unquote` decodes them. Both directions read the table below; the scanner and the decoder
// read an escape through `readEscape`.

/**
 * Go's one-letter escapes: the letter after the backslash and the character it stands for.
 * `written` marks those HCL 2 knows too, which are the only ones `hclString` writes (it
 * writes any other control character as `\u00XX`, which both read alike).
 */
const LETTER_ESCAPES: readonly { letter: string; char: string; written: boolean }[] = [
  { letter: "a", char: "\x07", written: false },
  { letter: "b", char: "\b", written: false },
  { letter: "f", char: "\f", written: false },
  { letter: "n", char: "\n", written: true },
  { letter: "r", char: "\r", written: true },
  { letter: "t", char: "\t", written: true },
  { letter: "v", char: "\v", written: false },
  { letter: "\\", char: "\\", written: true },
  { letter: '"', char: '"', written: true },
];

const DECODED_BY_LETTER = new Map(LETTER_ESCAPES.map(({ letter, char }) => [letter, char]));

const WRITTEN_BY_CHAR = new Map(
  LETTER_ESCAPES.filter(({ written }) => written).map(({ letter, char }) => [char, `\\${letter}`]),
);

/**
 * `value` as an HCL string literal, quotes included, that HCL 1 and HCL 2 decode to `value`.
 * Not `quote()` of system/quote.ts, which quotes for messages. Throws a `CliError` (`Usage`)
 * for `${`, which HCL 1 always reads as an interpolation, or an unpaired surrogate.
 */
function hclString(value: string): string {
  if (value.includes("${")) {
    throw new CliError(
      `cannot write ${JSON.stringify(value)} to the CLI config: Terraform reads "\${" as the start of an interpolation`,
      ExitCode.Usage,
    );
  }
  if (/\p{Cs}/u.test(value)) {
    throw new CliError(
      `cannot write ${JSON.stringify(value)} to the CLI config: it contains an unpaired surrogate`,
      ExitCode.Usage,
    );
  }
  let quoted = '"';
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    const escaped = WRITTEN_BY_CHAR.get(char);
    if (escaped !== undefined) quoted += escaped;
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) {
      quoted += `\\u${code.toString(16).padStart(4, "0")}`;
    } else quoted += char;
  }
  return `${quoted}"`;
}

/**
 * The escape starting at `backslash` in `text`, as Go reads it: a letter from
 * `LETTER_ESCAPES`, or exactly 3 octal digits, `x` and 2, `u` and 4, `U` and 8 hex digits.
 * `end` is the offset after it; `char` is what it decodes to, `undefined` when that is no
 * character (a raw byte from octal or `\x` at 0x80 and above, a surrogate, beyond U+10FFFF),
 * which the scanner accepts and we don't decode. `undefined` for an invalid escape.
 */
function readEscape(
  text: string,
  backslash: number,
): { end: number; char: string | undefined } | undefined {
  const kind = text[backslash + 1] ?? "";
  const letter = DECODED_BY_LETTER.get(kind);
  if (letter !== undefined) return { end: backslash + 2, char: letter };
  const octal = /[0-7]/.test(kind);
  const width = octal ? 3 : kind === "x" ? 2 : kind === "u" ? 4 : kind === "U" ? 8 : 0;
  const first = octal ? backslash + 1 : backslash + 2;
  const digits = text.slice(first, first + width);
  if (
    width === 0 ||
    digits.length !== width ||
    !(octal ? /^[0-7]+$/ : /^[0-9a-fA-F]+$/).test(digits)
  ) {
    return undefined;
  }
  const code = Number.parseInt(digits, octal ? 8 : 16);
  const isByte = octal || kind === "x";
  const isChar =
    !(isByte && code >= 0x80) && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
  return { end: first + width, char: isChar ? String.fromCodePoint(code) : undefined };
}

/**
 * The value of a quoted string's contents, as hcl/strconv `Unquote` decodes it; `undefined`
 * for an interpolation or an escape that yields no character (see `readEscape`).
 */
function decodeString(raw: string): string | undefined {
  if (raw.includes("${")) return undefined;
  let decoded = "";
  let at = 0;
  while (at < raw.length) {
    const char = raw[at] ?? "";
    if (char !== "\\") {
      decoded += char;
      at++;
      continue;
    }
    const escape = readEscape(raw, at);
    if (escape?.char === undefined) return undefined;
    decoded += escape.char;
    at = escape.end;
  }
  return decoded;
}

function decodeKey(text: string, token: Token): string | undefined {
  const source = text.slice(token.start, token.end);
  return token.kind === "string" ? decodeString(source.slice(1, -1)) : source;
}

// ---------------------------------------------------------------------------------------
// Parsing: just enough of HCL 1's object lists to find items and their extents

interface Item {
  readonly keys: readonly Token[];
  /** `key = value` rather than `key "label" { ... }`. */
  readonly assign: boolean;
  /** The value's first token: the `{` of a block. */
  readonly value: Token;
  /** Just past the value, or past the block's `}`. */
  readonly end: number;
}

// HCL 1 identifiers (scanIdentifier): a letter or `_`, then letters, digits, `_`, `-`, `.`.
const IDENTIFIER = /^[\p{L}_][\p{L}\p{Nd}_.-]*$/u;
const CLOSER: Readonly<Record<string, TokenKind>> = { "{": "}", "[": "]" };

function topLevelItems(text: string): Item[] {
  // hcl lexMode: leading Unicode white space (Go unicode.IsSpace), then `{`, means JSON.
  if (/^\p{White_Space}*\{/u.test(text)) {
    throw new CliError(
      "the CLI config file is in JSON syntax, which this tool does not edit; add or remove the credentials_helper block by hand",
    );
  }
  return parseBody(new Lexer(text, 0), undefined);
}

/** Whether `token` names `key`: hcl `ObjectList.Filter` compares with strings.EqualFold. */
function isKey(text: string, token: Token, key: string): boolean {
  return decodeKey(text, token)?.toLowerCase() === key;
}

/** The items of a body: the file (`open` undefined) or a block after its `{`. */
function parseBody(lexer: Lexer, open: Token | undefined): Item[] {
  const items: Item[] = [];
  for (;;) {
    let token = lexer.next();
    if (token === undefined) {
      if (open !== undefined) throw lexer.fail(open.start, `"{" is never closed`);
      return items;
    }
    if (open !== undefined && token.kind === "}") return items;

    const keys: Token[] = [];
    while (token !== undefined && (token.kind === "word" || token.kind === "string")) {
      if (token.kind === "word" && !IDENTIFIER.test(lexer.source(token))) {
        throw lexer.fail(token.start, `unexpected ${lexer.describe(token)}`);
      }
      keys.push(token);
      token = lexer.next();
    }
    const lastKey = keys.at(-1);
    if (token === undefined) {
      throw lexer.fail(lastKey?.start ?? 0, "a name without a value at the end of the file");
    }
    if (lastKey === undefined || (token.kind !== "{" && token.kind !== "=")) {
      throw lexer.fail(token.start, `unexpected ${lexer.describe(token)}`);
    }
    if (token.kind === "=") {
      // HCL 1 refuses `foo "bar" = ...` ("nested object expected").
      if (keys.length > 1) throw lexer.fail(token.start, `unexpected "="`);
      const value = lexer.next();
      if (value === undefined) throw lexer.fail(token.start, `a value is missing after "="`);
      items.push({ keys, assign: true, value, end: skipValue(lexer, value) });
    } else {
      items.push({ keys, assign: false, value: token, end: skipGroup(lexer, token) });
    }
    // HCL 1 lets items be separated by commas.
    if (lexer.peek()?.kind === ",") lexer.next();
  }
}

function skipValue(lexer: Lexer, value: Token): number {
  switch (value.kind) {
    case "word":
    case "string":
    case "heredoc":
      return value.end;
    case "{":
    case "[":
      return skipGroup(lexer, value);
    case "}":
    case "]":
    case ",":
    case "=":
      throw lexer.fail(value.start, `expected a value, found ${lexer.describe(value)}`);
  }
}

/** Skips to the bracket closing `open`, returning the offset just past it. */
function skipGroup(lexer: Lexer, open: Token): number {
  const stack: Token[] = [open];
  for (;;) {
    const token = lexer.next();
    if (token === undefined) {
      const innermost = stack.at(-1) ?? open;
      throw lexer.fail(innermost.start, `"${innermost.kind}" is never closed`);
    }
    if (token.kind === "{" || token.kind === "[") stack.push(token);
    else if (token.kind === "}" || token.kind === "]") {
      const opened = stack.pop();
      if (opened === undefined || CLOSER[opened.kind] !== token.kind) {
        throw lexer.fail(token.start, `unexpected "${token.kind}"`);
      }
      if (stack.length === 0) return token.end;
    }
  }
}

function readArgs(
  text: string,
  body: readonly Item[],
): { args: string[] | undefined; argsUnparsed: boolean } {
  const found = body.filter((item) => {
    const [key] = item.keys;
    return key !== undefined && isKey(text, key, "args");
  });
  const [item] = found;
  if (item === undefined) return { args: undefined, argsUnparsed: false };
  const args = found.length === 1 && item.assign ? readStringList(text, item.value) : undefined;
  return args === undefined ? { args, argsUnparsed: true } : { args, argsUnparsed: false };
}

/** `[ "a", "b", ]` with comments anywhere, decoded; `undefined` for anything else. */
function readStringList(text: string, open: Token): string[] | undefined {
  if (open.kind !== "[") return undefined;
  const lexer = new Lexer(text, open.end);
  const values: string[] = [];
  for (;;) {
    let token = lexer.next();
    if (token?.kind === "]") return values;
    if (token?.kind !== "string") return undefined;
    const value = decodeString(lexer.source(token).slice(1, -1));
    if (value === undefined) return undefined;
    values.push(value);
    token = lexer.next();
    if (token?.kind === "]") return values;
    if (token?.kind !== ",") return undefined;
  }
}

// ---------------------------------------------------------------------------------------
// Lexing: HCL 1's own scanner (hcl/scanner.ts, hcl/scanner/scanner.go), the one the reader
// uses, its tokens told apart as far as the editor needs and placed in the text.

type TokenKind = "word" | "string" | "heredoc" | "{" | "}" | "[" | "]" | "," | "=";

interface Token {
  readonly kind: TokenKind;
  readonly start: number;
  readonly end: number;
}

const KIND_OF: Readonly<Partial<Record<HclTokenType, TokenKind>>> = {
  STRING: "string",
  HEREDOC: "heredoc",
  LBRACE: "{",
  RBRACE: "}",
  LBRACK: "[",
  RBRACK: "]",
  COMMA: ",",
  ASSIGN: "=",
};

class Lexer {
  readonly #text: string;
  readonly #base: number;
  readonly #scanner: Scanner;
  #peeked: Token | undefined | null = null;

  /** Scans `text` from `at`; the first error HCL 1's scanner reports is thrown, with its line. */
  constructor(text: string, at: number) {
    this.#text = text;
    this.#base = at;
    const firstLine = lineOf(text, at);
    this.#scanner = new Scanner(text.slice(at), (pos, message) => {
      throw failure(message, firstLine + pos.line - 1);
    });
  }

  source(token: Token): string {
    return this.#text.slice(token.start, token.end);
  }

  describe(token: Token): string {
    if (token.kind === "string") return "a string";
    if (token.kind === "heredoc") return "a heredoc";
    if (token.kind === "word") return JSON.stringify(this.source(token).slice(0, 40));
    return `"${token.kind}"`;
  }

  fail(at: number, problem: string): CliError {
    return failure(problem, lineOf(this.#text, at));
  }

  peek(): Token | undefined {
    if (this.#peeked === null) this.#peeked = this.#scan();
    return this.#peeked;
  }

  /** The next token, skipping comments; `undefined` at the end. */
  next(): Token | undefined {
    const token = this.peek();
    this.#peeked = null;
    return token;
  }

  #scan(): Token | undefined {
    for (;;) {
      const token = this.#scanner.scan();
      if (token.type === "EOF") return undefined;
      if (token.type === "COMMENT") continue;
      // Identifiers, numbers, booleans and lone signs are words: none can hide a block's end.
      const kind = KIND_OF[token.type] ?? "word";
      return { kind, start: this.#base + token.start, end: this.#base + token.end };
    }
  }
}

function failure(problem: string, line: number): CliError {
  return new CliError(
    `could not read the CLI config file as HCL: ${problem} on line ${line}; fix the file or edit it by hand`,
  );
}

function lineOf(text: string, position: number): number {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < position; at = text.indexOf("\n", at + 1)) {
    line++;
  }
  return line;
}
