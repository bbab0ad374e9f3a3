/**
 * A reader of DER (X.690's distinguished encoding), enough to walk an X.509 certificate:
 * each element as its tag, its content and the bytes that follow it. Anything that is not
 * DER (an indefinite or non-minimal length, a high tag number, a length past the end) throws
 * a `DerError`: a certificate read here is refused whole rather than half-read.
 */

/** One element: its identifier octet, its content, and the element's whole encoding. */
export interface DerElement {
  readonly tag: number;
  readonly content: Uint8Array;
  readonly encoding: Uint8Array;
}

export class DerError extends Error {}

/** Universal tags, and the constructed bit, as X.690 numbers them. */
export const DER = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  SEQUENCE: 0x30,
  SET: 0x31,
  /** [n] EXPLICIT (constructed, context-specific). */
  explicit: (n: number) => 0xa0 | n,
  /** [n] IMPLICIT of a primitive type (context-specific). */
  implicit: (n: number) => 0x80 | n,
} as const;

/** Reads the element at the start of `bytes`; `rest` is what follows it. */
export function readElement(bytes: Uint8Array): { element: DerElement; rest: Uint8Array } {
  if (bytes.length < 2) throw new DerError("truncated element");
  const tag = bytes[0] ?? 0;
  if ((tag & 0x1f) === 0x1f) throw new DerError("high tag numbers are not used here");
  let length = bytes[1] ?? 0;
  let offset = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new DerError("indefinite or oversized length");
    if (bytes.length < 2 + count) throw new DerError("truncated length");
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[2 + i] ?? 0);
    // DER: the shortest form, so a long form only from 128 on and with no leading zero byte.
    if (length < 0x80 || bytes[2] === 0) throw new DerError("non-minimal length");
    offset += count;
  }
  if (bytes.length < offset + length) throw new DerError("length past the end");
  return {
    element: {
      tag,
      content: bytes.subarray(offset, offset + length),
      encoding: bytes.subarray(0, offset + length),
    },
    rest: bytes.subarray(offset + length),
  };
}

/** The elements that make up `content` (a SEQUENCE's or a SET's), in order. */
export function readAll(content: Uint8Array): DerElement[] {
  const elements: DerElement[] = [];
  let rest = content;
  while (rest.length > 0) {
    const read = readElement(rest);
    elements.push(read.element);
    rest = read.rest;
  }
  return elements;
}

/** The one element `bytes` holds, which must have `tag`, with nothing after it. */
export function readOnly(bytes: Uint8Array, tag: number): DerElement {
  const { element, rest } = readElement(bytes);
  if (element.tag !== tag || rest.length > 0) throw new DerError("unexpected element");
  return element;
}

/** An OBJECT IDENTIFIER's content in dotted form. */
export function oidText(content: Uint8Array): string {
  if (content.length === 0) throw new DerError("empty object identifier");
  const arcs: number[] = [];
  let value = 0;
  for (const [index, byte] of content.entries()) {
    if (value === 0 && byte === 0x80) throw new DerError("non-minimal object identifier");
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw new DerError("object identifier arc too big");
    if (byte & 0x80) {
      if (index === content.length - 1) throw new DerError("truncated object identifier");
      continue;
    }
    if (arcs.length === 0)
      arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
    else arcs.push(value);
    value = 0;
  }
  return arcs.join(".");
}
