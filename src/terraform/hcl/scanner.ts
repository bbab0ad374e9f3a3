// HCL 1's scanners, rune by rune: hcl/scanner/scanner.go (native syntax) and
// json/scanner/scanner.go (JSON syntax). Errors do not stop a scan: each is reported to
// `onError` (the parser keeps the last one, Parse) and the token goes on.

import type { Pos, Token, TokenType } from "./ast.ts";

/** Go's eof rune: ReadRune's error, and what next() returns for a NUL. */
const EOF = 0;
const RUNE_ERROR = 0xfffd;

const isLetter = (ch: number) =>
  (ch >= 0x61 && ch <= 0x7a) ||
  (ch >= 0x41 && ch <= 0x5a) ||
  ch === 0x5f ||
  (ch >= 0x80 && /\p{L}/u.test(String.fromCodePoint(ch)));
const isDigit = (ch: number) =>
  (ch >= 0x30 && ch <= 0x39) || (ch >= 0x80 && /\p{Nd}/u.test(String.fromCodePoint(ch)));
const isDecimal = (ch: number) => ch >= 0x30 && ch <= 0x39;
const isHexadecimal = (ch: number) =>
  (ch >= 0x30 && ch <= 0x39) || (ch >= 0x61 && ch <= 0x66) || (ch >= 0x41 && ch <= 0x46);
const isWhitespace = (ch: number) => ch === 0x20 || ch === 0x09 || ch === 0x0a || ch === 0x0d;
function digitVal(ch: number): number {
  if (ch >= 0x30 && ch <= 0x39) return ch - 0x30;
  if (ch >= 0x61 && ch <= 0x66) return ch - 0x61 + 10;
  if (ch >= 0x41 && ch <= 0x46) return ch - 0x41 + 10;
  return 16;
}
const ch = (char: string) => char.codePointAt(0) ?? 0;

/** The last text scanned, decoded into runes (see RuneReader's constructor). */
let decoded: { text: string; runes: number[]; offsets: number[] } | undefined;

/** The index of the rune at UTF-16 offset `offset` (binary search). */
function indexAt(offsets: readonly number[], offset: number): number {
  let [low, high] = [0, offsets.length - 1];
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((offsets[mid] ?? 0) < offset) low = mid + 1;
    else high = mid;
  }
  return low;
}

interface SrcPos {
  line: number;
  column: number;
}

/**
 * What both scanners share: reading runes with Go's position bookkeeping, and the parts of
 * numbers and escapes that hcl/scanner and json/scanner scan alike.
 */
abstract class RuneReader {
  private readonly source: string;
  protected readonly runes: readonly number[];
  /** Each rune's offset in the text in UTF-16 code units, and the text's length last. */
  private readonly offsets: readonly number[];
  protected idx = 0;
  protected srcPos: SrcPos = { line: 1, column: 0 };
  protected prevPos: SrcPos = { line: 1, column: 0 };
  /** Runes the last next() consumed: 0 at the end, as Go's lastCharLen is 0 there. */
  protected lastCharLen = 0;
  protected lastLineLen = 0;
  protected tokStart = 0;
  protected tokPos: SrcPos = { line: 0, column: 0 };
  readonly onError: (pos: Pos, message: string) => void;

  /**
   * Scans `text` from `from` (a UTF-16 offset, for the editor, which scans a block's body
   * from its `{`; lines then count from there). The last text's runes are kept, so that
   * scanning one text from many places decodes it once.
   */
  constructor(text: string, onError: (pos: Pos, message: string) => void, from = 0) {
    if (decoded?.text !== text) {
      const chars = Array.from(text);
      const offsets = [0];
      for (const char of chars) offsets.push((offsets.at(-1) ?? 0) + char.length);
      const runes = chars.map((char) => (/\p{Cs}/u.test(char) ? -1 : ch(char)));
      decoded = { text, runes, offsets };
    }
    this.source = text;
    this.runes = decoded.runes;
    this.offsets = decoded.offsets;
    this.idx = from === 0 ? 0 : indexAt(this.offsets, from);
    this.tokStart = this.idx;
    this.onError = onError;
  }

  /** scanner next(): the JSON scanner knows neither the NUL nor the U+E123 rule (`native`). */
  protected nextRune(native: boolean): number {
    const rune = this.runes[this.idx];
    if (rune === undefined) {
      this.srcPos.column++;
      this.lastCharLen = 0;
      return EOF;
    }
    this.idx++;
    if (rune === -1) {
      this.srcPos.column++;
      this.lastCharLen = 1;
      this.err("illegal UTF-8 encoding");
      return RUNE_ERROR;
    }
    this.prevPos = { ...this.srcPos };
    this.srcPos.column++;
    this.lastCharLen = 1;
    if (rune === 0x0a) {
      this.srcPos.line++;
      this.lastLineLen = this.srcPos.column;
      this.srcPos.column = 0;
    }
    if (native && rune === 0) {
      this.err("unexpected null character (0x00)");
      return EOF;
    }
    if (native && rune === 0xe123) {
      this.err("unicode code point U+E123 reserved for internal use");
      return RUNE_ERROR;
    }
    return rune;
  }

