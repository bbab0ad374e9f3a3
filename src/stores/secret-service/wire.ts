/**
 * The D-Bus wire format (D-Bus specification, "Message Protocol"): values to bytes and bytes
 * to values, with no I/O. Everything read from the socket passes through `MessageReader`,
 * which bounds every length before it allocates and turns malformed input into a
 * `WireError`, never a hang.
 *
 * Values as JavaScript sees them: y n q i u h d as number, x t as bigint, b as boolean,
 * s o g as string, `ay` as Uint8Array, other arrays as arrays, dicts (`a{..}`) as Map,
 * structs as arrays, variants as `{ signature, value }`.
 */

export type DbusValue =
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | readonly DbusValue[]
  | ReadonlyMap<DbusValue, DbusValue>
  | Variant;

export interface Variant {
  readonly signature: string;
  readonly value: DbusValue;
}

export const MessageType = { MethodCall: 1, MethodReturn: 2, Error: 3, Signal: 4 } as const;
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

export interface Message {
  readonly type: MessageType;
  readonly flags: number;
  readonly serial: number;
  readonly path?: string;
  readonly interface?: string;
  readonly member?: string;
  readonly errorName?: string;
  readonly replySerial?: number;
  readonly destination?: string;
  readonly sender?: string;
  /** The body's signature; "" for an empty body. */
  readonly signature: string;
  readonly body: readonly DbusValue[];
}

export type Endianness = "little" | "big";

/** Malformed bytes, or a value that does not fit its signature. */
export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WireError";
  }
}

/**
 * The largest message accepted from the bus. The specification allows 128 MiB; no reply the
 * Secret Service sends us comes near 4 MiB, and a length above it is refused before a byte
 * of it is buffered.
 */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
const MAX_ARRAY_BYTES = 64 * 1024 * 1024;
// The specification: 32 levels of arrays and 32 of structs, 64 in all counting variants.
const MAX_DEPTH = 64;
// Each decoded value costs a JavaScript object or more (an empty `ay` is 4 bytes on the wire
// and a Uint8Array of ~200 bytes in the heap); no Secret Service reply comes near this many.
const MAX_VALUES = 65_536;

// ---------------------------------------------------------------------------- signatures

type TypeNode =
  | { readonly code: "a"; readonly element: TypeNode }
  | { readonly code: "("; readonly fields: readonly TypeNode[] }
  | { readonly code: "{"; readonly key: TypeNode; readonly value: TypeNode }
  | { readonly code: BasicCode | "v" };

type BasicCode = "y" | "b" | "n" | "q" | "i" | "u" | "x" | "t" | "d" | "h" | "s" | "o" | "g";
const BASIC_CODES = new Set<string>([
  "y",
  "b",
  "n",
  "q",
  "i",
  "u",
  "x",
  "t",
  "d",
  "h",
  "s",
  "o",
  "g",
]);

const ALIGNMENT: Readonly<Record<string, number | undefined>> = {
  y: 1,
  b: 4,
  n: 2,
  q: 2,
  i: 4,
  u: 4,
  x: 8,
  t: 8,
  d: 8,
  h: 4,
  s: 4,
  o: 4,
  g: 1,
  v: 1,
  a: 4,
  "(": 8,
  "{": 8,
};

function alignment(code: string): number {
  const boundary = ALIGNMENT[code];
  if (boundary === undefined) throw new WireError(`unknown type code ${JSON.stringify(code)}`);
  return boundary;
}

function item(values: readonly DbusValue[], index: number): DbusValue {
  const value = values[index];
  if (value === undefined) throw new WireError("too few values for the signature");
  return value;
}

const signatureCache = new Map<string, readonly TypeNode[]>();

