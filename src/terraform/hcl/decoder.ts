/* eslint-disable @typescript-eslint/switch-exhaustiveness-check -- these switches follow Go's, whose `default` cases are the point */
// HCL 1's decoder (decoder.go), which fills a Go value by reflection. Here the Go types are
// described as data (GoType) and values kept as JavaScript data, so that each decode
// function can make the same choice on the same kind that Go's does: a key matched with
// strings.EqualFold (ObjectList Filter), a map merged into when decoded twice, a slice
// appended to, an interface{} taking its type from the node (or from the value it holds).

import {
  children,
  elem,
  filter,
  goTypeName,
  HclError,
  keyValue,
  nodePos,
  PosError,
  tokenValue,
  type Node,
  type ObjectItem,
  type ObjectList,
} from "./ast.ts";
import { GoPanic } from "./strconv.ts";

export type GoType =
  | { readonly kind: "bool" }
  | { readonly kind: "string" }
  | { readonly kind: "int" }
  | { readonly kind: "float64" }
  | { readonly kind: "interface" }
  | { readonly kind: "map"; readonly stringKeys: boolean; readonly elem: GoType }
  | { readonly kind: "slice"; readonly elem: GoType }
  | { readonly kind: "ptr"; readonly elem: GoType }
  | { readonly kind: "struct"; readonly fields: readonly Field[] }
  /** A type this reader does not model: reaching it makes the outcome unknown. */
  | { readonly kind: "unmodelled"; readonly name: string };

export interface Field {
  /** The Go field name, which the decoder matches when there is no tag. */
  readonly name: string;
  readonly tag?: string;
  readonly type: GoType;
}

/** What an interface{} holds: the dynamic type and its value. */
export interface Dynamic {
  readonly type: GoType;
  readonly value: unknown;
}

/** Decoding reached a type this reader does not model. */
export class Unmodelled extends Error {}

/** A settable place of a static type (reflect.Value with CanSet). */
interface Slot {
  readonly type: GoType;
  get(): unknown;
  set(value: unknown): void;
}

const INTERFACE: GoType = { kind: "interface" };
const STRING_MAP_OF_INTERFACE: GoType = { kind: "map", stringKeys: true, elem: INTERFACE };

/** The zero value of a type: Go's nil map, slice, pointer and interface are `null`. */
function zeroOf(type: GoType): unknown {
  switch (type.kind) {
    case "bool":
      return false;
    case "string":
      return "";
    case "int":
      return 0n;
    case "float64":
      return 0;
    case "struct":
      return Object.fromEntries(type.fields.map((field) => [field.name, zeroOf(field.type)]));
    default:
      return null;
  }
}

function local(type: GoType, value: unknown = zeroOf(type)): Slot & { value: unknown } {
  const slot = {
    type,
    value,
    get: () => slot.value,
    set: (next: unknown) => {
      slot.value = next;
    },
  };
  return slot;
}

/** hcl.DecodeObject into a pointer to `type` (Terraform decodes into `**Config`). */
export function decodeObject(type: GoType, root: ObjectList): unknown {
  const out = local(type);
  new Decoder().decode("root", root, out);
  return out.value;
}

class Decoder {
  /** decoder.stack: the kinds being decoded, interfaces left out. */
  private readonly stack: string[] = [];

  decode(name: string, node: Node, result: Slot): void {
    const kind = dynamicType(result).kind;
    if (kind !== "interface") this.stack.push(kind);
    try {
      switch (kind) {
        case "bool":
          this.decodeBool(name, node, result);
          return;
        case "float64":
          this.decodeFloat(name, node, result);
          return;
        case "int":
          this.decodeInt(name, node, result);
          return;
        case "interface":
          this.decodeInterface(name, node, result);
          return;
        case "map":
          this.decodeMap(name, node, result);
          return;
        case "ptr":
          this.decodePtr(name, node, result);
          return;
        case "slice":
          this.decodeSlice(name, node, result);
          return;
        case "string":
          this.decodeString(name, node, result);
          return;
        case "struct":
          this.decodeStruct(name, node, result);
          return;
        case "unmodelled":
          throw new Unmodelled(
            `${name}: decoding into ${(dynamicType(result) as { name: string }).name}`,
          );
      }
    } finally {
      if (kind !== "interface") this.stack.pop();
    }
  }

  /** decodeBool: only a BOOL token, a bare `true` or `false`; a quoted "true" is an error. */
  private decodeBool(name: string, node: Node, result: Slot): void {
    if (node.kind === "LiteralType" && node.token.type === "BOOL") {
      store(result, { kind: "bool" }, node.token.text === "true");
      return;
    }
    throw new PosError(nodePos(node), `${name}: unknown type ${goTypeName(node)}`);
  }

  /** decodeFloat: a FLOAT or NUMBER token through strconv.ParseFloat. */
  private decodeFloat(name: string, node: Node, result: Slot): void {
    if (
      node.kind === "LiteralType" &&
      (node.token.type === "FLOAT" || node.token.type === "NUMBER")
    ) {
      store(result, { kind: "float64" }, parseFloat(node.token.text));
      return;
    }
    throw new PosError(nodePos(node), `${name}: unknown type ${goTypeName(node)}`);
  }

