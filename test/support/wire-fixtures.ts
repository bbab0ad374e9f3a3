import { readFileSync } from "node:fs";
import { z } from "zod";
import { concat } from "../../src/stores/secret-service/wire.ts";

/**
 * One D-Bus message a real daemon produced, from
 * test/unit/stores/secret-service/fixtures/wire-fixtures.json (written by
 * scripts/capture-wire-fixtures.ts).
 */
export interface WireFixture {
  readonly name: string;
  readonly description: string;
  /** The call it answers (interface.member), or null for calls, signals and errors found otherwise. */
  readonly answers: string | null;
  readonly signature: string;
  readonly endianness: "little" | "big";
  /** How `dbus-monitor --monitor` (libdbus) printed the message: an independent decoding. */
  readonly monitorText: readonly string[] | null;
  /** The message, a fresh copy on every read (tests may mutate it). */
  readonly bytes: Uint8Array;
}

const FILE = new URL("../unit/stores/secret-service/fixtures/wire-fixtures.json", import.meta.url);

const schema = z.object({
  messages: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      answers: z.string().nullable(),
      signature: z.string(),
      endianness: z.enum(["little", "big"]),
      monitorText: z.array(z.string()).nullable(),
      hex: z.array(z.string().regex(/^([0-9a-f]{2})+$/)),
    }),
  ),
});

let cache: z.infer<typeof schema> | undefined;

/** Every captured message, in the file's order. */
export function wireFixtures(): WireFixture[] {
  cache ??= schema.parse(JSON.parse(readFileSync(FILE, "utf8")));
  return cache.messages.map(({ hex: lines, ...rest }) => {
    const text = lines.join("");
    return {
      ...rest,
      get bytes() {
        return hex(text);
      },
    };
  });
}

/** The captured message called `name`; throws when there is none. */
export function wireFixture(name: string): WireFixture {
  const found = wireFixtures().find((fixture) => fixture.name === name);
  if (found === undefined) throw new Error(`no wire fixture called ${name}`);
  return found;
}

/** Bytes from hex digits; whitespace is ignored. Always a plain Uint8Array, never a Buffer. */
export function hex(digits: string): Uint8Array {
  const clean = digits.replace(/\s+/g, "");
  if (!/^([0-9a-fA-F]{2})*$/.test(clean)) throw new Error(`not hex: ${digits}`);
  const bytes = new Uint8Array(clean.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** A header field for `rawMessage`: code, the variant's signature, and its value. */
export type RawField = readonly [
  code: number,
  signature: "s" | "o" | "g" | "u",
  value: string | number,
];

export interface RawMessage {
  readonly endianness: "little" | "big";
  readonly type: number;
  readonly flags?: number;
  readonly serial: number;
  readonly fields: readonly RawField[];
  /** The body, already marshalled (it starts 8-aligned, as on the wire). */
  readonly body: Uint8Array;
}

/**
 * A message put together by hand (D-Bus specification, "Message Format"), independently of
 * encodeMessage: for bodies written byte by byte, and headers encodeMessage cannot produce
 * (unknown fields, fields of the wrong type).
 */
export function rawMessage(message: RawMessage): Uint8Array {
  const little = message.endianness === "little";
  const bytes: number[] = [];
  const align = (boundary: number) => {
    while (bytes.length % boundary !== 0) bytes.push(0);
  };
  const uint32 = (value: number) => {
    align(4);
    const word = new Uint8Array(4);
    new DataView(word.buffer).setUint32(0, value, little);
    bytes.push(...word);
  };
  const text = (value: string, long: boolean) => {
    const encoded = new TextEncoder().encode(value);
    if (long) uint32(encoded.length);
    else bytes.push(encoded.length);
    bytes.push(...encoded, 0);
  };
  bytes.push(little ? 0x6c : 0x42, message.type, message.flags ?? 0, 1);
  uint32(message.body.length);
  uint32(message.serial);
  uint32(0); // the header fields' length, filled in below
  for (const [code, signature, value] of message.fields) {
    align(8);
    bytes.push(code);
    text(signature, false);
    if (signature === "u") uint32(Number(value));
    else text(String(value), signature !== "g");
  }
  const fieldsLength = bytes.length - 16;
  align(8);
  const header = new Uint8Array(bytes);
  new DataView(header.buffer).setUint32(12, fieldsLength, little);
  return concat(header, message.body);
}

/** A method return (reply serial 1) with `signature` and a body written by hand. */
export function replyWithBody(
  signature: string,
  body: Uint8Array,
  endianness: "little" | "big" = "little",
): Uint8Array {
  return rawMessage({
    endianness,
    type: 2,
    serial: 1,
    fields: [
      [5, "u", 1],
      [8, "g", signature],
    ],
    body,
  });
}