/** Parses a signature into complete types; throws `WireError` on an invalid one. */
export function parseSignature(signature: string): readonly TypeNode[] {
  const cached = signatureCache.get(signature);
  if (cached !== undefined) return cached;
  if (signature.length > 255) throw new WireError("signature longer than 255 bytes");
  let position = 0;
  const parseOne = (arrays: number, structs: number): TypeNode => {
    const code = signature[position++];
    if (code === undefined) throw new WireError(`incomplete signature "${signature}"`);
    if (BASIC_CODES.has(code) || code === "v") return { code: code as BasicCode | "v" };
    if (code === "a") {
      if (arrays >= 32) throw new WireError("arrays nested too deeply in signature");
      if (signature[position] === "{") {
        position++;
        const key = parseOne(arrays + 1, structs + 1);
        if (!BASIC_CODES.has(key.code)) throw new WireError("dict key is not a basic type");
        const value = parseOne(arrays + 1, structs + 1);
        if (signature[position++] !== "}") throw new WireError("dict entry does not close");
        return { code: "a", element: { code: "{", key, value } };
      }
      return { code: "a", element: parseOne(arrays + 1, structs) };
    }
    if (code === "(") {
      if (structs >= 32) throw new WireError("structs nested too deeply in signature");
      const fields: TypeNode[] = [];
      while (signature[position] !== ")") {
        if (position >= signature.length) throw new WireError("struct does not close");
        fields.push(parseOne(arrays, structs + 1));
      }
      position++;
      if (fields.length === 0) throw new WireError("empty struct in signature");
      return { code: "(", fields };
    }
    throw new WireError(`unexpected ${JSON.stringify(code)} in signature`);
  };
  const types: TypeNode[] = [];
  while (position < signature.length) types.push(parseOne(0, 0));
  if (signatureCache.size < 64) signatureCache.set(signature, types);
  return types;
}

function singleType(signature: string): TypeNode {
  const types = parseSignature(signature);
  const [only] = types;
  if (only === undefined || types.length !== 1) {
    throw new WireError(`variant signature "${signature}" is not one complete type`);
  }
  return only;
}

// ---------------------------------------------------------------------------- writing

const encoder = new TextEncoder();

class Writer {
  private bytes = new Uint8Array(256);
  private view = new DataView(this.bytes.buffer);
  length = 0;

  private readonly little: boolean;

  constructor(little: boolean) {
    this.little = little;
  }

