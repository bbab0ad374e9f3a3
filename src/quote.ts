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