  protected unread(): void {
    this.idx--;
    this.srcPos = { ...this.prevPos };
  }

  protected peek(): number {
    const rune = this.runes[this.idx];
    return rune === undefined ? EOF : rune === -1 ? RUNE_ERROR : rune;
  }

  /** recentPosition: where the last rune read ends. */
  protected recentPosition(): Pos {
    if (this.srcPos.column > 0) return { line: this.srcPos.line, column: this.srcPos.column };
    if (this.lastLineLen > 0) return { line: this.srcPos.line - 1, column: this.lastLineLen };
    return { line: 1, column: 1 };
  }

  protected err(message: string): void {
    this.onError(this.recentPosition(), message);
  }

  /** The token's start, as Scan marks it after skipping white space. */
  protected markStart(): void {
    this.tokStart = this.idx - this.lastCharLen;
    this.tokPos =
      this.srcPos.column > 0
        ? { line: this.srcPos.line, column: this.srcPos.column }
        : { line: this.srcPos.line - 1, column: this.lastLineLen };
  }

  protected token(type: TokenType, json: boolean): Token {
    const text = this.text(this.tokStart, this.idx);
    const [start, end] = [this.offsets[this.tokStart] ?? 0, this.offsets[this.idx] ?? 0];
    this.tokStart = this.idx;
    return { type, pos: { ...this.tokPos }, text, json, line: this.tokPos.line, start, end };
  }

  /** The runes from `from` to `to` as text (a lone surrogate stays: it was reported). */
  protected text(from: number, to: number): string {
    return this.source.slice(this.offsets[from] ?? 0, this.offsets[to] ?? 0);
  }
  /** The next rune, as the scanner's own `next` reads it (native or JSON). */
  protected abstract next(): number;

  /** `n` digits of `base` in an escape, as the scanner's own `scanDigits` reads them. */
  protected abstract scanDigits(c: number, base: number, n: number): number;

  /** hcl/scanner and json/scanner scanMantissa. */
  protected scanMantissa(c: number): number {
    let scanned = false;
    while (isDecimal(c)) {
      c = this.next();
      scanned = true;
    }
    if (scanned && c !== EOF) this.unread();
    return c;
  }

  /** hcl/scanner and json/scanner scanFraction. */
  protected scanFraction(c: number): number {
    if (c === ch(".")) c = this.scanMantissa(this.peek());
    return c;
  }

  /** hcl/scanner and json/scanner scanExponent. */
  protected scanExponent(c: number): number {
    if (c === ch("e") || c === ch("E")) {
      c = this.next();
      if (c === ch("-") || c === ch("+")) c = this.next();
      c = this.scanMantissa(c);
    }
    return c;
  }

  /** hcl/scanner and json/scanner scanEscape (neither knows JSON's own `\/`). */
  protected scanEscape(): number {
    let c = this.next();
    if ('abfnrtv\\"'.includes(String.fromCodePoint(c)) && c !== EOF) return c;
    if (c >= ch("0") && c <= ch("7")) c = this.scanDigits(c, 8, 3);
    else if (c === ch("x")) c = this.scanDigits(this.next(), 16, 2);
    else if (c === ch("u")) c = this.scanDigits(this.next(), 16, 4);
    else if (c === ch("U")) c = this.scanDigits(this.next(), 16, 8);
    else this.err("illegal char escape");
    return c;
  }
}

/** hcl/scanner Scanner: the native syntax. */
export class Scanner extends RuneReader {
  protected next(): number {
    return this.nextRune(true);
  }

  /** Scan: the next token, comments included (the parser skips them). */
  scan(): Token {
    let c = this.next();
    while (isWhitespace(c)) c = this.next();
    this.markStart();
    let type: TokenType = "ILLEGAL";
    if (isLetter(c)) {
      type = "IDENT";
      const literal = this.scanIdentifier();
      if (literal === "true" || literal === "false") type = "BOOL";
    } else if (isDecimal(c)) {
      type = this.scanNumber(c);
    } else {
      switch (c) {
        case EOF:
          type = "EOF";
          break;
        case ch('"'):
          type = "STRING";
          this.scanString();
          break;
        case ch("#"):
        case ch("/"):
          type = "COMMENT";
          this.scanComment(c);
          break;
        case ch("."):
          type = "PERIOD";
          if (isDecimal(this.peek())) {
            type = "FLOAT";
            this.scanExponent(this.scanMantissa(this.peek()));
          }
          break;
        case ch("<"):
          type = "HEREDOC";
          this.scanHeredoc();
          break;
        case ch("["):
          type = "LBRACK";
          break;
        case ch("]"):
          type = "RBRACK";
          break;
        case ch("{"):
          type = "LBRACE";
          break;
        case ch("}"):
          type = "RBRACE";
          break;
        case ch(","):
          type = "COMMA";
          break;
        case ch("="):
          type = "ASSIGN";
          break;
        case ch("+"):
          type = "ADD";
          break;
        case ch("-"):
          if (isDecimal(this.peek())) type = this.scanNumber(this.next());
          else type = "SUB";
          break;
        default:
          this.err("illegal char");
      }
    }
    return this.token(type, false);
  }

