import { deadlineAt, deadlineIn } from "../../../src/system/deadline.ts";
import assert from "node:assert/strict";
import { test } from "node:test";
import { drainInput, readInput } from "../../../src/cli/read-input.ts";
import { CliError } from "../../../src/errors.ts";

const SOURCE = "the credentials object on stdin";
const bytes = (...values: number[]) => Uint8Array.from(values);
const utf8 = (text: string) => new TextEncoder().encode(text);
const limits = (maxBytes: number, timeoutSeconds = 30) => ({
  maxBytes,
  deadline: deadlineIn(timeoutSeconds),
  source: SOURCE,
});

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
  assert.equal(await readInput(input, limits(1024)), '{"token":"abc"}');
  assert.equal(state.exhausted, true);
});

test("decodes a character whose bytes are split across chunks", async () => {
  const whole = utf8('{"token":"ü😀"}');
  const chunks = [...whole].map((byte) => bytes(byte));
  assert.equal(await readInput(recordingInput(chunks).input, limits(1024)), '{"token":"ü😀"}');
});

test("empty input gives empty text", async () => {
  assert.equal(await readInput(recordingInput([]).input, limits(1024)), "");
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
    await assert.rejects(readInput(source, limits(1024)), (error: unknown) => {
      assert.ok(error instanceof CliError);
      assert.equal(error.message, `${SOURCE} is not valid UTF-8 text: expected a JSON object`);
      return true;
    });
    assert.equal(state.exhausted, true);
  });
}

test("accepts input exactly at the cap", async () => {
  const { input, state } = recordingInput([utf8("12345"), utf8("67890")]);
  assert.equal(await readInput(input, limits(10)), "1234567890");
  assert.equal(state.exhausted, true);
});

test("refuses input one byte above the cap", async () => {
  const { input } = recordingInput([utf8("12345"), utf8("67890"), utf8("x")]);
  await assert.rejects(readInput(input, limits(10)), (error: unknown) => {
    assert.ok(error instanceof CliError);
    assert.equal(
      error.message,
      `${SOURCE} is larger than 10 bytes, where a credentials object takes a few hundred: nothing was stored`,
    );
    return true;
  });
});

test("input past the cap is read to EOF, dropped, and refused only then", async () => {
  const chunks = Array.from({ length: 200 }, () => utf8("SECRET-abc123 "));
  const { input, state } = recordingInput(chunks);
  await assert.rejects(readInput(input, limits(100)), (error: unknown) => {
    assert.ok(error instanceof CliError);
    assert.ok(!error.message.includes("SECRET"), error.message);
    assert.match(error.message, /is larger than 100 bytes/);
    return true;
  });
  assert.equal(state.yielded, 200);
  assert.equal(state.exhausted, true, "stopping at the cap would break the writer's pipe");
});

/** An input that never ends; each chunk comes in a later turn of the event loop, as a pipe's. */
function endlessInput(text: string) {
  const state = { yielded: 0 };
  async function* generate(): AsyncGenerator<Uint8Array> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      state.yielded++;
      yield utf8(text);
    }
  }
  return { input: generate(), state };
}

/**
 * Limits whose deadline passes once `state` has yielded `chunks` chunks, on a clock that stands
 * still until then: how far the input was read is then the test's choice, not the machine's
 * speed (a real 0.2 s read 8 chunks or fewer on a loaded machine).
 */
function limitsPassingAfter(state: { yielded: number }, maxBytes: number, chunks: number) {
  const clock = {
    now: () => (state.yielded >= chunks ? Number.POSITIVE_INFINITY : 0),
    sleep: () => Promise.resolve(),
  };
  // Far off on the real timer the race also sets (but under setTimeout's 2^31 ms limit).
  return { maxBytes, deadline: deadlineAt(1e9, 0.2, clock), source: SOURCE };
}

test("an endless input is read on past the cap and refused at the deadline", async () => {
  const { input, state } = endlessInput("SECRET-abc123 ");
  // 30 chunks of 14 bytes: far past the 100-byte cap, which alone must not end the read.
  await assert.rejects(
    readInput(input, limitsPassingAfter(state, 100, 30)),
    new CliError(
      `${SOURCE} did not end within 0.2 s (Terraform closes it after the object): nothing was stored`,
    ),
  );
  assert.equal(state.yielded, 30);
});

test("an input that never ends is refused at the deadline", async () => {
  const stalled: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => undefined) }),
  };
  await assert.rejects(
    readInput(stalled, limits(1024, 0.05)),
    new CliError(
      `${SOURCE} did not end within 0.05 s (Terraform closes it after the object): nothing was stored`,
    ),
  );
});

test("drainInput reads past the cap to EOF", async () => {
  const { input, state } = recordingInput(Array.from({ length: 50 }, () => utf8("0123456789")));
  await drainInput(input, limits(100));
  assert.equal(state.exhausted, true);
});

test("drainInput of an endless input ends at the deadline", async () => {
  const { input, state } = endlessInput("0123456789");
  await drainInput(input, limitsPassingAfter(state, 100, 30));
  assert.equal(state.yielded, 30);
});

test("counts the cap in bytes, not characters", async () => {
  // Four characters, eight bytes.
  await assert.rejects(readInput(recordingInput([utf8("üüüü")]).input, limits(7)), CliError);
  assert.equal(await readInput(recordingInput([utf8("üüüü")]).input, limits(8)), "üüüü");
});

test("a UTF-8 byte order mark is tolerated and stripped from the text", async () => {
  const { input } = recordingInput([bytes(0xef, 0xbb, 0xbf), utf8('{"token":"abc"}')]);
  assert.equal(await readInput(input, limits(1024)), '{"token":"abc"}');
});

test("only a leading byte order mark is stripped; one inside the text is kept", async () => {
  const text = await readInput(
    recordingInput([utf8('{"token":"a\u{feff}b"}')]).input,
    limits(1024),
  );
  assert.equal(text, '{"token":"a\u{feff}b"}');
});
