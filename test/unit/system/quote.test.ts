import assert from "node:assert/strict";
import { test } from "node:test";
import { errorText, oneLine, quote } from "../../../src/system/quote.ts";

test("oneLine folds line breaks, tabs and runs of spaces into single spaces", () => {
  assert.equal(oneLine("  first line\r\n\tsecond   line\n"), "first line second line");
});

test("oneLine removes control and line-separator characters a terminal would act on", () => {
  assert.equal(oneLine("a\u001b[2Jb\u0000c\u2028d\u2029e\u0085f"), "a [2Jb c d e f");
});

test("oneLine escapes format characters, such as bidi overrides, instead of passing them on", () => {
  assert.equal(
    oneLine("evil\u202eexe.txt \u200b\u{e0041}"),
    "evil\\u202eexe.txt \\u200b\\udb40\\udc41",
  );
});

test("oneLine cuts text over maxLength to exactly maxLength, ending in ...", () => {
  const cut = oneLine("x".repeat(400), 300);
  assert.equal(cut.length, 300);
  assert.ok(cut.endsWith("..."));
  assert.equal(oneLine("x".repeat(300), 300), "x".repeat(300));
});

test("errorText takes an Error's message or a thrown value's text, on one line", () => {
  assert.equal(errorText(new Error("DBus error:\nno bus")), "DBus error: no bus");
  assert.equal(errorText("plain\nstring"), "plain string");
});

test("quote escapes what JSON.stringify leaves raw: line separators and bidi controls", () => {
  assert.equal(quote("a\u2028b\u202ec"), '"a\\u2028b\\u202ec"');
  assert.equal(quote('say "hi"\n'), '"say \\"hi\\"\\n"');
});

test("quote escapes C0, DEL and C1 controls (U+0080-U+009F), which JSON.stringify leaves raw", () => {
  assert.equal(
    quote("\u0007\u007f\u0080\u009b31m\u009f"),
    '"\\u0007\\u007f\\u0080\\u009b31m\\u009f"',
  );
});
