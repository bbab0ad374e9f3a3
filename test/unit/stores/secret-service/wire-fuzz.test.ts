import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import {
  concat,
  decodeMessage,
  encodeMessage,
  MAX_MESSAGE_BYTES,
  MessageReader,
  WireError,
  type DbusValue,
} from "../../../../src/stores/secret-service/wire.ts";
import {
  hex,
  replyWithBody,
  wireFixtures,
  type WireFixture,
} from "../../../support/wire-fixtures.ts";

// Deterministic mutations of the captured messages: whatever the bytes, decodeMessage and
// MessageReader.push must return messages or throw WireError, quickly, without allocating
// much. A failure names the mutation and prints the bytes, so it can be replayed.

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/** mulberry32: a small seeded generator, so every run tries the same inputs. */
function generator(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % below) >>> 0;
  };
}

const fixtures = wireFixtures();
const MiB = 1024 * 1024;
// A failure would show a copy of the message or of the array it claims, at least 64 MiB.
const ALLOWED_GROWTH = 8 * MiB;
// CPU time, not time on the clock: another suite on the same cores stretches the latter.
const SLOW_MS = 250;

/** Watches ArrayBuffer memory (where a huge Uint8Array would live) across many attempts. */
class MemoryWatch {
  private readonly baseline: number;
  peak = 0;

  constructor() {
    collectGarbage();
    this.baseline = process.memoryUsage().arrayBuffers;
  }

  sample(): void {
    this.peak = Math.max(this.peak, process.memoryUsage().arrayBuffers - this.baseline);
  }

  check(): void {
    this.sample();
    assert.ok(
      this.peak < ALLOWED_GROWTH,
      `ArrayBuffer memory grew by ${(this.peak / MiB).toFixed(1)} MiB`,
    );
  }
}

type Outcome = "decoded" | "refused";

/**
 * Gives `bytes` to decodeMessage, to a MessageReader in one push, and to one in two pushes
 * cut at `split`. Each must return messages or throw WireError; the readers must agree with
 * decodeMessage. Returns what decodeMessage did.
 */
function attempt(bytes: Uint8Array, what: string, split = bytes.length >> 1): Outcome {
  const started = process.cpuUsage();
  const fail = (error: unknown): never =>
    assert.fail(
      `${what}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n` +
        `bytes: ${Buffer.from(bytes).toString("hex")}`,
    );
  const run = <T>(body: () => T): T | WireError => {
    try {
      return body();
    } catch (error) {
      if (error instanceof WireError) return error;
      return fail(error);
    }
  };
  const decoded = run(() => decodeMessage(bytes));
  const whole = run(() => new MessageReader().push(bytes));
  const pieces = run(() => {
    const reader = new MessageReader();
    return [...reader.push(bytes.slice(0, split)), ...reader.push(bytes.slice(split))];
  });
  if (!(decoded instanceof WireError)) {
    if (!isDeepStrictEqual(whole, [decoded]) || !isDeepStrictEqual(pieces, [decoded])) {
      fail(new Error("MessageReader and decodeMessage disagree"));
    }
  } else {
    // A refused message never comes out of a reader: it fails there too, or waits for more.
    for (const result of [whole, pieces]) {
      if (Array.isArray(result) && result.length > 0) {
        fail(new Error(`MessageReader returned what decodeMessage refused (${decoded.message})`));
      }
    }
  }
  const { user, system } = process.cpuUsage(started);
  const elapsed = (user + system) / 1000;
  assert.ok(elapsed < SLOW_MS, `${what}: took ${elapsed.toFixed(0)} ms of CPU time`);
  return decoded instanceof WireError ? "refused" : "decoded";
}

function setUint32(bytes: Uint8Array, offset: number, value: number): void {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(offset, value, bytes[0] === 0x6c);
}

/** Where the header's signature field (code 8, type g) keeps its text, if it has one. */
function signatureText(fixture: WireFixture): { at: number; length: number } | undefined {
  const bytes = fixture.bytes;
  for (let at = 16; at + 5 <= bytes.length; at += 8) {
    if (bytes[at] === 8 && bytes[at + 1] === 1 && bytes[at + 2] === 0x67 && bytes[at + 3] === 0) {
      return { at: at + 5, length: bytes[at + 4]! };
    }
  }
  return undefined;
}