  private scanComment(c: number): void {
    if (c === ch("#") || (c === ch("/") && this.peek() !== ch("*"))) {
      if (c === ch("/") && this.peek() !== ch("/")) {
        this.err("expected '/' for comment");
        return;
      }
      c = this.next();
      while (c !== ch("\n") && c !== EOF) c = this.next();
      if (c !== EOF) this.unread();
      return;
    }
    if (c === ch("/")) {
      this.next();
      c = this.next();
    }
    for (;;) {
      if (c === EOF) {
        this.err("comment not terminated");
        break;
      }
      const c0 = c;
      c = this.next();
      if (c0 === ch("*") && c === ch("/")) break;
    }
  }

  private scanNumber(c: number): TokenType {
    if (c === ch("0")) {
      c = this.next();
      if (c === ch("x") || c === ch("X")) {
        c = this.next();
        let found = false;
        while (isHexadecimal(c)) {
          c = this.next();
          found = true;
        }
        if (!found) this.err("illegal hexadecimal number");
        if (c !== EOF) this.unread();
        return "NUMBER";
      }
      let illegalOctal = false;
      while (isDecimal(c)) {
        c = this.next();
        if (c === ch("8") || c === ch("9")) illegalOctal = true;
      }
      if (c === ch("e") || c === ch("E")) {
        this.scanExponent(c);
        return "FLOAT";
      }
      if (c === ch(".")) {
        c = this.scanFraction(c);
        if (c === ch("e") || c === ch("E")) this.scanExponent(this.next());
        return "FLOAT";
      }
      if (illegalOctal) this.err("illegal octal number");
      if (c !== EOF) this.unread();
      return "NUMBER";
    }
    this.scanMantissa(c);
    c = this.next();
    if (c === ch("e") || c === ch("E")) {
      this.scanExponent(c);
      return "FLOAT";
    }
    if (c === ch(".")) {
      c = this.scanFraction(c);
      if (c === ch("e") || c === ch("E")) this.scanExponent(this.next());
      return "FLOAT";
    }
    if (c !== EOF) this.unread();
    return "NUMBER";
  }

  private scanHeredoc(): void {
    if (this.next() !== ch("<")) {
      this.err("heredoc expected second '<', didn't see it");
      return;
    }
    const offs = this.idx;
    let c = this.next();
    if (c === ch("-")) c = this.next();
    while (isLetter(c) || isDigit(c)) c = this.next();
    if (c === EOF) {
      this.err("heredoc not terminated");
      return;
    }
    if (c === ch("\r") && this.peek() === ch("\n")) c = this.next();
    if (c !== ch("\n")) {
      this.err("invalid characters in heredoc anchor");
      return;
    }
    const ident = this.text(offs, this.idx - this.lastCharLen);
    if (ident === "" || ident === "-") {
      this.err("zero-length heredoc anchor");
      return;
    }
    const anchor = (ident.startsWith("-") ? ident.slice(1) : ident).replace(/[^\p{L}\p{N}_]/gu, "");
    // `^[[:space:]]*ANCHOR\r*\z`: [[:space:]] is ASCII white space in Go's regexp.
    const terminator = new RegExp(`^[\\t\\n\\v\\f\\r ]*${anchor}\\r*$`, "u");
    const identLength = Array.from(ident).length;
    let lineStart = this.idx;
    for (;;) {
      const r = this.next();
      if (r === ch("\n")) {
        const lineEnd = this.idx - this.lastCharLen;
        if (lineEnd - lineStart >= identLength && terminator.test(this.text(lineStart, lineEnd))) {
          break;
        }
        lineStart = this.idx;
      }
      if (r === EOF) {
        this.err("heredoc not terminated");
        return;
      }
    }
  }

