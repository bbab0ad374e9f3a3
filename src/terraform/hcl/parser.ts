/* eslint-disable @typescript-eslint/switch-exhaustiveness-check -- these switches follow Go's, whose `default` cases are the point */
// HCL 1's parsers, decision for decision: hcl/parser/parser.go (native syntax) and
// json/parser/parser.go + flatten.go (JSON syntax), and hcl's parse.go lexMode that picks
// one by content. Both keep scanning after a scanner error and, at the end, report the last
// scanner error if there was one, else the parser's own.

import {
  HclError,
  NO_POS,
  PosError,
  posString,
  type ListType,
  type LiteralType,
  type Node,
  type ObjectItem,
  type ObjectList,
  type ObjectType,
  type Pos,
  type Token,
} from "./ast.ts";
import { JsonScanner, Scanner, type JsonToken } from "./scanner.ts";

/** A parse error, with Go's message. */
export class ParseError extends HclError {}

const EOF_TOKEN = Symbol("EOF token found");

/** token.Token String(), as "Unknown token" messages print it (`%+v` calls it). */
function tokenString(token: {
  readonly pos: Pos;
  readonly type: string;
  readonly text: string;
}): string {
  return `${posString(token.pos)} ${token.type} ${token.text}`;
}

/** hcl's lexMode: leading white space (unicode.IsSpace), then `{`, is JSON. */
export function isJsonSyntax(text: string): boolean {
  return /^\p{White_Space}*\{/u.test(text);
}

/** hcl.Parse: the file's syntax tree, or a ParseError with the message Terraform prints. */
export function parse(text: string): ObjectList {
  return isJsonSyntax(text) ? new JsonParser(text).parse() : new NativeParser(text).parse();
}

/** hcl/parser Parser. */
class NativeParser {
  private readonly sc: Scanner;
  private tok: Token = {
    type: "ILLEGAL",
    pos: NO_POS,
    text: "",
    json: false,
    line: 0,
    start: 0,
    end: 0,
  };
  private n = 0;
  private scanError: string | undefined;

  constructor(text: string) {
    // Parse: "\r\n" becomes "\n" before scanning.
    this.sc = new Scanner(text.replaceAll("\r\n", "\n"), (pos, message) => {
      this.scanError = `At ${posString(pos)}: ${message}`;
    });
  }

  parse(): ObjectList {
    let result: ObjectList | Error;
    try {
      const [list, error] = this.objectList(false);
      result = error ?? list;
    } catch (error) {
      if (!(error instanceof HclError)) throw error;
      result = error;
    }
    if (this.scanError !== undefined) throw new ParseError(this.scanError);
    if (result instanceof Error) throw new ParseError(result.message);
    return result;
  }

  /**
   * objectList: items until EOF (top level) or a `}`, each optionally followed by a comma.
   * An error comes back beside the items read so far, which objectType may still keep.
   * An item cut off by the end of the file (`x =`) ends the list without an error.
   */
  private objectList(obj: boolean): [ObjectList, Error | undefined] {
    const node: ObjectList = { kind: "ObjectList", items: [] };
    for (;;) {
      if (obj) {
        const tok = this.scan();
        this.unscan();
        if (tok.type === "RBRACE") break;
      }
      let item;
      try {
        item = this.objectItem();
      } catch (error) {
        if (!(error instanceof HclError)) throw error;
        return [node, error];
      }
      if (item === EOF_TOKEN) break;
      node.items.push(item);
      const tok = this.scan();
      if (tok.type !== "COMMA") this.unscan();
    }
    return [node, undefined];
  }

  /** objectItem: keys, then `=` and a value or `{` and an object. */
  private objectItem(): ObjectItem | typeof EOF_TOKEN {
    const [keys, keyError] = this.objectKey();
    let error = keyError;
    if (keys.length > 0 && error === EOF_TOKEN) error = undefined;
    if (keys.length > 0 && error !== undefined && this.tok.type === "RBRACE") {
      // A key without a value before a `}`: the error below names the key instead.
      error = undefined;
      this.tok = { ...this.tok, type: "EOF" };
    }
    if (error === EOF_TOKEN) return EOF_TOKEN;
    if (error !== undefined) throw error;
    const item: ObjectItem = { kind: "ObjectItem", keys, val: undefined };
    switch (this.tok.type) {
      case "ASSIGN": {
        const value = this.object();
        if (value === EOF_TOKEN) return EOF_TOKEN;
        item.val = value;
        break;
      }
      case "LBRACE":
        item.val = this.objectType();
        break;
      default:
        throw new PosError(
          this.tok.pos,
          `key '${keys.map((key) => key.text).join(" ")}' expected start of object ('{') or assignment ('=')`,
        );
    }
    this.scan();
    this.unscan();
    return item;
  }

  /** objectKey: identifiers and strings up to `=` or `{`. */
  private objectKey(): [Token[], PosError | typeof EOF_TOKEN | undefined] {
    const keys: Token[] = [];
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case "EOF":
          return [keys, EOF_TOKEN];
        case "ASSIGN":
          if (keys.length > 1) {
            return [
              [],
              new PosError(this.tok.pos, `nested object expected: LBRACE got: ${this.tok.type}`),
            ];
          }
          if (keys.length === 0) return [[], new PosError(this.tok.pos, "no object keys found!")];
          return [keys, undefined];
        case "LBRACE":
          return [
            keys,
            keys.length === 0
              ? new PosError(this.tok.pos, `expected: IDENT | STRING got: ${this.tok.type}`)
              : undefined,
          ];
        case "IDENT":
        case "STRING":
          keys.push(this.tok);
          break;
        case "ILLEGAL":
          return [keys, new PosError(this.tok.pos, "illegal character")];
        default:
          return [
            keys,
            new PosError(
              this.tok.pos,
              `expected: IDENT | STRING | ASSIGN | LBRACE got: ${this.tok.type}`,
            ),
          ];
      }
    }
  }

  /** object: what may follow `=`. A bare word is no value (`x = yes` fails here). */
  private object(): Node | typeof EOF_TOKEN {
    const tok = this.scan();
    switch (tok.type) {
      case "NUMBER":
      case "FLOAT":
      case "BOOL":
      case "STRING":
      case "HEREDOC":
        return this.literalType();
      case "LBRACE":
        return this.objectType();
      case "LBRACK":
        return this.listType();
      case "EOF":
        // errEofToken, which objectList takes for the end of the items.
        return EOF_TOKEN;
      default:
        throw new PosError(tok.pos, `Unknown token: ${tokenString(tok)}`);
    }
  }

  /** objectType: `{ items }`; an error that stopped on a `}` still closes the object. */
  private objectType(): ObjectType {
    const lbrace = this.tok.pos;
    const [list, error] = this.objectList(true);
    if (error !== undefined && this.tok.type !== "RBRACE") throw error;
    const tok = this.scan();
    if (tok.type !== "RBRACE") {
      throw new PosError(tok.pos, `object expected closing RBRACE got: ${tok.type}`);
    }
    return { kind: "ObjectType", lbrace, list };
  }

  /** listType: literals, objects and lists, comma-separated, a trailing comma allowed. */
  private listType(): ListType {
    const list: ListType = { kind: "ListType", lbrack: this.tok.pos, list: [] };
    let needComma = false;
    for (;;) {
      const tok = this.scan();
      if (needComma && tok.type !== "COMMA" && tok.type !== "RBRACK") {
        throw new PosError(
          tok.pos,
          `error parsing list, expected comma or list end, got: ${tok.type}`,
        );
      }
      switch (tok.type) {
        case "BOOL":
        case "NUMBER":
        case "FLOAT":
        case "STRING":
        case "HEREDOC":
          list.list.push(this.literalType());
          needComma = true;
          break;
        case "COMMA":
          this.scan();
          this.unscan();
          needComma = false;
          break;
        case "LBRACE":
          try {
            list.list.push(this.objectType());
          } catch (error) {
            throw new PosError(
              tok.pos,
              `error while trying to parse object within list: ${(error as Error).message}`,
            );
          }
          needComma = true;
          break;
        case "LBRACK":
          try {
            list.list.push(this.listType());
          } catch (error) {
            throw new PosError(
              tok.pos,
              `error while trying to parse list within list: ${(error as Error).message}`,
            );
          }
          break;
        case "RBRACK":
          return list;
        default:
          throw new PosError(tok.pos, `unexpected token while parsing list: ${tok.type}`);
      }
    }
  }

  private literalType(): LiteralType {
    return { kind: "LiteralType", token: this.tok };
  }

  /** scan: the next token that is not a comment, or the one unscan put back. */
  private scan(): Token {
    if (this.n !== 0) {
      this.n = 0;
      return this.tok;
    }
    this.tok = this.sc.scan();
    while (this.tok.type === "COMMENT") this.tok = this.sc.scan();
    return this.tok;
  }

  private unscan(): void {
    this.n = 1;
  }
}

