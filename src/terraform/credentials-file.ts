import * as z from "zod/mini";
import { CliError } from "../errors.ts";

/**
 * `credentials.tfrc.json` as `terraform login` writes it:
 * `{"credentials": {"HOST": {"token": "..."}}}`. Other top-level properties are kept.
 */
const credentialsFileSchema = z.looseObject({
  // Each host's object is checked on its own by the importer, so that one bad host does
  // not hold back the others (and so that property order is kept).
  credentials: z.optional(z.record(z.string(), z.unknown())),
});

export interface PlaintextCredentials {
  /** Host name as written in the file, and its credentials object as JSON text. */
  readonly hosts: ReadonlyArray<{ readonly name: string; readonly object: string }>;
  /** The parsed file, for `withoutHosts`. */
  readonly document: Readonly<Record<string, unknown>>;
}

/** Parses the file's text; a malformed file is an error that names the file, never its content. */
export function parseCredentialsFile(text: string, file: string): PlaintextCredentials {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not valid JSON; fix it or move its tokens by hand`);
  }
  const result = credentialsFileSchema.safeParse(parsed);
  if (!result.success) {
    throw new CliError(
      `${file} is not a Terraform credentials file ({"credentials": {"HOST": {"token": "..."}}})`,
    );
  }
  const credentials = result.data.credentials ?? {};
  return {
    hosts: Object.entries(credentials).map(([name, object]) => ({
      name,
      object: JSON.stringify(object),
    })),
    document: result.data,
  };
}

/**
 * The file's new text without `removed` hosts, formatted as Terraform writes it, or
 * `undefined` when nothing would be left in it (then the file should go).
 */
export function credentialsFileWithout(
  document: Readonly<Record<string, unknown>>,
  removed: ReadonlySet<string>,
): string | undefined {
  const credentials = Object.fromEntries(
    Object.entries((document.credentials ?? {}) as Record<string, unknown>).filter(
      ([host]) => !removed.has(host),
    ),
  );
  const rest = Object.fromEntries(
    Object.entries(document).filter(([key]) => key !== "credentials"),
  );
  if (Object.keys(credentials).length === 0 && Object.keys(rest).length === 0) return undefined;
  return `${JSON.stringify({ ...rest, credentials }, null, 2)}\n`;
}