  /** decodeInt: a NUMBER token, or a STRING's value, through strconv.ParseInt(s, 0, 0). */
  private decodeInt(name: string, node: Node, result: Slot): void {
    if (node.kind === "LiteralType" && node.token.type === "NUMBER") {
      store(result, { kind: "int" }, parseInt(node.token.text));
      return;
    }
    if (node.kind === "LiteralType" && node.token.type === "STRING") {
      store(result, { kind: "int" }, parseInt(String(tokenValue(node.token))));
      return;
    }
    throw new PosError(nodePos(node), `${name}: unknown type ${goTypeName(node)}`);
  }

  /**
   * decodeInterface: the node picks the type. An object at the root or in a slice becomes
   * map[string]interface{}; anywhere else, []map[string]interface{} (Terraform cannot
   * convert that one: see cliconfig.ts).
   */
  private decodeInterface(name: string, node: Node, result: Slot): void {
    const test = node.kind === "ObjectType" ? node.list : node;
    const top = this.stack.at(-1);
    const asMap = this.stack.length === 0 || top === "slice";
    let set: Dynamic;
    switch (test.kind) {
      case "ObjectList":
        set = asMap
          ? { type: STRING_MAP_OF_INTERFACE, value: new Map() }
          : { type: { kind: "slice", elem: STRING_MAP_OF_INTERFACE }, value: [] };
        break;
      case "ListType":
        set = { type: { kind: "slice", elem: INTERFACE }, value: [] };
        break;
      case "LiteralType":
        switch (test.token.type) {
          case "BOOL":
            set = { type: { kind: "bool" }, value: false };
            break;
          case "FLOAT":
            set = { type: { kind: "float64" }, value: 0 };
            break;
          case "NUMBER":
            set = { type: { kind: "int" }, value: 0n };
            break;
          case "STRING":
          case "HEREDOC":
            set = { type: { kind: "string" }, value: "" };
            break;
          default:
            throw new PosError(
              nodePos(node),
              `${name}: cannot decode into interface: ${goTypeName(node)}`,
            );
        }
        break;
      default:
        throw new HclError(`${name}: cannot decode into interface: ${goTypeName(node)}`);
    }
    result.set(set);
    this.decode(name, node, result);
  }

  /** decodeMap: each item by its first key; a key seen before decodes into the old value. */
  private decodeMap(name: string, node: Node, result: Slot): void {
    if (node.kind === "ObjectItem") node = { kind: "ObjectList", items: [node] };
    if (node.kind === "ObjectType") node = node.list;
    if (node.kind !== "ObjectList") {
      throw new PosError(
        nodePos(node),
        `${name}: not an object type for map (${goTypeName(node)})`,
      );
    }
    const list = node;
    const type = dynamicType(result) as Extract<GoType, { kind: "map" }>;
    if (!type.stringKeys) throw new PosError(nodePos(list), `${name}: map must have string keys`);
    const resultMap =
      (current(result) as Map<string, unknown> | null) ?? new Map<string, unknown>();
    const done = new Set<string>();
    for (const item of list.items) {
      if (item.val === undefined) continue;
      const [first] = item.keys;
      if (first === undefined)
        throw new PosError(nodePos(list), `${name}: map must have string keys`);
      const keyStr = keyValue(first);
      if (done.has(keyStr)) continue;
      let itemVal: Node = item.val;
      if (item.keys.length > 1) {
        // More keys: the value is every item whose first key matches, that key cut off.
        itemVal = filter(list, keyStr);
        done.add(keyStr);
      }
      const val = local(type.elem);
      if (resultMap.has(keyStr)) val.value = resultMap.get(keyStr);
      this.decode(`${name}.${keyStr}`, itemVal, val);
      resultMap.set(keyStr, val.value);
    }
    store(result, type, resultMap);
  }

  /** decodePtr: a new value of the element type, set only when it decodes. */
  private decodePtr(name: string, node: Node, result: Slot): void {
    const type = dynamicType(result) as Extract<GoType, { kind: "ptr" }>;
    const val = local(type.elem);
    this.decode(name, node, val);
    store(result, type, val.value);
  }

  /** decodeSlice: appends to the slice already there. */
  private decodeSlice(name: string, node: Node, result: Slot): void {
    const type = dynamicType(result) as Extract<GoType, { kind: "slice" }>;
    let items: Node[];
    switch (node.kind) {
      case "ObjectList":
        items = [...node.items];
        break;
      case "ObjectType":
        items = [node];
        break;
      case "ListType":
        items = node.list;
        break;
      default:
        throw new PosError(nodePos(node), `unknown slice type: ${goTypeName(node)}`);
    }
    const slice = [...((current(result) as unknown[] | null) ?? [])];
    for (const [i, each] of items.entries()) {
      const val = local(type.elem);
      this.decode(`${name}[${i}]`, expandObject(each, type.elem), val);
      slice.push(val.value);
    }
    store(result, type, slice);
  }