/** json/parser Parser, then flattenObjects. */
class JsonParser {
  private readonly sc: JsonScanner;
  private tok: JsonToken = { type: "ILLEGAL", pos: NO_POS, text: "" };
  private n = 0;
  private scanError: string | undefined;

  constructor(text: string) {
    this.sc = new JsonScanner(text, (pos, message) => {
      this.scanError = `${posString(pos)}: ${message}`;
    });
  }

  parse(): ObjectList {
    let result: ObjectType | Error;
    try {
      // The root must be an object; whatever follows it is never read.
      result = this.object();
    } catch (error) {
      if (!(error instanceof HclError)) throw error;
      result = error;
    }
    if (this.scanError !== undefined) throw new ParseError(this.scanError);
    if (result instanceof Error) throw result;
    flattenObjects(result.list);
    return result.list;
  }

  private objectList(): [ObjectList, Error | undefined] {
    const node: ObjectList = { kind: "ObjectList", items: [] };
    for (;;) {
      let item;
      try {
        item = this.objectItem();
      } catch (error) {
        if (!(error instanceof HclError)) throw error;
        return [node, error];
      }
      if (item === EOF_TOKEN) break;
      node.items.push(item);
      // No comma ends the list, whatever the token is.
      if (this.scan().type !== "COMMA") break;
    }
    return [node, undefined];
  }

