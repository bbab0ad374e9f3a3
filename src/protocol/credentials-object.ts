import { CliError } from "../errors.ts";

/**
 * Bounds what `store` accepts. A real object is a token of a few hundred bytes; the cap keeps
 * a runaway pipe from being buffered, and it is far above any keychain's own limit.
 */
export const MAX_CREDENTIALS_BYTES = 64 * 1024;

/** RFC 8259's white space. */
const JSON_WHITE_SPACE = " \t\n\r";

/**
 * What Terraform sends to `store` and expects back from `get` is a JSON object whose
 * `token`, when present, is a string; every other property is kept as it is, because the
 * protocol says a helper must keep them all or refuse the object. That one property is
 * checked by hand: zod/mini cost ~1.5 ms of CPU on every call of the protocol verbs.
 *
 * Checks that `text` is exactly one JSON object fit to store and returns it trimmed of the
 * JSON white space around it, otherwise byte for byte: re-serialising could change numbers that
 * JSON.parse rounds, or the order of properties. Throws a `CliError` that never quotes the
 * input, since the input holds a secret.
 */
export function parseCredentialsObject(text: string, source: string): string {
  // JSON's own white space only (RFC 8259: space, tab, LF, CR): trim() would also take
  // NBSP, U+2028, U+3000, VT, FF and a BOM, which no JSON parser in Terraform accepts. (One
  // BOM at the very start of stdin is dropped earlier, by the reader: read-input.ts.) A
  // loop, not replace(/…/g): the first such replace() of a process compiles a builtin (~60 µs
  // of a get or a store).
  let start = 0;
  let end = text.length;
  while (start < end && JSON_WHITE_SPACE.includes(text.charAt(start))) start++;
  while (end > start && JSON_WHITE_SPACE.includes(text.charAt(end - 1))) end--;
  const trimmed = text.slice(start, end);
  if (trimmed === "") {
    throw new CliError(`${source} is empty: expected a JSON object such as {"token":"..."}`);
  }
  let value: unknown;
  try {
    // JSON.parse refuses anything after the first value, so "{} {}" fails here.
    value = JSON.parse(trimmed);
  } catch {
    throw new CliError(
      `${source} is not valid JSON: expected one JSON object such as {"token":"..."}`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError(
      `${source} is JSON ${describe(value)}, not an object: expected {"token":"..."}`,
    );
  }
  const token: unknown = (value as { token?: unknown }).token;
  if (Object.hasOwn(value, "token") && typeof token !== "string") {
    throw new CliError(`${source} has a "token" that is not a string`);
  }
  return trimmed;
}

/**
 * `parseCredentialsObject`, and not the empty object: `get` answers {} for "no
 * credentials", so an entry holding {} would read as none while `list` and `doctor` count
 * the host. What `store` and `import` accept.
 */
export function parseStorableObject(text: string, source: string): string {
  const object = parseCredentialsObject(text, source);
  if (Object.keys(JSON.parse(object) as object).length === 0) {
    throw new CliError(
      `${source} is the empty object {}, which get prints for "no credentials": it is not stored`,
    );
  }
  return object;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/**
 * The `token` of a stored credentials object, or `undefined` when it has none (or the text
 * is no JSON object): what `exec` exports and doctor checks. Never validates beyond that.
 */
export function tokenOf(stored: string | undefined): string | undefined {
  if (stored === undefined) return undefined;
  try {
    const object: unknown = JSON.parse(stored);
    if (typeof object !== "object" || object === null) return undefined;
    const token: unknown = (object as Record<string, unknown>).token;
    return typeof token === "string" ? token : undefined;
  } catch {
    return undefined;
  }
}
