import { canonicalHostname, type Hostname } from "../../protocol/hostname.ts";

// The names of the pass store's entries: its folder for us, and each host's entry in it.

export const TOP_FOLDER = "terraform-credentials";

/** The folder of the store that holds the entries of `service`. */
export function serviceFolder(service: string): string {
  return `${TOP_FOLDER}/${encodeSegment(service)}`;
}

/** The file name ending of an entry (gpg's output). */
export const ENTRY_SUFFIX = ".gpg";

/**
 * The file-name-safe form of a hostname, used as the last segment of an entry's name. Bytes
 * outside `[a-z0-9.-]` become `%XX` (upper-case hex of UTF-8): the port's colon (not allowed
 * on Windows file systems, as under WSL's /mnt, and a separator in some tools), and anything
 * that would let two hosts collide on a case-insensitive file system. A dot at the start or
 * the end is encoded too, so the result is never `.`, `..`, a hidden file or a name ending in
 * a dot (which Windows strips). Reversed exactly by `decodeHostFromPath`.
 */
export function encodeHostForPath(host: Hostname): string {
  return encodeSegment(host);
}

/**
 * The hostname that `encodeHostForPath` turned into `segment`, or `undefined` when `segment`
 * is not exactly such an encoding (another spelling of the escapes, or not a hostname in
 * Terraform's comparison form): such a file was not written by this store.
 */
export function decodeHostFromPath(segment: string): Hostname | undefined {
  if (!/^(?:[a-z0-9.-]|%[0-9A-F]{2})+$/.test(segment)) return undefined;
  let text: string;
  try {
    text = decodeURIComponent(segment);
  } catch {
    return undefined; // escapes that are not UTF-8
  }
  if (encodeSegment(text) !== segment) return undefined;
  return canonicalHostname(text);
}

const DOT = 0x2e;
const utf8 = new TextEncoder();

function encodeSegment(text: string): string {
  const bytes = utf8.encode(text);
  let encoded = "";
  bytes.forEach((byte, i) => {
    const char = String.fromCharCode(byte);
    const edgeDot = byte === DOT && (i === 0 || i === bytes.length - 1);
    encoded +=
      /^[a-z0-9.-]$/.test(char) && !edgeDot
        ? char
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  });
  return encoded;
}