describe("mutated captures: messages or WireError, never anything else", () => {
  test("every truncation is refused by decodeMessage and awaited by MessageReader", () => {
    const memory = new MemoryWatch();
    for (const fixture of fixtures) {
      const bytes = fixture.bytes;
      for (let length = 0; length < bytes.length; length++) {
        const prefix = bytes.slice(0, length);
        const what = `${fixture.name} cut to ${length} bytes`;
        assert.throws(() => decodeMessage(prefix), WireError, what);
        // A prefix of a good message is a stream that has not finished arriving.
        const reader = new MessageReader();
        assert.deepEqual(reader.push(prefix), [], what);
        assert.equal(reader.push(bytes.slice(length)).length, 1, what);
      }
      memory.sample();
    }
    memory.check();
  });

  test("random byte changes", () => {
    const random = generator(0x5eed0001);
    const memory = new MemoryWatch();
    const outcomes = { decoded: 0, refused: 0 };
    for (let round = 0; round < 12_000; round++) {
      const fixture = fixtures[random(fixtures.length)]!;
      const bytes = fixture.bytes;
      const changes: string[] = [];
      for (let count = 1 + random(4); count > 0; count--) {
        const at = random(bytes.length);
        const kind = random(4);
        const value = [random(256), bytes[at]! ^ (1 << random(8)), 0x00, 0xff][kind]!;
        bytes[at] = value;
        changes.push(`[${at}]=${value}`);
      }
      outcomes[attempt(bytes, `${fixture.name} ${changes.join(" ")}`, random(bytes.length + 1))]++;
      if (round % 64 === 0) memory.sample();
    }
    memory.check();
    // Both paths are reached: changes inside strings and byte arrays still decode.
    assert.ok(outcomes.decoded > 500 && outcomes.refused > 5000, JSON.stringify(outcomes));
  });

  test("every byte set to 0x00, 0x80 and 0xff in turn", () => {
    const memory = new MemoryWatch();
    for (const fixture of fixtures) {
      for (let at = 0; at < fixture.bytes.length; at++) {
        for (const value of [0x00, 0x80, 0xff]) {
          const bytes = fixture.bytes;
          bytes[at] = value;
          attempt(bytes, `${fixture.name} [${at}]=${value}`);
        }
      }
      memory.sample();
    }
    memory.check();
  });

  test("huge lengths in every length field: body, header fields, arrays, strings", () => {
    // Every uint32 on the wire is 4-aligned from the message's start: the body length at 4,
    // the header-field array's length at 12, and every array and string length after it.
    const memory = new MemoryWatch();
    const huge = [
      0xffffffff,
      0x80000000,
      64 * MiB,
      64 * MiB + 1,
      MAX_MESSAGE_BYTES,
      MAX_MESSAGE_BYTES - 1,
      0x00ffffff,
    ];
    for (const fixture of fixtures) {
      for (let at = 4; at + 4 <= fixture.bytes.length; at += 4) {
        if (at === 8) continue; // the serial
        for (const value of huge) {
          const bytes = fixture.bytes;
          setUint32(bytes, at, value);
          const outcome = attempt(bytes, `${fixture.name} uint32 at ${at} = ${value}`);
          if (at === 4 || at === 12) assert.equal(outcome, "refused", `${fixture.name} at ${at}`);
          memory.sample();
        }
      }
    }
    memory.check();
  });

  test("wrong signatures in the header", () => {
    const random = generator(0x5eed0002);
    const memory = new MemoryWatch();
    const alphabet = "ybnqiuxtdhsogav(){}z";
    const outcomes = { decoded: 0, refused: 0 };
    for (const fixture of fixtures) {
      const field = signatureText(fixture);
      assert.ok(field, `${fixture.name} has a signature field`);
      const tries: string[] = [];
      for (let position = 0; position < field.length; position++) {
        for (const code of alphabet) {
          const original = new TextDecoder().decode(
            fixture.bytes.subarray(field.at, field.at + field.length),
          );
          tries.push(original.slice(0, position) + code + original.slice(position + 1));
        }
      }
      for (let round = 0; round < 100; round++) {
        tries.push(Array.from({ length: field.length }, () => alphabet[random(20)]).join(""));
      }
      for (const signature of tries) {
        const bytes = fixture.bytes;
        bytes.set(new TextEncoder().encode(signature), field.at);
        outcomes[attempt(bytes, `${fixture.name} with signature ${signature}`)]++;
      }
      memory.sample();
    }
    memory.check();
    assert.ok(outcomes.decoded > 20 && outcomes.refused > 1000, JSON.stringify(outcomes));
  });

  test("bad endianness bytes are refused; the wrong byte order is refused or decoded", () => {
    for (const fixture of fixtures) {
      for (let value = 0; value < 256; value++) {
        const bytes = fixture.bytes;
        bytes[0] = value;
        const outcome = attempt(bytes, `${fixture.name} with endianness byte ${value}`);
        if (value !== 0x6c && value !== 0x42) assert.equal(outcome, "refused");
      }
    }
  });

  test("a stream of captures with random damage, pushed in random pieces", () => {
    const random = generator(0x5eed0003);
    const memory = new MemoryWatch();
    const stream = concat(...fixtures.map(({ bytes }) => bytes));
    for (let round = 0; round < 300; round++) {
      const bytes = stream.slice();
      for (let count = random(6); count > 0; count--) bytes[random(bytes.length)] = random(256);
      const reader = new MessageReader();
      let offset = 0;
      try {
        while (offset < bytes.length) {
          const size = 1 + random(700);
          reader.push(bytes.slice(offset, offset + size));
          offset += size;
        }
      } catch (error) {
        if (!(error instanceof WireError)) throw error;
      }
      memory.sample();
    }
    memory.check();
  });
});

