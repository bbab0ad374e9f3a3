import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";

/** One regular file to put in a zip archive. */
export interface ZipEntry {
  /** Path inside the archive, with `/` separators and no leading `/`. */
  readonly name: string;
  readonly content: string | Uint8Array;
  /** Unix permission bits; 0o644 when absent. */
  readonly mode?: number;
}

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
/** Zip spec 2.0: the oldest version that every reader (Go's archive/zip included) accepts. */
const VERSION_NEEDED = 20;
/** High byte 3 = Unix, so readers take the permission bits from the external attributes. */
const VERSION_MADE_BY = (3 << 8) | VERSION_NEEDED;
/** General purpose flag bit 11: names are UTF-8. */
const FLAG_UTF8 = 0x0800;
const METHOD_STORED = 0;
/** 1980-01-01 00:00:00, the zip epoch: a fixed date keeps archives (and their hashes) stable. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const S_IFREG = 0o100000;

/**
 * Builds a zip archive of `entries`, in the given order, stored without compression. The output
 * depends only on the entries, so hashes of it are stable across runs. Written by hand because
 * Node has no zip writer and the tests must not depend on a `zip` CLI being installed.
 */
export function createZip(entries: readonly ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8");
    const data = toBuffer(entry.content);
    const fields = { name, data, crc: crc32(data), mode: entry.mode ?? 0o644 };
    const local = Buffer.concat([localHeader(fields), name, data]);
    centrals.push(Buffer.concat([centralHeader(fields, offset), name]));
    locals.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  return Buffer.concat([...locals, directory, endOfDirectory(entries.length, directory, offset)]);
}

/**
 * Terraform's `h1:` package hash of a zip holding exactly `entries`: Go's dirhash "Hash1", i.e.
 * SHA-256 over the sorted lines `<sha256 hex of content>  <name>\n`, base64-encoded. It covers
 * names and contents only, not permissions, so it equals the hash of the unpacked directory.
 */
export function packageHashV1(entries: readonly ZipEntry[]): string {
  const names = entries.map((entry) => entry.name);
  if (names.some((name) => name.includes("\n")))
    throw new Error("file names may not contain newlines");
  const byName = new Map(entries.map((entry) => [entry.name, toBuffer(entry.content)]));
  // Go sorts strings by bytes; for the ASCII names used here that is code unit order.
  const summary = [...byName.keys()]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => `${sha256Hex(byName.get(name) ?? Buffer.alloc(0))}  ${name}\n`)
    .join("");
  return `h1:${createHash("sha256").update(summary).digest("base64")}`;
}

/** Terraform's `zh:` hash of an archive: the SHA-256 of the zip file itself, in hex. */
export function zipHash(archive: Uint8Array): string {
  return `zh:${sha256Hex(archive)}`;
}

interface EntryFields {
  readonly name: Buffer;
  readonly data: Buffer;
  readonly crc: number;
  readonly mode: number;
}

function localHeader({ name, data, crc }: EntryFields): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(LOCAL_HEADER, 0);
  header.writeUInt16LE(VERSION_NEEDED, 4);
  header.writeUInt16LE(FLAG_UTF8, 6);
  header.writeUInt16LE(METHOD_STORED, 8);
  header.writeUInt16LE(DOS_TIME, 10);
  header.writeUInt16LE(DOS_DATE, 12);
  header.writeUInt32LE(crc, 14);
  header.writeUInt32LE(data.length, 18); // compressed size: stored, so the same
  header.writeUInt32LE(data.length, 22);
  header.writeUInt16LE(name.length, 26);
  header.writeUInt16LE(0, 28); // no extra field
  return header;
}

function centralHeader({ name, data, crc, mode }: EntryFields, localOffset: number): Buffer {
  const header = Buffer.alloc(46);
  header.writeUInt32LE(CENTRAL_HEADER, 0);
  header.writeUInt16LE(VERSION_MADE_BY, 4);
  header.writeUInt16LE(VERSION_NEEDED, 6);
  header.writeUInt16LE(FLAG_UTF8, 8);
  header.writeUInt16LE(METHOD_STORED, 10);
  header.writeUInt16LE(DOS_TIME, 12);
  header.writeUInt16LE(DOS_DATE, 14);
  header.writeUInt32LE(crc, 16);
  header.writeUInt32LE(data.length, 20);
  header.writeUInt32LE(data.length, 24);
  header.writeUInt16LE(name.length, 28);
  // Extra field length, comment length, disk number, internal attributes: all zero.
  header.writeUInt32LE(((S_IFREG | mode) << 16) >>> 0, 38);
  header.writeUInt32LE(localOffset, 42);
  return header;
}

function endOfDirectory(count: number, directory: Buffer, directoryOffset: number): Buffer {
  const record = Buffer.alloc(22);
  record.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  // Disk numbers (bytes 4-7) are zero: a single-part archive.
  record.writeUInt16LE(count, 8);
  record.writeUInt16LE(count, 10);
  record.writeUInt32LE(directory.length, 12);
  record.writeUInt32LE(directoryOffset, 16);
  return record;
}

function toBuffer(content: string | Uint8Array): Buffer {
  return typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
}

function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