  private scanString(): void {
    let braces = 0;
    for (;;) {
      const c = this.next();
      if ((c === ch("\n") && braces === 0) || c === EOF) {
        this.err("literal not terminated");
        return;
      }
      if (c === ch('"') && braces === 0) break;
      if (braces === 0 && c === ch("$") && this.peek() === ch("{")) {
        braces++;
        this.next();
      } else if (braces > 0 && c === ch("{")) {
        braces++;
      }
      if (braces > 0 && c === ch("}")) braces--;
      if (c === ch("\\")) this.scanEscape();
    }
  }

  protected scanDigits(c: number, base: number, n: number): number {
    const start = n;
    while (n > 0 && digitVal(c) < base) {
      c = this.next();
      if (c === EOF) break;
      n--;
    }
    if (n > 0) this.err("illegal char escape");
    if (n !== start && c !== EOF) this.unread();
    return c;
  }

  private scanIdentifier(): string {
    const offs = this.idx - this.lastCharLen;
    let c = this.next();
    while (isLetter(c) || isDigit(c) || c === ch("-") || c === ch(".")) c = this.next();
    if (c !== EOF) this.unread();
    return this.text(offs, this.idx);
  }
}

/** json/token types; `NULL` and `COLON` are JSON's own. */
export type JsonTokenType = TokenType | "NULL" | "COLON";

export interface JsonToken {
  readonly type: JsonTokenType;
  readonly pos: Pos;
  readonly text: string;
}

/** json/scanner Scanner. */
export class JsonScanner extends RuneReader {
  protected next(): number {
    return this.nextRune(false);
  }

  scan(): JsonToken {
    let c = this.next();
    while (isWhitespace(c)) c = this.next();
    this.markStart();
    let type: JsonTokenType = "ILLEGAL";
    if (isLetter(c)) {
      const literal = this.scanIdentifier();
      if (literal === "true" || literal === "false") type = "BOOL";
      else if (literal === "null") type = "NULL";
      else this.err("illegal char");
    } else if (isDecimal(c)) {
      type = this.scanNumber(c);
    } else {
      switch (c) {
        case EOF:
          type = "EOF";
          break;
        case ch('"'):
          type = "STRING";
          this.scanString();
          break;
        case ch("."):
          type = "PERIOD";
          if (isDecimal(this.peek())) {
            type = "FLOAT";
            this.scanExponent(this.scanMantissa(this.peek()));
          }
          break;
        case ch("["):
          type = "LBRACK";
          break;
        case ch("]"):
          type = "RBRACK";
          break;
        case ch("{"):
          type = "LBRACE";
          break;
        case ch("}"):
          type = "RBRACE";
          break;
        case ch(","):
          type = "COMMA";
          break;
        case ch(":"):
          type = "COLON";
          break;
        case ch("-"):
          if (isDecimal(this.peek())) type = this.scanNumber(this.next());
          else this.err("illegal char");
          break;
        default:
          this.err(`illegal char: ${String.fromCodePoint(c)}`);
      }
    }
    const token = this.token(type as TokenType, true);
    return { type, pos: token.pos, text: token.text };
  }

  private scanNumber(c: number): JsonTokenType {
    const zero = c === ch("0");
    const before = { ...this.srcPos };
    this.scanMantissa(c);
    c = this.next();
    if (c === ch("e") || c === ch("E")) {
      this.scanExponent(c);
      return "FLOAT";
    }
    if (c === ch(".")) {
      c = this.scanFraction(c);
      if (c === ch("e") || c === ch("E")) this.scanExponent(this.next());
      return "FLOAT";
    }
    if (c !== EOF) this.unread();
    if (zero && (before.line !== this.srcPos.line || before.column !== this.srcPos.column)) {
      this.err("numbers cannot start with 0");
    }
    return "NUMBER";
  }

  private scanString(): void {
    let braces = 0;
    for (;;) {
      const c = this.next();
      if (c === ch("\n") || c === EOF) {
        this.err("literal not terminated");
        return;
      }
      if (c === ch('"')) break;
      if (braces === 0 && c === ch("$") && this.peek() === ch("{")) {
        braces++;
        this.next();
      } else if (braces > 0 && c === ch("{")) {
        braces++;
      }
      if (braces > 0 && c === ch("}")) braces--;
      // json/scanner scanEscape knows no `\/`: JSON's own escape is refused here.
      if (c === ch("\\")) this.scanEscape();
    }
  }

  /** json/scanner scanDigits: unlike the native one, always puts the last rune back. */
  protected scanDigits(c: number, base: number, n: number): number {
    while (n > 0 && digitVal(c) < base) {
      c = this.next();
      n--;
    }
    if (n > 0) this.err("illegal char escape");
    this.unread();
    return c;
  }

  private scanIdentifier(): string {
    const offs = this.idx - this.lastCharLen;
    let c = this.next();
    while (isLetter(c) || isDigit(c) || c === ch("-")) c = this.next();
    if (c !== EOF) this.unread();
    return this.text(offs, this.idx);
  }
}