describe("hostile lengths and depths", () => {
  const u32 = (value: number) => {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setUint32(0, value, true);
    return bytes;
  };

  test("an array length claiming 64 MiB with 10 bytes behind it", () => {
    const memory = new MemoryWatch();
    for (const signature of ["ay", "as", "a{sv}", "aay", "at"]) {
      for (const claimed of [64 * MiB, 64 * MiB + 1, 0xffffffff]) {
        const bytes = replyWithBody(signature, concat(u32(claimed), new Uint8Array(10)));
        assert.equal(attempt(bytes, `${signature} claiming ${claimed} bytes`), "refused");
        memory.sample();
      }
    }
    memory.check();
  });

  test("a string length of 0xffffffff", () => {
    const bytes = replyWithBody("s", concat(u32(0xffffffff), hex("61626300")));
    assert.equal(attempt(bytes, "string of 0xffffffff bytes"), "refused");
  });

  test("a body length of 0xffffffff is refused from the first 16 bytes", () => {
    const bytes = fixtures[0]!.bytes;
    setUint32(bytes, 4, 0xffffffff);
    assert.throws(() => new MessageReader().push(bytes.slice(0, 16)), WireError);
  });

  test("a variant holding a variant, 1000 deep", () => {
    const nest = (depth: number) =>
      replyWithBody(
        "v",
        concat(...Array.from({ length: depth }, () => hex("017600")), hex("0179002a")),
      );
    assert.equal(attempt(nest(1000), "1000 nested variants"), "refused");
    assert.equal(attempt(nest(32), "32 nested variants"), "decoded");
  });

  test("depth counts across variants: arrays, a variant, arrays, a variant", () => {
    // Each signature alone is within its 32 arrays; the value is `arrays` + 1 + `arrays` + 1
    // containers deep.
    const nested = (arrays: number) => {
      const wrap = (value: DbusValue) => {
        let wrapped = value;
        for (let level = 0; level < arrays; level++) wrapped = [wrapped];
        return wrapped;
      };
      const signature = `${"a".repeat(arrays)}v`;
      const inner = { signature: "y", value: 1 };
      return encodeMessage({
        type: 2,
        serial: 1,
        replySerial: 1,
        signature,
        body: [wrap({ signature, value: wrap(inner) })],
      });
    };
    assert.equal(attempt(nested(32), "66 levels of nesting"), "refused");
    assert.equal(attempt(nested(31), "64 levels of nesting"), "decoded");
  });

  test("a variant whose signature is not one complete type", () => {
    for (const signature of ["", "yy", "a", "(", "a{vs}", "z"]) {
      const text = new TextEncoder().encode(signature);
      const body = concat(new Uint8Array([text.length]), text, hex("00 00000000 00000000"));
      assert.equal(attempt(replyWithBody("v", body), `variant of "${signature}"`), "refused");
    }
  });

  test("decoding a message never takes more than 16 times its size in memory", () => {
    // 262,000 empty `ay` elements of 4 bytes each: one Uint8Array apiece when decoded.
    const count = Math.floor(MiB / 4);
    const bytes = encodeMessage({
      type: 2,
      serial: 1,
      replySerial: 1,
      signature: "aay",
      body: [Array.from({ length: count }, () => new Uint8Array(0))],
    });
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    let decoded: unknown;
    try {
      decoded = decodeMessage(bytes);
    } catch (error) {
      if (!(error instanceof WireError)) throw error;
    }
    const grown = process.memoryUsage().heapUsed - before;
    assert.ok(decoded === undefined || grown < 16 * bytes.length, `${grown} bytes of heap`);
  });
});
