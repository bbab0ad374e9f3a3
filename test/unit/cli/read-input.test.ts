import assert from "node:assert/strict";
import { test } from "node:test";
import { readInput } from "../../../src/cli/read-input.ts";
import { CliError } from "../../../src/errors.ts";

const SOURCE = "the credentials object on stdin";
const bytes = (...values: number[]) => Uint8Array.from(values);
const utf8 = (text: string) => new TextEncoder().encode(text);

/** An async generator over `chunks` that records how far it was read. */
function recordingInput(chunks: readonly Uint8Array[]) {
  const state = { yielded: 0, exhausted: false };
  async function* generate(): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) {
      state.yielded += 1;
      yield chunk;
    }
    state.exhausted = true;
  }
  return { input: generate(), state };
}

test("reads every chunk to EOF and joins them", async () => {
  const { input, state } = recordingInput([utf8('{"tok'), utf8('en":'), utf8(""), utf8('"abc"}')]);
  assert.equal(await readInput(input, 1024, SOURCE), '{"token":"abc"}');
  assert.equal(state.exhausted, true);
});

test("decodes a character whose bytes are split across chunks", async () => {
  const whole = utf8('{"token":"ü😀"}');
  const chunks = [...whole].map((byte) => bytes(byte));
  assert.equal(await readInput(recordingInput(chunks).input, 1024, SOURCE), '{"token":"ü😀"}');
});

test("empty input gives empty text", async () => {
  assert.equal(await readInput(recordingInput([]).input, 1024, SOURCE), "");
});

const invalid = [
  ["a 0xff byte", bytes(0x7b, 0xff, 0x7d)],
  ["a lead byte followed by ASCII (0xc3 0x28)", bytes(0xc3, 0x28)],
  ["an overlong encoding of / (0xc0 0xaf)", bytes(0xc0, 0xaf)],
  ["an overlong three-byte encoding (0xe0 0x80 0xaf)", bytes(0xe0, 0x80, 0xaf)],
  ["a lone surrogate (0xed 0xa0 0x80)", bytes(0xed, 0xa0, 0x80)],
  ["a stray continuation byte (0x80)", bytes(0x41, 0x80)],
  ["a sequence cut off at the end (0xe2 0x82)", bytes(0x7b, 0x7d, 0xe2, 0x82)],
  ["a code point above U+10FFFF (0xf4 0x90 0x80 0x80)", bytes(0xf4, 0x90, 0x80, 0x80)],
] as const;
for (const [what, input] of invalid) {
  test(`refuses invalid UTF-8, ${what}, after reading to EOF`, async () => {
    const { input: source, state } = recordingInput([utf8('{"token":"'), input, utf8('"}')]);
    await assert.rejects(readInput(source, 1024, SOURCE), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.equal(error.message, `${SOURCE} is not valid UTF-8 text: expected a JSON object`);
      return true;
    });
    assert.equal(state.exhausted, true);
  });
}

test("accepts input exactly at the cap", async () => {
  const { input, state } = recordingInput([utf8("12345"), utf8("67890")]);
  assert.equal(await readInput(input, 10, SOURCE), "1234567890");
  assert.equal(state.exhausted, true);
});

test("refuses input one byte above the cap, after reading it all", async () => {
  const { input, state } = recordingInput([utf8("12345"), utf8("67890"), utf8("x")]);
  await assert.rejects(readInput(input, 10, SOURCE), (error: unknown) => {
    assert.ok(error instanceof CliError);
    assert.equal(
      error.message,
      `${SOURCE} is larger than 10 bytes, where a credentials object takes a few hundred: nothing was stored.`,
    );
    return true;
  });
  assert.equal(state.exhausted, true);
});

test("keeps reading long after the cap is passed, so the writer never sees a closed pipe", async () => {
  const chunks = Array.from({ length: 1000 }, () => utf8("SECRET-abc123 "));
  const { input, state } = recordingInput(chunks);
  await assert.rejects(readInput(input, 100, SOURCE), (error: unknown) => {
    assert.ok(error instanceof CliError);
    assert.ok(!error.message.includes("SECRET"), error.message);
    return true;
  });
  assert.equal(state.yielded, 1000);
  assert.equal(state.exhausted, true);
});

test("counts the cap in bytes, not characters", async () => {
  // Four characters, eight bytes.
  await assert.rejects(readInput(recordingInput([utf8("üüüü")]).input, 7, SOURCE), CliError);
  assert.equal(await readInput(recordingInput([utf8("üüüü")]).input, 8, SOURCE), "üüüü");
});

test("a UTF-8 byte order mark is tolerated and stripped from the text", async () => {
  const { input } = recordingInput([bytes(0xef, 0xbb, 0xbf), utf8('{"token":"abc"}')]);
  assert.equal(await readInput(input, 1024, SOURCE), '{"token":"abc"}');
});

test("only a leading byte order mark is stripped; one inside the text is kept", async () => {
  const text = await readInput(
    recordingInput([utf8('{"token":"a\u{feff}b"}')]).input,
    1024,
    SOURCE,
  );
  assert.equal(text, '{"token":"a\u{feff}b"}');
});