  private reserve(count: number): void {
    if (this.length + count <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + count) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  align(boundary: number): void {
    const padding = (boundary - (this.length % boundary)) % boundary;
    this.reserve(padding);
    this.bytes.fill(0, this.length, this.length + padding);
    this.length += padding;
  }

  byte(value: number): void {
    this.reserve(1);
    this.view.setUint8(this.length++, value);
  }

  uint32At(offset: number, value: number): void {
    this.view.setUint32(offset, value, this.little);
  }

  fixed(code: string, value: DbusValue): void {
    const size =
      code === "n" || code === "q" ? 2 : code === "x" || code === "t" || code === "d" ? 8 : 4;
    this.align(size);
    this.reserve(size);
    const at = this.length;
    const v = this.view;
    switch (code) {
      case "n":
        v.setInt16(at, expectInteger(code, value), this.little);
        break;
      case "q":
        v.setUint16(at, expectInteger(code, value), this.little);
        break;
      case "i":
        v.setInt32(at, expectInteger(code, value), this.little);
        break;
      case "u":
      case "h":
        v.setUint32(at, expectInteger(code, value), this.little);
        break;
      case "b":
        v.setUint32(at, expectBoolean(value) ? 1 : 0, this.little);
        break;
      case "x": {
        const big = expectBigint(value);
        if (BigInt.asIntN(64, big) !== big) throw new WireError(`${big} does not fit type x`);
        v.setBigInt64(at, big, this.little);
        break;
      }
      case "t": {
        const big = expectBigint(value);
        if (BigInt.asUintN(64, big) !== big) throw new WireError(`${big} does not fit type t`);
        v.setBigUint64(at, big, this.little);
        break;
      }
      case "d":
        v.setFloat64(at, expectNumber(value), this.little);
        break;
      default:
        throw new WireError(`not a fixed type: ${code}`);
    }
    this.length += size;
  }

  raw(data: Uint8Array): void {
    this.reserve(data.length);
    this.bytes.set(data, this.length);
    this.length += data.length;
  }

  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

function expectNumber(value: DbusValue): number {
  if (typeof value !== "number") throw new WireError(`expected a number, got ${typeof value}`);
  return value;
}
const INTEGER_RANGES: Readonly<Record<string, readonly [number, number] | undefined>> = {
  y: [0, 0xff],
  n: [-0x8000, 0x7fff],
  q: [0, 0xffff],
  i: [-0x80000000, 0x7fffffff],
  u: [0, 0xffffffff],
  h: [0, 0xffffffff],
};
function expectInteger(code: string, value: DbusValue): number {
  const number = expectNumber(value);
  const range = INTEGER_RANGES[code];
  if (range === undefined) throw new WireError(`not an integer type: ${code}`);
  if (!Number.isInteger(number) || number < range[0] || number > range[1]) {
    throw new WireError(`${number} does not fit type ${code}`);
  }
  return number;
}
function expectBoolean(value: DbusValue): boolean {
  if (typeof value !== "boolean") throw new WireError(`expected a boolean, got ${typeof value}`);
  return value;
}
function expectBigint(value: DbusValue): bigint {
  if (typeof value !== "bigint") throw new WireError(`expected a bigint, got ${typeof value}`);
  return value;
}
function expectString(value: DbusValue): string {
  if (typeof value !== "string") throw new WireError(`expected a string, got ${typeof value}`);
  return value;
}

function isVariant(value: DbusValue): value is Variant {
  return (
    typeof value === "object" &&
    !(value instanceof Uint8Array) &&
    !Array.isArray(value) &&
    !(value instanceof Map) &&
    "signature" in value
  );
}

function writeValue(writer: Writer, type: TypeNode, value: DbusValue): void {
  switch (type.code) {
    case "y":
      writer.byte(expectInteger("y", value));
      return;
    case "s":
    case "o": {
      const text = encoder.encode(expectString(value));
      if (text.includes(0)) throw new WireError("a string holds a nul byte");
      writer.align(4);
      writer.fixed("u", text.length);
      writer.raw(text);
      writer.byte(0);
      return;
    }
    case "g": {
      // Valid and at most 255 bytes, or its one-byte length would wrap.
      parseSignature(expectString(value));
      const text = encoder.encode(expectString(value));
      writer.byte(text.length);
      writer.raw(text);
      writer.byte(0);
      return;
    }
    case "v": {
      if (!isVariant(value)) throw new WireError("expected a variant");
      writeValue(writer, { code: "g" }, value.signature);
      writeValue(writer, singleType(value.signature), value.value);
      return;
    }
    case "(": {
      if (!Array.isArray(value)) throw new WireError("expected a struct");
      const fields = value as readonly DbusValue[];
      if (fields.length !== type.fields.length) throw new WireError("struct has the wrong size");
      writer.align(8);
      let index = 0;
      for (const field of type.fields) writeValue(writer, field, item(fields, index++));
      return;
    }
    case "a": {
      writer.align(4);
      const lengthAt = writer.length;
      writer.fixed("u", 0);
      writer.align(alignment(type.element.code));
      const start = writer.length;
      const element = type.element;
      if (element.code === "{") {
        if (!(value instanceof Map)) throw new WireError("expected a Map for a dict");
        for (const [key, item] of value as ReadonlyMap<DbusValue, DbusValue>) {
          writer.align(8);
          writeValue(writer, element.key, key);
          writeValue(writer, element.value, item);
        }
      } else if (element.code === "y" && value instanceof Uint8Array) {
        writer.raw(value);
      } else {
        if (!Array.isArray(value)) throw new WireError("expected an array");
        for (const item of value as readonly DbusValue[]) writeValue(writer, element, item);
      }
      writer.uint32At(lengthAt, writer.length - start);
      return;
    }
    case "{":
      throw new WireError("dict entry outside an array");
    case "b":
    case "n":
    case "q":
    case "i":
    case "u":
    case "h":
    case "x":
    case "t":
    case "d":
      writer.fixed(type.code, value);
  }
}

/** A message to send: a method call, or (in tests) any other kind. */
export interface OutgoingMessage {
  readonly type?: MessageType;
  readonly flags?: number;
  readonly serial: number;
  readonly path?: string;
  readonly interface?: string;
  readonly member?: string;
  readonly errorName?: string;
  readonly replySerial?: number;
  readonly destination?: string;
  readonly sender?: string;
  readonly signature?: string;
  readonly body?: readonly DbusValue[];
}

const FIELD = {
  path: 1,
  interface: 2,
  member: 3,
  errorName: 4,
  replySerial: 5,
  destination: 6,
  sender: 7,
  signature: 8,
  unixFds: 9,
} as const;

/** The bytes of one message. */
export function encodeMessage(
  message: OutgoingMessage,
  endianness: Endianness = "little",
): Uint8Array {
  const little = endianness === "little";
  const signature = message.signature ?? "";
  const bodyWriter = new Writer(little);
  const types = parseSignature(signature);
  const body = message.body ?? [];
  if (body.length !== types.length) throw new WireError("body does not match its signature");
  let index = 0;
  for (const type of types) writeValue(bodyWriter, type, item(body, index++));

  const fields: [number, Variant][] = [];
  const text = (code: number, sig: string, value: string | undefined) => {
    if (value !== undefined) fields.push([code, { signature: sig, value }]);
  };
  text(FIELD.path, "o", message.path);
  text(FIELD.interface, "s", message.interface);
  text(FIELD.member, "s", message.member);
  text(FIELD.errorName, "s", message.errorName);
  if (message.replySerial !== undefined) {
    fields.push([FIELD.replySerial, { signature: "u", value: message.replySerial }]);
  }
  text(FIELD.destination, "s", message.destination);
  text(FIELD.sender, "s", message.sender);
  if (signature !== "") fields.push([FIELD.signature, { signature: "g", value: signature }]);

  const writer = new Writer(little);
  writer.byte(little ? 0x6c : 0x42);
  writer.byte(message.type ?? MessageType.MethodCall);
  writer.byte(message.flags ?? 0);
  writer.byte(1);
  writer.fixed("u", bodyWriter.length);
  writer.fixed("u", message.serial);
  writeValue(writer, HEADER_FIELDS, fields);
  writer.align(8);
  writer.raw(bodyWriter.result());
  return writer.result();
}

const HEADER_FIELDS = singleType("a(yv)");

// ---------------------------------------------------------------------------- reading

const decoder = new TextDecoder("utf-8", { fatal: true });

class Reader {
  position: number;
  values = 0;
  private readonly view: DataView;

  private readonly bytes: Uint8Array;
  private readonly little: boolean;
  private readonly end: number;

  constructor(bytes: Uint8Array, little: boolean, start: number, end: number) {
    this.bytes = bytes;
    this.little = little;
    this.end = end;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.position = start;
  }

  need(count: number): void {
    if (count > this.end - this.position) throw new WireError("message is truncated");
  }

  align(boundary: number): void {
    const padding = (boundary - (this.position % boundary)) % boundary;
    this.need(padding);
    for (let i = 0; i < padding; i++) {
      if (this.bytes[this.position + i] !== 0) throw new WireError("non-zero padding");
    }
    this.position += padding;
  }

  uint32(): number {
    this.align(4);
    this.need(4);
    const value = this.view.getUint32(this.position, this.little);
    this.position += 4;
    return value;
  }

  byte(): number {
    this.need(1);
    return this.bytes[this.position++] ?? 0;
  }

  slice(count: number): Uint8Array {
    this.need(count);
    const part = this.bytes.subarray(this.position, this.position + count);
    this.position += count;
    return part;
  }

  text(length: number): string {
    const raw = this.slice(length);
    if (this.byte() !== 0) throw new WireError("string is not nul-terminated");
    if (raw.includes(0)) throw new WireError("string holds a nul byte");
    try {
      return decoder.decode(raw);
    } catch {
      throw new WireError("string is not valid UTF-8");
    }
  }

  fixed(code: string): DbusValue {
    const size =
      code === "n" || code === "q" ? 2 : code === "x" || code === "t" || code === "d" ? 8 : 4;
    this.align(size);
    this.need(size);
    const at = this.position;
    this.position += size;
    const v = this.view;
    switch (code) {
      case "n":
        return v.getInt16(at, this.little);
      case "q":
        return v.getUint16(at, this.little);
      case "i":
        return v.getInt32(at, this.little);
      case "u":
      case "h":
        return v.getUint32(at, this.little);
      case "x":
        return v.getBigInt64(at, this.little);
      case "t":
        return v.getBigUint64(at, this.little);
      case "d":
        return v.getFloat64(at, this.little);
      case "b": {
        const raw = v.getUint32(at, this.little);
        if (raw > 1) throw new WireError("boolean is neither 0 nor 1");
        return raw === 1;
      }
      default:
        throw new WireError(`not a fixed type: ${code}`);
    }
  }
}

function readValue(reader: Reader, type: TypeNode, depth: number): DbusValue {
  if (depth > MAX_DEPTH) throw new WireError("values nested too deeply");
  if (++reader.values > MAX_VALUES) throw new WireError(`message holds over ${MAX_VALUES} values`);
  switch (type.code) {
    case "y":
      return reader.byte();
    case "s":
    case "o":
      return reader.text(reader.uint32());
    case "g":
      return reader.text(reader.byte());
    case "v": {
      const signature = reader.text(reader.byte());
      return { signature, value: readValue(reader, singleType(signature), depth + 1) };
    }
    case "(": {
      reader.align(8);
      const fields: DbusValue[] = [];
      for (const field of type.fields) fields.push(readValue(reader, field, depth + 1));
      return fields;
    }
    case "a": {
      const length = reader.uint32();
      if (length > MAX_ARRAY_BYTES) throw new WireError("array longer than 64 MiB");
      reader.align(alignment(type.element.code));
      reader.need(length);
      const end = reader.position + length;
      const element = type.element;
      // A copy into a plain Uint8Array: Buffer's slice() would share the socket's memory.
      if (element.code === "y") return new Uint8Array(reader.slice(length));
      if (element.code === "{") {
        const map = new Map<DbusValue, DbusValue>();
        while (reader.position < end) {
          reader.align(8);
          const key = readValue(reader, element.key, depth + 1);
          map.set(key, readValue(reader, element.value, depth + 1));
        }
        if (reader.position !== end)
          throw new WireError("array length does not match its elements");
        return map;
      }
      const items: DbusValue[] = [];
      while (reader.position < end) items.push(readValue(reader, element, depth + 1));
      if (reader.position !== end) throw new WireError("array length does not match its elements");
      return items;
    }
    case "{":
      throw new WireError("dict entry outside an array");
    case "b":
    case "n":
    case "q":
    case "i":
    case "u":
    case "h":
    case "x":
    case "t":
    case "d":
      return reader.fixed(type.code);
  }
}

/** Fixed part of a header, plus the length of the header-field array: 16 bytes. */
const PREFIX_BYTES = 16;

/**
 * The total length of the message that starts `bytes`, once its first 16 bytes are there;
 * `undefined` before. Throws on a bad prefix or a length over `MAX_MESSAGE_BYTES`.
 */
export function messageLength(bytes: Uint8Array): number | undefined {
  const lengths = messageLengths(bytes);
  if (lengths !== undefined && lengths.total > MAX_MESSAGE_BYTES) throw overLimit(lengths.total);
  return lengths?.total;
}

function endiannessOf(byte: number): Endianness {
  if (byte === 0x6c) return "little";
  if (byte === 0x42) return "big";
  throw new WireError(`bad endianness byte 0x${byte.toString(16)}`);
}

/** Decodes exactly one whole message; throws `WireError` when it is malformed. */
export function decodeMessage(bytes: Uint8Array): Message {
  const total = messageLength(bytes);
  if (total === undefined || total > bytes.length) throw new WireError("message is truncated");
  if (total < bytes.length) throw new WireError("bytes after the end of the message");
  const { header, reader } = readHeader(bytes, total);
  const types = parseSignature(header.signature);
  const body: DbusValue[] = [];
  for (const bodyType of types) body.push(readValue(reader, bodyType, 0));
  if (reader.position !== total) throw new WireError("body length does not match its signature");
  return { ...header, body };
}

/** A message without its body: what is known of it before the body is read. */
export type MessageHeader = Omit<Message, "body">;

/**
 * Reads the header of the message in `bytes` up to `end` (the whole message, or only its
 * header and the padding after it); the reader is left at the start of the body.
 */
function readHeader(bytes: Uint8Array, end: number): { header: MessageHeader; reader: Reader } {
  const little = endiannessOf(bytes[0] ?? 0) === "little";
  const type = bytes[1] ?? 0;
  if (type < 1 || type > 4) throw new WireError(`unknown message type ${type}`);
  const reader = new Reader(bytes, little, 8, end);
  const serial = reader.uint32();
  if (serial === 0) throw new WireError("message serial is 0");
  const fieldsValue = readValue(reader, HEADER_FIELDS, 0) as readonly (readonly DbusValue[])[];
  reader.align(8);
  const fields: Record<string, DbusValue> = {};
  for (const [code, variant] of fieldsValue) {
    const { signature, value } = variant as Variant;
    const name = FIELD_NAMES[code as number];
    if (name === undefined) continue; // Unknown fields are to be ignored.
    if (signature !== FIELD_SIGNATURES[name]) {
      throw new WireError(`header field ${name} has signature "${signature}"`);
    }
    fields[name] = value;
  }
  const header: MessageHeader = {
    type: type as MessageType,
    flags: bytes[2] ?? 0,
    serial,
    signature: (fields.signature as string | undefined) ?? "",
    ...(fields as Partial<MessageHeader>),
  };
  checkRequiredFields(header);
  return { header, reader };
}

const FIELD_NAMES: Readonly<Record<number, keyof typeof FIELD_SIGNATURES>> = {
  1: "path",
  2: "interface",
  3: "member",
  4: "errorName",
  5: "replySerial",
  6: "destination",
  7: "sender",
  8: "signature",
  9: "unixFds",
};
const FIELD_SIGNATURES = {
  path: "o",
  interface: "s",
  member: "s",
  errorName: "s",
  replySerial: "u",
  destination: "s",
  sender: "s",
  signature: "g",
  unixFds: "u",
} as const;

function checkRequiredFields(message: MessageHeader): void {
  const missing = (field: string) =>
    new WireError(`message of type ${message.type} has no ${field}`);
  switch (message.type) {
    case MessageType.MethodCall:
      if (message.path === undefined) throw missing("path");
      if (message.member === undefined) throw missing("member");
      return;
    case MessageType.Signal:
      if (message.path === undefined) throw missing("path");
      if (message.member === undefined) throw missing("member");
      if (message.interface === undefined) throw missing("interface");
      return;
    case MessageType.Error:
      if (message.errorName === undefined) throw missing("error name");
      if (message.replySerial === undefined) throw missing("reply serial");
      return;
    case MessageType.MethodReturn:
      if (message.replySerial === undefined) throw missing("reply serial");
      return;
  }
}

/**
 * The largest message skipped unread: the specification's limit (128 MiB). A message that is
 * not wanted is never buffered, only counted off as its bytes pass, so a bus that relays a
 * stranger's large signal to us costs no memory.
 */
const MAX_SKIPPED_BYTES = 128 * 1024 * 1024;

/**
 * Cuts a byte stream into messages. Each message's header is read first and shown to
 * `wanted`: a message that is not wanted (a signal no one waits for, a reply to no call of
 * ours) is skipped without reading its body or keeping its bytes; a wanted one is kept up
 * to MAX_MESSAGE_BYTES, checked before anything is kept, and decoded whole.
 */
export class MessageReader {
  /** The bytes kept for the next message, in the order they came; each the reader's own. */
  private parts: Uint8Array[] = [];
  private buffered = 0;
  /** Bytes still to drop of a message that is not wanted. */
  private skipping = 0;
  /** The lengths of the next message, once its first 16 bytes are there. */
  private lengths: { readonly header: number; readonly total: number } | undefined;
  /** The type of the wanted message whose header has been read, until it is whole. */
  private awaited: MessageType | undefined;
  private readonly wanted: (header: MessageHeader) => boolean;

  constructor(wanted: (header: MessageHeader) => boolean = () => true) {
    this.wanted = wanted;
  }

  /** Adds bytes from the socket; returns the wanted messages they complete, in order. */
  push(chunk: Uint8Array): Message[] {
    this.parts.push(chunk);
    this.buffered += chunk.length;
    const messages: Message[] = [];
    for (;;) {
      if (this.skipping > 0) {
        this.skipping -= this.drop(this.skipping);
        if (this.skipping > 0) break;
      }
      if (this.buffered < PREFIX_BYTES) break;
      const lengths = (this.lengths ??= messageLengths(this.front(PREFIX_BYTES)));
      if (lengths === undefined || lengths.header > this.buffered) break;
      if (this.awaited === undefined) {
        const { header } = readHeader(this.front(lengths.header), lengths.header);
        if (!this.wanted(header)) {
          this.drop(lengths.header);
          this.skipping = lengths.total - lengths.header;
          this.lengths = undefined;
          continue;
        }
        if (lengths.total > MAX_MESSAGE_BYTES) throw overLimit(lengths.total);
        this.awaited = header.type;
      }
      // The parts of a long message are joined once, when the last of them has come.
      if (lengths.total > this.buffered) break;
      const type = this.awaited;
      const bytes = this.front(lengths.total);
      this.drop(lengths.total);
      this.lengths = undefined;
      this.awaited = undefined;
      try {
        messages.push(decodeMessage(bytes));
      } catch (error) {
        // A signal that does not decode is dropped: no answer is lost by it, and any client
        // can send one. A malformed reply is the peer's failure.
        if (type !== MessageType.Signal) throw error;
      }
    }
    // Keep a copy of what is left of the chunk, never a view: the caller may reuse it, and a
    // view of a Buffer (whose slice() does not copy) would keep all of it alive.
    const kept: Uint8Array[] = [];
    for (const part of this.parts)
      kept.push(part.buffer === chunk.buffer ? new Uint8Array(part) : part);
    this.parts = kept;
    return messages;
  }

  /** The first `count` bytes kept, in one piece (joining the parts they span). */
  private front(count: number): Uint8Array {
    const [first] = this.parts;
    if (first !== undefined && first.length >= count) return first.subarray(0, count);
    const joined = concat(...this.parts);
    this.parts = [joined];
    return joined.subarray(0, count);
  }

  /** Drops up to `count` bytes from the front; returns how many it dropped. */
  private drop(count: number): number {
    let dropped = 0;
    while (dropped < count && this.parts.length > 0) {
      const first = this.parts[0] as Uint8Array;
      const taken = Math.min(first.length, count - dropped);
      dropped += taken;
      if (taken === first.length) this.parts.shift();
      else this.parts[0] = first.subarray(taken);
    }
    this.buffered -= dropped;
    return dropped;
  }
}

/**
 * The lengths of the header (with its padding) and of the whole message that starts
 * `bytes`, once its first 16 bytes are there. Throws on a bad prefix, a header over
 * MAX_MESSAGE_BYTES, or a message over MAX_SKIPPED_BYTES.
 */
function messageLengths(bytes: Uint8Array): { header: number; total: number } | undefined {
  if (bytes.length < PREFIX_BYTES) return undefined;
  const little = endiannessOf(bytes[0] ?? 0) === "little";
  const view = new DataView(bytes.buffer, bytes.byteOffset, PREFIX_BYTES);
  if (bytes[3] !== 1) throw new WireError(`unsupported protocol version ${bytes[3]}`);
  const bodyLength = view.getUint32(4, little);
  const fieldsLength = view.getUint32(12, little);
  const header = PREFIX_BYTES + fieldsLength + ((8 - (fieldsLength % 8)) % 8);
  const total = header + bodyLength;
  if (header > MAX_MESSAGE_BYTES || total > MAX_SKIPPED_BYTES) throw overLimit(total);
  return { header, total };
}

function overLimit(total: number): WireError {
  return new WireError(`message of ${total} bytes is over the ${MAX_MESSAGE_BYTES}-byte limit`);
}

/** The bytes of `parts`, one after another, in a buffer of their own. */
export function concat(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
