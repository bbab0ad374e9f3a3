/**
 * Quotes user input for a one-line message: JSON string syntax, plus escapes for the
 * control, format and line-separator characters that JSON.stringify leaves raw, so that
 * nothing typed can break the line or reorder what a terminal shows.
 */
export function quote(text: string): string {
  return JSON.stringify(text).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (char) =>
    char
      .split("")
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .join(""),
  );
}

/**
 * Folds a message from another program (a binding, pass, gpg, a D-Bus peer) onto one line:
 * control and line-separator characters and runs of white space become one space, and
 * format characters (bidi overrides such as U+202E, which reorder what a terminal shows)
 * are escaped as \uXXXX. Terraform shows a helper's stderr as a single message, and a raw
 * control character could rewrite the terminal. With `maxLength`, longer text is cut and
 * ends in "...".
 */
export function oneLine(text: string, maxLength = Infinity): string {
  const flat = text
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const cut = flat.length > maxLength ? `${flat.slice(0, maxLength - 3)}...` : flat;
  return cut.replace(/\p{Cf}/gu, (char) =>
    char
      .split("")
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .join(""),
  );
}

/** The message of anything thrown, folded onto one line. */
export function errorText(error: unknown): string {
  return oneLine(error instanceof Error ? error.message : String(error));
}

/**
 * `text` as it is when it holds nothing a terminal would act on, else quoted: names read
 * from files, keychains and the environment (a host in credentials.tfrc.json, a variable's
 * name) are data, and an escape sequence in one must not rewrite the screen.
 */
export function printable(text: string): string {
  return /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(text) ? quote(text) : text;
}