  /** decodeString: a NUMBER's text, a STRING's or HEREDOC's value. */
  private decodeString(name: string, node: Node, result: Slot): void {
    if (node.kind === "LiteralType") {
      if (node.token.type === "NUMBER") {
        store(result, { kind: "string" }, node.token.text);
        return;
      }
      if (node.token.type === "STRING" || node.token.type === "HEREDOC") {
        store(result, { kind: "string" }, tokenValue(node.token));
        return;
      }
    }
    throw new PosError(nodePos(node), `${name}: unknown type for string ${goTypeName(node)}`);
  }

  /**
   * decodeStruct: per field, the items whose first key EqualFolds its tag (or Go name): those
   * with keys left (`credentials "h" {}`) decode together, then each without
   * (`credentials = {...}`, `credentials {...}`) alone, as an object list.
   */
  private decodeStruct(name: string, node: Node, result: Slot): void {
    let item: ObjectItem | undefined;
    if (node.kind === "ObjectItem") {
      item = node;
      if (node.val === undefined)
        throw new GoPanic("invalid memory address or nil pointer dereference");
      node = node.val;
    }
    if (node.kind === "ObjectType") node = node.list;
    if (node.kind === "LiteralType" && item !== undefined)
      node = { kind: "ObjectList", items: [item] };
    if (node.kind !== "ObjectList") {
      throw new PosError(
        nodePos(node),
        `${name}: not an object type for struct (${goTypeName(node)})`,
      );
    }
    const list = node;
    const type = dynamicType(result) as Extract<GoType, { kind: "struct" }>;
    const value = current(result) as Record<string, unknown>;
    for (const field of type.fields) {
      const fieldName = field.tag ?? field.name;
      const filtered = filter(list, fieldName);
      const prefixMatches = children(filtered);
      const matches = elem(filtered);
      if (matches.items.length === 0 && prefixMatches.items.length === 0) continue;
      const slot: Slot = {
        type: field.type,
        get: () => value[field.name],
        set: (next) => {
          value[field.name] = next;
        },
      };
      const path = `${name}.${fieldName}`;
      if (prefixMatches.items.length > 0) this.decode(path, prefixMatches, slot);
      for (const match of matches.items) {
        let decodeNode = match.val;
        if (decodeNode === undefined)
          throw new GoPanic("invalid memory address or nil pointer dereference");
        if (decodeNode.kind === "ObjectType")
          decodeNode = { kind: "ObjectList", items: decodeNode.list.items };
        this.decode(path, decodeNode, slot);
      }
    }
  }
}

/** The type decode dispatches on: an interface holding a value goes by that value's type. */
function dynamicType(slot: Slot): GoType {
  if (slot.type.kind !== "interface") return slot.type;
  const held = slot.get() as Dynamic | null;
  return held?.type ?? slot.type;
}

function current(slot: Slot): unknown {
  if (slot.type.kind !== "interface") return slot.get();
  return (slot.get() as Dynamic | null)?.value ?? null;
}

/** result.Set: an interface slot holds the value with its type. */
function store(slot: Slot, type: GoType, value: unknown): void {
  slot.set(slot.type.kind === "interface" ? { type, value } : value);
}

/**
 * expandObject: an item flattened from JSON with two keys, decoded into a struct, gets its
 * first key back as an object around the rest. Like Go, it cuts the key off the item itself.
 */
function expandObject(node: Node, type: GoType): Node {
  if (node.kind !== "ObjectItem") return node;
  const target = type.kind === "ptr" ? type.elem : type;
  if (target.kind !== "struct" || node.keys.length !== 2) return node;
  const [keyToken, ...rest] = node.keys;
  node.keys = rest;
  return {
    kind: "ObjectItem",
    keys: keyToken === undefined ? [] : [keyToken],
    val: {
      kind: "ObjectType",
      lbrace: { line: 0, column: 0 },
      list: { kind: "ObjectList", items: [node] },
    },
  };
}

/** strconv.ParseFloat(s, 64): Go's error text when it fails. */
function parseFloat(text: string): number {
  const value = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isNaN(value))
    throw new HclError(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
  if (!Number.isFinite(value))
    throw new HclError(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: value out of range`);
  return value;
}

/** strconv.ParseInt(s, 0, 0) on a 64-bit Go: 0x hex, a leading 0 octal, else decimal. */
function parseInt(text: string): bigint {
  const fail = (why: string) =>
    new HclError(`strconv.ParseInt: parsing ${JSON.stringify(text)}: ${why}`);
  const match =
    /^([+-]?)(0[xX][0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0[oO]?[0-7]+(?:_[0-7]+)*|0[bB][01]+(?:_[01]+)*|[1-9]\d*(?:_\d+)*|0)$/.exec(
      text,
    );
  if (match === null) throw fail("invalid syntax");
  const [, sign = "", digits = ""] = match;
  let body = digits.replaceAll("_", "");
  if (/^0[0-7]/.test(body)) body = `0o${body.slice(1)}`;
  if (/^0[oO]/.test(body)) body = `0o${body.slice(2)}`;
  const value = BigInt(body) * (sign === "-" ? -1n : 1n);
  if (value > 2n ** 63n - 1n || value < -(2n ** 63n)) throw fail("value out of range");
  return value;
}
