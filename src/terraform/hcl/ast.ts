/* eslint-disable @typescript-eslint/switch-exhaustiveness-check -- these switches follow Go's, whose `default` cases are the point */
// The tokens and syntax tree HCL 1 (github.com/hashicorp/hcl v1.0.0, the version Terraform's
// go.mod names) builds from a CLI config file: hcl/token/token.go and hcl/ast/ast.go. Both
// syntaxes (native and JSON) end up in this one tree, which the decoder reads.

import { equalFold, GoPanic, hclUnquote, goUnquote } from "./strconv.ts";

/** hcl/token.Type; the names are what its String() prints in messages. */
export type TokenType =
  | "ILLEGAL"
  | "EOF"
  | "COMMENT"
  | "IDENT"
  | "NUMBER"
  | "FLOAT"
  | "BOOL"
  | "STRING"
  | "HEREDOC"
  | "LBRACK"
  | "LBRACE"
  | "COMMA"
  | "PERIOD"
  | "RBRACK"
  | "RBRACE"
  | "ASSIGN"
  | "ADD"
  | "SUB";

/** hcl/token.Pos: only line and column reach messages. Line 0 is Go's zero (invalid) Pos. */
export interface Pos {
  readonly line: number;
  readonly column: number;
}

export const NO_POS: Pos = { line: 0, column: 0 };

/** token.Pos String(): `line:column`, or `-` for the zero Pos (every JSON token's, see json.ts). */
export function posString(pos: Pos): string {
  return pos.line > 0 ? `${pos.line}:${pos.column}` : "-";
}

/** hcl/token.Token. `json` marks a string from the JSON syntax (decoded by Go's strconv). */
export interface Token {
  readonly type: TokenType;
  readonly pos: Pos;
  readonly text: string;
  readonly json: boolean;
  /** The line in the file, kept for this tool's messages even where Go's Pos is zero. */
  readonly line: number;
  /** Where the token starts and ends in the scanned text, in UTF-16 code units (the editor's). */
  readonly start: number;
  readonly end: number;
}

/** An error HCL 1 returns (a parse or decode error): Terraform drops the file. */
export class HclError extends Error {}

/** parser.PosError Error(): `At line:column: message`. */
export class PosError extends HclError {
  constructor(pos: Pos, message: string) {
    super(`At ${posString(pos)}: ${message}`);
  }
}

/**
 * token.Token Value() for the types a key or string can have. Go panics where an escape the
 * scanner let through does not unquote (`"\777"`), and so does this.
 */
export function tokenValue(token: Token): string | boolean {
  switch (token.type) {
    case "BOOL":
      return token.text === "true";
    case "IDENT":
      return token.text;
    case "HEREDOC":
      return unindentHeredoc(token.text);
    case "STRING": {
      // A JSON null arrives as a STRING with no text (json/token HCLToken).
      if (token.text === "") return "";
      const value = token.json ? goUnquote(token.text) : hclUnquote(token.text);
      if (value === undefined) throw new GoPanic(`unquote ${token.text} err: invalid syntax`);
      return value;
    }
    default:
      throw new GoPanic(`unimplemented Value for type: ${token.type}`);
  }
}

/** tokenValue for a key, which Go asserts is a string. */
export function keyValue(token: Token): string {
  const value = tokenValue(token);
  if (typeof value !== "string") throw new GoPanic("interface conversion: not a string");
  return value;
}

/** token.go unindentHeredoc: `<<` keeps the text; `<<-` strips the terminator's indent. */
function unindentHeredoc(heredoc: string): string {
  const idx = heredoc.indexOf("\n");
  if (idx === -1) throw new GoPanic("heredoc doesn't contain newline");
  if (heredoc[2] !== "-") return heredoc.slice(idx + 1, heredoc.length - idx + 1);
  const lines = heredoc.slice(idx + 1, heredoc.length - idx + 2).split("\n");
  const prefix = lines.at(-1) ?? "";
  if (!lines.every((line) => line.startsWith(prefix))) {
    return heredoc.slice(idx + 1, heredoc.length - idx + 1).replace(/[ \t]+$/, "");
  }
  return lines
    .map((line, k) => (k === lines.length - 1 ? "" : line.slice(prefix.length)))
    .join("\n");
}

export type Node = ObjectList | ObjectItem | ObjectType | ListType | LiteralType;

export interface ObjectList {
  readonly kind: "ObjectList";
  items: ObjectItem[];
}

export interface ObjectItem {
  readonly kind: "ObjectItem";
  keys: Token[];
  /** Absent for a JSON key without a value (`{"a" "b"}`). */
  val: Node | undefined;
}

export interface ObjectType {
  readonly kind: "ObjectType";
  readonly lbrace: Pos;
  list: ObjectList;
}

export interface ListType {
  readonly kind: "ListType";
  readonly lbrack: Pos;
  readonly list: Node[];
}

export interface LiteralType {
  readonly kind: "LiteralType";
  readonly token: Token;
}

/** The Go type name `%T` prints. */
export function goTypeName(node: Node): string {
  return `*ast.${node.kind}`;
}

/** Node Pos(). ObjectList's indexes its first item: Go panics on an empty list. */
export function nodePos(node: Node): Pos {
  switch (node.kind) {
    case "ObjectList": {
      const [first] = node.items;
      if (first === undefined)
        throw new GoPanic("runtime error: index out of range [0] with length 0");
      return nodePos(first);
    }
    case "ObjectItem":
      return node.keys[0]?.pos ?? NO_POS;
    case "ObjectType":
      return node.lbrace;
    case "ListType":
      return node.lbrack;
    case "LiteralType":
      return node.token.pos;
  }
}

/** ast.ObjectList Filter: items whose keys start with `keys` (strings.EqualFold), those keys cut off. */
export function filter(list: ObjectList, ...keys: string[]): ObjectList {
  const items: ObjectItem[] = [];
  for (const item of list.items) {
    if (item.keys.length < keys.length) continue;
    let match = true;
    for (const [i, key] of item.keys.slice(0, keys.length).entries()) {
      const value = keyValue(key);
      const want = keys[i] ?? "";
      if (value !== want && !equalFold(value, want)) {
        match = false;
        break;
      }
    }
    if (!match) continue;
    items.push({ ...item, keys: item.keys.slice(keys.length) });
  }
  return { kind: "ObjectList", items };
}

/** ast.ObjectList Children: the items with keys left. */
export function children(list: ObjectList): ObjectList {
  return { kind: "ObjectList", items: list.items.filter((item) => item.keys.length > 0) };
}

/** ast.ObjectList Elem: the items with no keys left. */
export function elem(list: ObjectList): ObjectList {
  return { kind: "ObjectList", items: list.items.filter((item) => item.keys.length === 0) };
}