  private objectItem(): ObjectItem | typeof EOF_TOKEN {
    const keys = this.objectKey();
    if (keys === EOF_TOKEN) return EOF_TOKEN;
    const item: ObjectItem = { kind: "ObjectItem", keys, val: undefined };
    if (this.tok.type === "COLON") {
      const value = this.objectValue();
      if (value === EOF_TOKEN) return EOF_TOKEN;
      item.val = value;
    }
    return item;
  }

  private objectKey(): Token[] | typeof EOF_TOKEN {
    const keys: Token[] = [];
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case "EOF":
          return EOF_TOKEN;
        case "STRING":
          keys.push(hclToken(tok));
          break;
        case "COLON":
          if (keys.length === 0) throw new ParseError(`expected: STRING got: ${tok.type}`);
          return keys;
        case "ILLEGAL":
          throw new ParseError("illegal");
        default:
          throw new ParseError(`expected: STRING got: ${tok.type}`);
      }
    }
  }

  private objectValue(): Node | typeof EOF_TOKEN {
    const tok = this.scan();
    switch (tok.type) {
      case "NUMBER":
      case "FLOAT":
      case "BOOL":
      case "NULL":
      case "STRING":
        return { kind: "LiteralType", token: hclToken(tok) };
      case "LBRACE":
        return this.objectType();
      case "LBRACK":
        return this.listType();
      case "EOF":
        return EOF_TOKEN;
      default:
        throw new ParseError(`Expected object value, got unknown token: ${tokenString(tok)}`);
    }
  }

  private object(): ObjectType {
    const tok = this.scan();
    if (tok.type === "LBRACE") return this.objectType();
    if (tok.type === "EOF") throw new ParseError("EOF token found");
    throw new ParseError(`Expected object, got unknown token: ${tokenString(tok)}`);
  }

  /** objectType: an error that stopped on a `}` (`{}`, a trailing comma) is no error. */
  private objectType(): ObjectType {
    const [list, error] = this.objectList();
    if (error !== undefined && this.tok.type !== "RBRACE") throw error;
    return { kind: "ObjectType", lbrace: NO_POS, list };
  }

  /** listType: booleans and nested lists are skipped, not kept (json/parser listType). */
  private listType(): ListType {
    const list: ListType = { kind: "ListType", lbrack: NO_POS, list: [] };
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case "NUMBER":
        case "FLOAT":
        case "STRING":
          list.list.push({ kind: "LiteralType", token: hclToken(tok) });
          break;
        case "COMMA":
        case "BOOL":
        case "LBRACK":
          break;
        case "LBRACE":
          list.list.push(this.objectType());
          break;
        case "RBRACK":
          return list;
        default:
          throw new ParseError(`unexpected token while parsing list: ${tok.type}`);
      }
    }
  }

  private scan(): JsonToken {
    if (this.n !== 0) {
      this.n = 0;
      return this.tok;
    }
    this.tok = this.sc.scan();
    return this.tok;
  }
}

