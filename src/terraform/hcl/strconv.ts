// String rules HCL 1 relies on: hcl/strconv/quote.go Unquote (native strings), Go's
// strconv.Unquote (JSON strings, json/token HCLToken marks them), strings.EqualFold (keys).
// Go strings are bytes: escapes such as `\xc3\xa9` build UTF-8 byte by byte, so values are
// built as bytes and decoded once (an invalid sequence becomes U+FFFD, as JSON output would).

/** A Go panic: Terraform crashes, on every command, with this message. */
export class GoPanic extends Error {}

const SIMPLE: Readonly<Record<string, number>> = {
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
  "\\": 0x5c,
};

function pushRune(bytes: number[], rune: number): void {
  // utf8.EncodeRune writes U+FFFD for a surrogate or a rune beyond U+10FFFF.
  const valid = rune <= 0x10ffff && !(rune >= 0xd800 && rune <= 0xdfff);
  bytes.push(...Buffer.from(String.fromCodePoint(valid ? rune : 0xfffd), "utf8"));
}

function decode(bytes: readonly number[]): string {
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

/**
 * One character or escape at `s[at]` (a code point, not a byte), after hcl/strconv
 * unquoteChar (`go` false) or Go's strconv.UnquoteChar (`go` true). Returns the bytes it
 * stands for and where the next starts; `undefined` for Go's ErrSyntax.
 */
function unquoteChar(
  s: readonly string[],
  at: number,
  go: boolean,
): { bytes: number[]; next: number } | undefined {
  const c = s[at] ?? "";
  if (c === '"') return undefined;
  if (c !== "\\") return { bytes: [...Buffer.from(c, "utf8")], next: at + 1 };
  if (at + 1 >= s.length) return undefined;
  const e = s[at + 1] ?? "";
  let next = at + 2;
  const simple = SIMPLE[e];
  if (simple !== undefined) return { bytes: [simple], next };
  if (e === '"') return { bytes: [0x22], next };
  if (e === "x" || e === "u" || e === "U") {
    const n = e === "x" ? 2 : e === "u" ? 4 : 8;
    const digits = s.slice(next, next + n).join("");
    if (digits.length !== n || !/^[0-9a-fA-F]+$/.test(digits)) return undefined;
    next += n;
    const v = Number.parseInt(digits, 16);
    if (e === "x") return { bytes: [v], next };
    // hcl/strconv refuses only runes beyond U+10FFFF; Go's also refuses surrogates (ValidRune).
    if (v > 0x10ffff || (go && v >= 0xd800 && v <= 0xdfff)) return undefined;
    const bytes: number[] = [];
    pushRune(bytes, v);
    return { bytes, next };
  }
  if (/^[0-7]$/.test(e)) {
    const digits = s.slice(next, next + 2).join("");
    if (digits.length !== 2 || !/^[0-7]{2}$/.test(digits)) return undefined;
    const v = Number.parseInt(e + digits, 8);
    if (v > 255) return undefined;
    return { bytes: [v], next: next + 2 };
  }
  return undefined;
}

/** hcl/strconv Unquote: Go escapes, `${...}` copied verbatim, no line break outside one. */
export function hclUnquote(quoted: string): string | undefined {
  const runes = Array.from(quoted);
  if (runes.length < 2 || runes[0] !== '"' || runes.at(-1) !== '"') return undefined;
  const s = runes.slice(1, -1);
  const inner = s.join("");
  if (!inner.includes("$") && !inner.includes("{") && inner.includes("\n")) return undefined;
  if (!inner.includes("\\") && !inner.includes('"') && !inner.includes("$")) return inner;
  const bytes: number[] = [];
  let at = 0;
  while (at < s.length) {
    if (s[at] === "$" && s[at + 1] === "{") {
      bytes.push(0x24, 0x7b);
      at += 2;
      let braces = 1;
      while (at < s.length && braces > 0) {
        const r = s[at] ?? "";
        // utf8.DecodeRuneInString: U+FFFD, written or from bad bytes, is an error here.
        if (r === "\ufffd" || /\p{Cs}/u.test(r)) return undefined;
        at++;
        bytes.push(...Buffer.from(r, "utf8"));
        if (r === "{") braces++;
        if (r === "}") braces--;
      }
      if (braces !== 0) return undefined;
      continue;
    }
    if (s[at] === "\n") return undefined;
    const char = unquoteChar(s, at, false);
    if (char === undefined) return undefined;
    bytes.push(...char.bytes);
    at = char.next;
  }
  return decode(bytes);
}

/** Go's strconv.Unquote for a double-quoted string: Go escapes, no raw line break. */
export function goUnquote(quoted: string): string | undefined {
  const runes = Array.from(quoted);
  if (runes.length < 2 || runes[0] !== '"' || runes.at(-1) !== '"') return undefined;
  const s = runes.slice(1, -1);
  const bytes: number[] = [];
  let at = 0;
  while (at < s.length) {
    if (s[at] === "\n") return undefined;
    const char = unquoteChar(s, at, true);
    if (char === undefined) return undefined;
    bytes.push(...char.bytes);
    at = char.next;
  }
  return decode(bytes);
}

/** One code point's simple case fold class, for strings.EqualFold. */
function folds(a: string, b: string): boolean {
  if (a === b) return true;
  const single = (value: string) => Array.from(value).length === 1;
  const [la, lb, ua, ub] = [a.toLowerCase(), b.toLowerCase(), a.toUpperCase(), b.toUpperCase()];
  return (single(la) && la === lb) || (single(ua) && ua === ub);
}

/** strings.EqualFold: equal under simple Unicode case folding, code point by code point. */
export function equalFold(a: string, b: string): boolean {
  const [ra, rb] = [Array.from(a), Array.from(b)];
  return ra.length === rb.length && ra.every((char, i) => folds(char, rb[i] ?? ""));
}
