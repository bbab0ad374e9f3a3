import { CliError } from "../errors.ts";

/**
 * `credentials.tfrc.json` as `terraform login` writes it:
 * `{"credentials": {"HOST": {"token": "..."}}}`. Other top-level properties are kept.
 *
 * The file is read as text and each host's object is sliced out of it (only the white space
 * between its tokens dropped), not re-serialised: JSON.parse would turn 12345678901234567890 into 12345678901234567000,
 * 1e400 into null and -0 into 0, and an object stores and a rewritten file must keep what
 * the user wrote. Removing hosts cuts their members out of the text and leaves the rest.
 */
interface PlaintextCredentials {
  /**
   * Every member of every top-level `credentials` object, in file order (a name given twice
   * is listed twice): the name as written, decoded, and the member's value as its exact
   * JSON text. A file may hold `credentials` more than once; Terraform reads them all.
   */
  readonly hosts: ReadonlyArray<{
    readonly name: string;
    readonly object: string;
    /** The line (1-based) of its name. */
    readonly line: number;
  }>;
  /** The file's text, for `credentialsFileWithout`. */
  readonly text: string;
  /** Where each of `hosts` lies in `text`, and what else the file holds. */
  readonly layout: Layout;
}

interface Member {
  /** Just after the `{` or `,` before the member: its leading white space is kept. */
  readonly start: number;
  readonly end: number;
}

/** One `credentials` object: the offsets of its `{` and `}`, and its members. */
interface CredentialsObject {
  readonly open: number;
  readonly close: number;
  readonly members: readonly Member[];
}

interface Layout {
  /** The `credentials` objects in file order; `hosts` lists their members in that order. */
  readonly objects: readonly CredentialsObject[];
  /** True when the file has top-level properties besides `credentials`. */
  readonly hasOtherKeys: boolean;
}

const SHAPE = '({"credentials": {"HOST": {"token": "..."}}})';

/** Parses the file's text; a malformed file is an error that names the file, never its content. */
export function parseCredentialsFile(text: string, file: string): PlaintextCredentials {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON; fix it or move its tokens by hand`);
  }
  const isObject = (value: unknown) =>
    typeof value === "object" && value !== null && !Array.isArray(value);
  if (!isObject(parsed)) throw new CliError(`${file} is not a Terraform credentials file ${SHAPE}`);
  // The text is valid JSON from here on, so the scanner below needs no error handling.
  const top = objectMembers(text, skipSpace(text, 0));
  // Every "credentials", not only the last as JSON.parse keeps: Terraform's HCL reader
  // merges them, so a token in the first one is as real as one in the last.
  const credentials = top.members.filter((member) => member.name === "credentials");
  const hasOtherKeys = top.members.some((member) => member.name !== "credentials");
  if (credentials.some((member) => text[member.valueStart] !== "{")) {
    throw new CliError(`${file} is not a Terraform credentials file ${SHAPE}`);
  }
  const objects = credentials.map((member) => {
    const inner = objectMembers(text, member.valueStart);
    return { open: member.valueStart, close: inner.close, members: inner.members };
  });
  return {
    hosts: objects.flatMap((object) =>
      object.members.map((member) => ({
        name: member.name,
        object: withoutSpaceBetweenTokens(text.slice(member.valueStart, member.end)),
        line: text.slice(0, skipSpace(text, member.start)).split("\n").length,
      })),
    ),
    text,
    layout: { objects, hasOtherKeys },
  };
}

/**
 * The file's new text without the hosts at the indices `removed` (of `hosts`), everything
 * else byte for byte, or `undefined` when nothing would be left in it (then the file should go).
 */
export function credentialsFileWithout(
  parsed: PlaintextCredentials,
  removed: ReadonlySet<number>,
): string | undefined {
  const { text, layout } = parsed;
  let first = 0;
  const edits = layout.objects.map((object) => {
    const indices = object.members.map((_, index) => first + index);
    first += object.members.length;
    return {
      object,
      kept: object.members.filter((_, index) => !removed.has(indices[index] ?? -1)),
    };
  });
  if (edits.every(({ kept }) => kept.length === 0) && !layout.hasOtherKeys) return undefined;
  // From the end, so that each object's offsets still hold when it is edited.
  let result = text;
  for (const { object, kept } of edits.reverse()) {
    if (kept.length === object.members.length) continue;
    const last = object.members.at(-1);
    const body =
      kept.length === 0
        ? ""
        : kept.map((member) => text.slice(member.start, member.end)).join(",") +
          text.slice(last?.end ?? object.close, object.close);
    result = result.slice(0, object.open + 1) + body + result.slice(object.close);
  }
  return result;
}

const SPACE = new Set([" ", "\t", "\n", "\r"]);

/**
 * `json` without the white space between its tokens: the file's indentation is not part of
 * the object, and the entry then reads as what Terraform itself sends to `store`. Every
 * string, number and literal keeps its exact bytes.
 */
function withoutSpaceBetweenTokens(json: string): string {
  let out = "";
  for (let i = 0; i < json.length; i++) {
    const char = json[i] ?? "";
    if (char === '"') {
      const start = i++;
      while (json[i] !== '"') i += json[i] === "\\" ? 2 : 1;
      out += json.slice(start, i + 1);
    } else if (!SPACE.has(char)) {
      out += char;
    }
  }
  return out;
}

function skipSpace(text: string, index: number): number {
  let i = index;
  while (SPACE.has(text[i] ?? "")) i++;
  return i;
}

/** The members of the object whose `{` is at `open`, and the offset of its `}`. */
function objectMembers(
  text: string,
  open: number,
): { members: (Member & { name: string; valueStart: number })[]; close: number } {
  const members: (Member & { name: string; valueStart: number })[] = [];
  let i = open + 1;
  for (;;) {
    const start = i;
    i = skipSpace(text, i);
    if (text[i] === "}") return { members, close: i };
    const keyEnd = valueEnd(text, i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = valueEnd(text, valueStart);
    members.push({ name, start, end, valueStart });
    i = skipSpace(text, end);
    if (text[i] === "}") return { members, close: i };
    i++; // the comma
  }
}

/** The offset just past the JSON value that starts at `start`. */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  let i = start;
  do {
    const char = text[i];
    if (char === '"') {
      i++;
      while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
    } else if (char === "{" || char === "[") {
      depth++;
      i++;
    } else if (char === "}" || char === "]") {
      depth--;
      i++;
    } else if (depth > 0) {
      i++;
    } else {
      // A number or a literal at the top of the value: up to the next delimiter.
      while (i < text.length && !/[\s,}\]]/.test(text[i] ?? "")) i++;
    }
  } while (depth > 0);
  return i;
}