/** json/token HCLToken: the position is dropped (Go's zero Pos); null is an empty STRING. */
function hclToken(tok: JsonToken): Token {
  const base = { pos: NO_POS, json: false, line: tok.pos.line, start: 0, end: 0 };
  switch (tok.type) {
    case "BOOL":
    case "FLOAT":
    case "NUMBER":
      return { ...base, type: tok.type, text: tok.text };
    case "NULL":
      return { ...base, type: "STRING", text: "" };
    case "STRING":
      return { ...base, type: "STRING", text: tok.text, json: true };
    default:
      throw new ParseError(`unimplemented HCLToken for type: ${tok.type}`);
  }
}

/**
 * json/parser flattenObjects, over ast.Walk: in every object list, an item whose value is
 * an object of objects becomes one item per member (its key appended), and one whose value
 * is a list of objects becomes one item per element; repeated until neither applies.
 */
function flattenObjects(node: Node): void {
  if (node.kind === "ObjectList") flattenList(node);
  switch (node.kind) {
    case "ObjectList":
      for (const item of node.items) flattenObjects(item);
      break;
    case "ObjectItem":
      if (node.val !== undefined) flattenObjects(node.val);
      break;
    case "ListType":
      for (const element of node.list) flattenObjects(element);
      break;
    case "ObjectType":
      flattenObjects(node.list);
      break;
    case "LiteralType":
      break;
  }
}

function flattenList(list: ObjectList): void {
  const items: ObjectItem[] = [];
  const frontier = [...list.items];
  for (let item = frontier.pop(); item !== undefined; item = frontier.pop()) {
    const val = item.val;
    if (val?.kind === "ObjectType") {
      // flattenObjectType: Go's nil Items (an empty JSON object) keeps the item.
      const members = val.list.items;
      if (members.length === 0 || !members.every((member) => member.val?.kind === "ObjectType")) {
        items.push(item);
        continue;
      }
      for (const member of members) {
        frontier.push({
          kind: "ObjectItem",
          keys: [...item.keys, ...member.keys],
          val: member.val,
        });
      }
    } else if (val?.kind === "ListType") {
      // flattenListType
      if (val.list.length === 0 || !val.list.every((element) => element.kind === "ObjectType")) {
        items.push(item);
        continue;
      }
      for (const element of val.list)
        frontier.push({ kind: "ObjectItem", keys: item.keys, val: element });
    } else {
      items.push(item);
    }
  }
  list.items = items.reverse();
}
