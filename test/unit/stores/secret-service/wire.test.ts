import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import {
  concat,
  decodeMessage,
  encodeMessage,
  MAX_MESSAGE_BYTES,
  MessageReader,
  MessageType,
  messageLength,
  parseSignature,
  WireError,
  type DbusValue,
  type Endianness,
  type Message,
  type Variant,
} from "../../../../src/stores/secret-service/wire.ts";
import {
  hex,
  rawMessage,
  replyWithBody,
  wireFixture,
  wireFixtures,
} from "../../../support/wire-fixtures.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);
const variant = (signature: string, value: DbusValue): Variant => ({ signature, value });

/**
 * Maps as lists of entries, so that comparisons check the order of dict entries too
 * (deepStrictEqual compares Maps without regard to order).
 */
function ordered(value: unknown): unknown {
  if (value instanceof Map) {
    return { dict: [...value].map(([key, item]) => [ordered(key), ordered(item)]) };
  }
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map(ordered);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, ordered(item)]));
  }
  return value;
}

function assertSameMessage(actual: Message, expected: Message, what?: string): void {
  assert.deepStrictEqual(ordered(actual), ordered(expected), what);
}

function uint32(bytes: Uint8Array, offset: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset).getUint32(offset, bytes[0] === 0x6c);
}

/** The body of a whole message: its last `body length` bytes. */
function bodyOf(message: Uint8Array): Uint8Array {
  return message.subarray(message.length - uint32(message, 4));
}

/** The body encodeMessage writes for `body`. */
function encodeBody(signature: string, body: DbusValue[], endianness: Endianness): Uint8Array {
  return bodyOf(encodeMessage({ type: 2, serial: 1, replySerial: 1, signature, body }, endianness));
}

/** The body decodeMessage reads from bytes written by hand. */
function decodeBody(signature: string, body: Uint8Array, endianness: Endianness): DbusValue[] {
  return [...decodeMessage(replyWithBody(signature, body, endianness)).body];
}

// ---------------------------------------------------------------------------- fixtures

// What each captured message holds, as `dbus-monitor --monitor` printed it (the fixture's
// monitorText): libdbus's decoding, not ours. Flags and serials of error replies, which it
// does not print, are bytes 2 and 8-11 of the message.
const ITEM = "/org/freedesktop/secrets/collection/login/1";
const SECRET_SERVICE = "org.freedesktop.Secret.Service";
const ATTRIBUTES = new Map([
  ["service", "example.test"],
  ["user", "alice"],
  ["xdg:schema", "org.freedesktop.Secret.Generic"],
]);
const reply = (serial: number, replySerial: number, destination: string) =>
  ({ type: 2, flags: 1, serial, replySerial, destination, sender: ":1.1" }) as const;
const errorReply = (serial: number, destination: string, errorName: string, text: string) =>
  ({
    type: 3,
    flags: 1,
    serial,
    replySerial: 2,
    destination,
    sender: ":1.1",
    errorName,
    signature: "s",
    body: [text],
  }) as const;

const EXPECTED: Readonly<Record<string, Message>> = {
  "hello-reply": {
    ...reply(1, 1, ":1.7"),
    sender: "org.freedesktop.DBus",
    signature: "s",
    body: [":1.7"],
  },
  "name-acquired": {
    type: 4,
    flags: 1,
    serial: 2,
    path: "/org/freedesktop/DBus",
    interface: "org.freedesktop.DBus",
    member: "NameAcquired",
    destination: ":1.7",
    sender: "org.freedesktop.DBus",
    signature: "s",
    body: [":1.7"],
  },
  "service-get-all-reply": {
    ...reply(6, 8, ":1.7"),
    signature: "a{sv}",
    body: [
      new Map([
        [
          "Collections",
          variant("ao", [
            "/org/freedesktop/secrets/collection/session",
            "/org/freedesktop/secrets/collection/login",
          ]),
        ],
      ]),
    ],
  },
  "open-session-call": {
    type: 1,
    flags: 0,
    serial: 9,
    path: "/org/freedesktop/secrets",
    interface: SECRET_SERVICE,
    member: "OpenSession",
    destination: ":1.1",
    sender: ":1.7",
    signature: "sv",
    body: [
      "dh-ietf1024-sha256-aes128-cbc-pkcs7",
      variant(
        "ay",
        hex(`78982b715a82d77ac2a8ce4e3b4d2073b4b2882d4c620e8be3c2d27d00f81df8
             bf28851d3395bd73975e45671aafd48595537fb8bb4fc534f5202179b0a0f2a5
             ebdc4c078774559f87f93e51f8e4ef458c85466e9983a2df7103f355efb2381e
             20ca3ea04db8e40c9da2f4e15ef6070478230592e4f640212572bef9fd02c023`),
      ),
    ],
  },
  "open-session-reply": {
    ...reply(7, 9, ":1.7"),
    signature: "vo",
    body: [
      variant(
        "ay",
        hex(`b05bfb1d7d21dfcce056c346572fa50c28a3cb6d862280554885ae28dd12dac4
             cd425d2705deadf0f445b054624d58908c11addcab0e93de786a2d6a81d2a31d
             f2fa23d6876ef0d3913cf73e192525af05bb6dfcd639181353cf71991162271b
             96c98eb44f6fd5886d7c4e603b429541d5667ee6f0387def0560aa2ad1d1de1d`),
      ),
      "/org/freedesktop/secrets/session/s1",
    ],
  },
  "create-item-call": {
    type: 1,
    flags: 0,
    serial: 10,
    path: "/org/freedesktop/secrets/aliases/default",
    interface: "org.freedesktop.Secret.Collection",
    member: "CreateItem",
    destination: "org.freedesktop.secrets",
    sender: ":1.7",
    signature: "a{sv}(oayays)b",
    body: [
      new Map<DbusValue, DbusValue>([
        [
          "org.freedesktop.Secret.Item.Attributes",
          variant(
            "a{ss}",
            new Map([
              ["user", "alice"],
              ["service", "example.test"],
            ]),
          ),
        ],
        ["org.freedesktop.Secret.Item.Label", variant("s", "test label")],
      ]),
      [
        "/org/freedesktop/secrets/session/s1",
        hex("0149f1a68360d4db47e984bbbc88de9d"),
        hex("e906490a3541f08418d069af046a7183"),
        "text/plain",
      ],
      true,
    ],
  },
  "create-item-reply": {
    ...reply(9, 10, ":1.7"),
    signature: "oo",
    body: [ITEM, "/"],
  },
  "properties-changed": {
    type: 4,
    flags: 1,
    serial: 10,
    path: "/org/freedesktop/secrets/collection/login",
    interface: "org.freedesktop.DBus.Properties",
    member: "PropertiesChanged",
    sender: ":1.1",
    signature: "sa{sv}as",
    body: ["org.freedesktop.Secret.Collection", new Map([["Items", variant("ao", [ITEM])]]), []],
  },
  "search-items-reply": {
    ...reply(13, 10, ":1.8"),
    signature: "aoao",
    body: [[ITEM], []],
  },
  "get-secrets-reply": {
    ...reply(14, 11, ":1.8"),
    signature: "a{o(oayays)}",
    body: [
      new Map([
        [
          ITEM,
          [
            "/org/freedesktop/secrets/session/s2",
            hex("88772b3fdd350c31fac07e0fd40f6ec8"),
            hex("d9eb40ebded4130b0896b017144fc2cf"),
            "text/plain",
          ],
        ],
      ]),
    ],
  },
  "read-alias-reply": {
    ...reply(21, 2, ":1.10"),
    signature: "o",
    body: ["/org/freedesktop/secrets/collection/login"],
  },
  "get-attributes-reply": {
    ...reply(22, 2, ":1.11"),
    signature: "v",
    body: [variant("a{ss}", ATTRIBUTES)],
  },
  "item-get-all-reply": {
    ...reply(23, 2, ":1.12"),
    signature: "a{sv}",
    body: [
      new Map([
        ["Locked", variant("b", false)],
        ["Attributes", variant("a{ss}", ATTRIBUTES)],
        ["Label", variant("s", "test label")],
        ["Type", variant("s", "org.freedesktop.Secret.Generic")],
        ["Created", variant("t", 1795537263n)],
        ["Modified", variant("t", 1795537263n)],
      ]),
    ],
  },
  "big-endian-open-session-call": {
    type: 1,
    flags: 0,
    serial: 9,
    path: "/org/freedesktop/secrets",
    interface: SECRET_SERVICE,
    member: "OpenSession",
    destination: "org.freedesktop.secrets",
    sender: ":1.6",
    signature: "sv",
    body: ["plain", variant("s", "")],
  },
  "plain-open-session-reply": {
    ...reply(24, 9, ":1.6"),
    signature: "vo",
    body: [variant("s", ""), "/org/freedesktop/secrets/session/s4"],
  },
  "plain-get-secrets-reply": {
    ...reply(25, 10, ":1.6"),
    signature: "a{o(oayays)}",
    body: [
      new Map([
        [
          ITEM,
          [
            "/org/freedesktop/secrets/session/s4",
            new Uint8Array(0),
            utf8("test-secret"),
            "text/plain",
          ],
        ],
      ]),
    ],
  },
  "empty-get-secrets-reply": {
    ...reply(26, 11, ":1.6"),
    signature: "a{o(oayays)}",
    body: [new Map()],
  },
  "empty-search-items-reply": {
    ...reply(27, 12, ":1.6"),
    signature: "aoao",
    body: [[], []],
  },
  "big-endian-signal": {
    type: 4,
    flags: 0,
    serial: 14,
    path: "/org/example/WireFixture",
    interface: "org.example.WireFixture",
    member: "Everything",
    sender: ":1.6",
    signature: "sogynqiuxtdbayaya{sv}a{ss}y(oayays)aoa{sv}atvb",
    body: [
      "wire fixture \u2713 caf\u00e9",
      "/org/example/WireFixture/item_1",
      "a{sv}(oayays)",
      254,
      -12345,
      54321,
      -2147483648,
      4294967295,
      -9007199254740993n,
      18446744073709551615n,
      -1.5,
      true,
      hex("00017f80ff"),
      new Uint8Array(0),
      new Map<DbusValue, DbusValue>([
        ["Label", variant("s", "test label")],
        ["Count", variant("u", 3)],
        [
          "Attributes",
          variant(
            "a{ss}",
            new Map([
              ["service", "example.test"],
              ["user", "alice"],
            ]),
          ),
        ],
        ["Nested", variant("v", variant("v", variant("(yx)", [7, -2n])))],
      ]),
      new Map([
        ["service", "example.test"],
        ["user", "alice"],
      ]),
      1,
      [
        "/org/freedesktop/secrets/session/s1",
        hex("000102030405060708090a0b0c0d0e0f"),
        utf8("test-secret"),
        "text/plain",
      ],
      ["/org/example/a", "/org/example/b"],
      new Map(),
      [],
      variant("ay", hex("cafe")),
      false,
    ],
  },
  "service-unknown-error": {
    ...errorReply(
      3,
      ":1.13",
      "org.freedesktop.DBus.Error.ServiceUnknown",
      "The name org.example.NobodyOwnsThis was not provided by any .service files",
    ),
    sender: "org.freedesktop.DBus",
  },
  "no-such-object-error": errorReply(
    28,
    ":1.14",
    "org.freedesktop.Secret.Error.NoSuchObject",
    "The collection does not exist",
  ),
  "unknown-object-error": errorReply(
    29,
    ":1.15",
    "org.freedesktop.DBus.Error.UnknownMethod",
    "Object does not exist at path \u201c/org/freedesktop/secrets/collection/nonexistent\u201d",
  ),
  "delete-reply": {
    ...reply(33, 10, ":1.16"),
    signature: "o",
    body: ["/"],
  },
};

describe("messages captured from dbus-daemon and gnome-keyring", () => {
  test("every fixture has an expectation here, and every expectation a fixture", () => {
    assert.deepEqual(
      wireFixtures()
        .map(({ name }) => name)
        .sort(),
      Object.keys(EXPECTED).sort(),
    );
  });

  for (const fixture of wireFixtures()) {
    test(`${fixture.name} decodes to exactly what libdbus printed`, () => {
      const expected = EXPECTED[fixture.name];
      assert.ok(expected, `no expectation for ${fixture.name}`);
      const message = decodeMessage(fixture.bytes);
      assertSameMessage(message, expected);
      assert.equal(message.signature, fixture.signature);
      assert.equal(fixture.bytes[0], fixture.endianness === "big" ? 0x42 : 0x6c);
    });
  }

  test("dbus-daemon forwards big-endian messages big-endian, and GDBus answers them in kind", () => {
    const big = wireFixtures()
      .filter(({ bytes }) => bytes[0] === 0x42)
      .map(({ name }) => name);
    assert.deepEqual(big, [
      "big-endian-open-session-call",
      "plain-open-session-reply",
      "plain-get-secrets-reply",
      "empty-get-secrets-reply",
      "empty-search-items-reply",
      "big-endian-signal",
    ]);
  });
});

describe("re-encoding captured messages", () => {
  // dbus-daemon appends the sender field after all others, and GDBus writes destination and
  // signature before the reply serial, while encodeMessage writes fields in code order. So
  // no captured message re-encodes byte for byte as a whole; these tests compare what can be.

  test("our big-endian messages come back byte for byte, plus the sender dbus-daemon appended", () => {
    for (const name of ["big-endian-signal", "big-endian-open-session-call"]) {
      const captured = wireFixture(name).bytes;
      const { sender, ...sent } = decodeMessage(captured);
      assert.ok(sender !== undefined);
      const ours = encodeMessage(sent, "big");
      // Byte order, type, flags, version, body length, serial.
      assert.deepEqual(captured.subarray(0, 12), ours.subarray(0, 12), name);
      const ourFields = uint32(ours, 12);
      assert.deepEqual(captured.subarray(16, 16 + ourFields), ours.subarray(16, 16 + ourFields));
      const padding = (8 - (ourFields % 8)) % 8;
      const senderLength = utf8(sender).length;
      assert.deepEqual(
        captured.subarray(16 + ourFields, 16 + uint32(captured, 12)),
        concat(
          new Uint8Array(padding),
          new Uint8Array([7, 1, 0x73, 0, 0, 0, 0, senderLength]),
          utf8(sender),
          new Uint8Array([0]),
        ),
        name,
      );
      assert.deepEqual(bodyOf(captured), bodyOf(ours), name);
    }
  });

  test("every captured message re-encodes to the same body bytes and decodes back to itself", () => {
    for (const fixture of wireFixtures()) {
      const message = decodeMessage(fixture.bytes);
      const again = encodeMessage(message, fixture.endianness);
      assert.equal(again[0], fixture.bytes[0], fixture.name);
      assert.deepEqual(bodyOf(again), bodyOf(fixture.bytes), fixture.name);
      assertSameMessage(decodeMessage(again), message, fixture.name);
    }
  });
});

// ---------------------------------------------------------------------------- alignment

describe("alignment", () => {
  // [signature, values, little-endian body]. Offsets count from the start of the message,
  // and the body starts 8-aligned, so they count from the body's start as well.
  const cases: [string, string, DbusValue[], string][] = [
    ["a struct after a byte starts 8-aligned", "y(y)", [1, [2]], "01 000000 00000000 02"],
    [
      "dict entries are 8-aligned, and the array length counts from the first entry",
      "a{yy}",
      [
        new Map([
          [1, 2],
          [3, 4],
        ]),
      ],
      "0a000000 00000000 0102 000000000000 0304",
    ],
    [
      "an empty array of structs still pads to 8 after its length",
      "a(y)y",
      [[], 9],
      "00000000 00000000 09",
    ],
    ["an empty dict pads the same", "a{sv}", [new Map()], "00000000 00000000"],
    ["an empty array of uint64 pads the same", "at", [[]], "00000000 00000000"],
    ["no padding when the length already ends 8-aligned", "ua(y)", [7, []], "07000000 00000000"],
    ["an empty ay is its length alone", "ayy", [new Uint8Array(0), 5], "00000000 05"],
    ["an empty ay before a string", "ays", [new Uint8Array(0), "a"], "00000000 01000000 6100"],
    ["a uint64 after a byte", "yt", [1, 2n], "01 00000000000000 0200000000000000"],
    ["an int16 after a byte", "yn", [1, 2], "01 00 0200"],
    [
      "a variant's value aligns to its own type",
      "yv",
      [1, variant("t", 5n)],
      "01 017400 00000000 0500000000000000",
    ],
    ["a signature is not aligned", "yg", [1, "s"], "01 017300"],
  ];

  for (const [behaviour, signature, values, body] of cases) {
    test(`${behaviour} (${signature})`, () => {
      assert.deepEqual(encodeBody(signature, values, "little"), hex(body));
      assert.deepStrictEqual(ordered(decodeBody(signature, hex(body), "little")), ordered(values));
    });
  }

  test("gnome-keyring pads its empty dict the same way", () => {
    assert.deepEqual(
      bodyOf(wireFixture("empty-get-secrets-reply").bytes),
      hex("00000000 00000000"),
    );
  });

  test("non-zero padding is refused", () => {
    assert.throws(() => decodeBody("y(y)", hex("01 000000 00000100 02"), "little"), WireError);
    assert.throws(() => decodeBody("a(y)y", hex("00000000 07000000 09"), "little"), WireError);
  });

  test("an empty array of structs without its padding is refused", () => {
    assert.throws(() => decodeBody("a(y)y", hex("00000000 09"), "little"), WireError);
  });
});

// ---------------------------------------------------------------------------- basic types

describe("basic types in both byte orders", () => {
  // [signature, value, little-endian body, big-endian body]
  const cases: [string, DbusValue, string, string][] = [
    ["y", 0xab, "ab", "ab"],
    ["y", 0, "00", "00"],
    ["b", true, "01000000", "00000001"],
    ["b", false, "00000000", "00000000"],
    ["n", -2, "feff", "fffe"],
    ["n", -32768, "0080", "8000"],
    ["n", 32767, "ff7f", "7fff"],
    ["q", 0x1234, "3412", "1234"],
    ["q", 65535, "ffff", "ffff"],
    ["i", -2, "feffffff", "fffffffe"],
    ["i", 0x01020304, "04030201", "01020304"],
    ["i", -2147483648, "00000080", "80000000"],
    ["u", 0x01020304, "04030201", "01020304"],
    ["u", 4294967295, "ffffffff", "ffffffff"],
    ["h", 3, "03000000", "00000003"],
    ["x", 0x0102030405060708n, "0807060504030201", "0102030405060708"],
    ["x", -2n, "feffffffffffffff", "fffffffffffffffe"],
    ["x", -(2n ** 63n), "0000000000000080", "8000000000000000"],
    ["t", 0x0102030405060708n, "0807060504030201", "0102030405060708"],
    ["t", 2n ** 64n - 1n, "ffffffffffffffff", "ffffffffffffffff"],
    ["d", 1, "000000000000f03f", "3ff0000000000000"],
    ["d", -0, "0000000000000080", "8000000000000000"],
    ["d", -1.5, "000000000000f8bf", "bff8000000000000"],
    ["d", Infinity, "000000000000f07f", "7ff0000000000000"],
    ["d", NaN, "000000000000f87f", "7ff8000000000000"],
    ["s", "", "00000000 00", "00000000 00"],
    ["s", "ab", "02000000 616200", "00000002 616200"],
    ["s", "\u00e9\u2713", "05000000 c3a9e29c93 00", "00000005 c3a9e29c93 00"],
    ["o", "/", "01000000 2f00", "00000001 2f00"],
    [
      "o",
      "/org/example/a_1",
      "10000000 2f6f72672f6578616d706c652f615f31 00",
      "00000010 2f6f72672f6578616d706c652f615f31 00",
    ],
    ["g", "", "0000", "0000"],
    ["g", "a{sv}", "05 617b73767d 00", "05 617b73767d 00"],
  ];

  const show = (value: DbusValue) => {
    if (typeof value === "bigint") return `${value}n`;
    if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
    return JSON.stringify(value);
  };
  for (const [signature, value, little, big] of cases) {
    test(`${signature} ${show(value)}`, () => {
      for (const [endianness, body] of [
        ["little", little],
        ["big", big],
      ] as const) {
        assert.deepEqual(encodeBody(signature, [value], endianness), hex(body), endianness);
        assert.deepStrictEqual(decodeBody(signature, hex(body), endianness), [value], endianness);
        const message = encodeMessage(
          {
            type: 4,
            serial: 7,
            path: "/a",
            interface: "a.b",
            member: "C",
            signature,
            body: [value],
          },
          endianness,
        );
        assert.deepStrictEqual(decodeMessage(message).body, [value], endianness);
      }
    });
  }

  test("the same message in both byte orders differs only in how its numbers are laid out", () => {
    const message = {
      type: 1,
      serial: 0x01020304,
      path: "/org/example",
      member: "Ping",
      signature: "u",
      body: [0x0a0b0c0d],
    } as const;
    const little = encodeMessage(message, "little");
    const big = encodeMessage(message, "big");
    assert.equal(little[0], 0x6c);
    assert.equal(big[0], 0x42);
    assert.deepEqual(little.subarray(8, 12), hex("04030201"));
    assert.deepEqual(big.subarray(8, 12), hex("01020304"));
    assert.deepEqual(bodyOf(big), hex("0a0b0c0d"));
    const { flags: _flags, ...fromLittle } = decodeMessage(little);
    const { flags: _flagsToo, ...fromBig } = decodeMessage(big);
    assert.deepStrictEqual(fromLittle, fromBig);
  });
});

// ---------------------------------------------------------------------------- the stream

describe("MessageReader", () => {
  const fixtures = wireFixtures();
  const stream = concat(...fixtures.map(({ bytes }) => bytes));
  const expected = fixtures.map(({ bytes }) => decodeMessage(bytes));
  const ends = fixtures.reduce<number[]>(
    (sum, { bytes }) => [...sum, (sum.at(-1) ?? 0) + bytes.length],
    [],
  );

  test("every captured message, from one push", () => {
    const messages = new MessageReader().push(stream);
    assert.equal(messages.length, expected.length);
    messages.forEach((message, index) => assertSameMessage(message, expected[index]!));
  });

  test("split at every byte boundary, each message arrives with its last byte", () => {
    for (let split = 0; split <= stream.length; split++) {
      const reader = new MessageReader();
      const first = reader.push(stream.slice(0, split));
      const second = reader.push(stream.slice(split));
      const whole = ends.filter((end) => end <= split).length;
      assert.equal(first.length, whole, `split at ${split}`);
      assert.equal(second.length, expected.length - whole, `split at ${split}`);
      // The quick comparison first (Maps unordered; the test above checks their order).
      const messages = [...first, ...second];
      if (!isDeepStrictEqual(messages, expected)) {
        messages.forEach((message, index) =>
          assertSameMessage(message, expected[index]!, `split at ${split}`),
        );
      }
    }
  });

  test("one byte at a time", () => {
    const reader = new MessageReader();
    const messages: Message[] = [];
    for (let at = 0; at < stream.length; at++) {
      const got = reader.push(stream.slice(at, at + 1));
      if (got.length > 0) assert.ok(ends.includes(at + 1), `a message ended at ${at + 1}`);
      messages.push(...got);
    }
    assert.equal(messages.length, expected.length);
    messages.forEach((message, index) => assertSameMessage(message, expected[index]!));
  });

  test("the bytes kept for the next push are the reader's own, not the caller's buffer", () => {
    const bytes = wireFixture("read-alias-reply").bytes;
    const chunk = bytes.slice(0, 50);
    const reader = new MessageReader();
    assert.deepEqual(reader.push(chunk), []);
    chunk.fill(0xff); // a socket layer that reuses its read buffer
    const messages = (() => {
      try {
        return reader.push(bytes.slice(50));
      } catch (error) {
        assert.fail(`the kept bytes changed with the caller's buffer: ${String(error)}`);
      }
    })();
    assert.equal(messages.length, 1);
    assertSameMessage(messages[0]!, EXPECTED["read-alias-reply"]!);
  });

  test("ay values from socket Buffers are plain copies that do not share the socket's memory", () => {
    // Node's and Bun's sockets hand over Buffers; Buffer's slice() is subarray().
    const chunk = Buffer.from(wireFixture("get-secrets-reply").bytes);
    const [message] = new MessageReader().push(chunk);
    const [secrets] = message!.body as [Map<string, DbusValue[]>];
    const iv = secrets.get(ITEM)![1] as Uint8Array;
    chunk.fill(0);
    assert.ok(!Buffer.isBuffer(iv), "the IV is a view of the pushed Buffer");
    assert.deepStrictEqual(iv, hex("88772b3fdd350c31fac07e0fd40f6ec8"));
  });
});

// ---------------------------------------------------------------------------- refusals

describe("parseSignature", () => {
  const accepted: [string, number][] = [
    ["", 0],
    ["s", 1],
    ["a{sv}", 1],
    ["a{o(oayays)}", 1],
    ["sa{sv}as", 3],
    ["a{sv}(oayays)b", 3],
    ["ybnqiuxtdhsogv", 14],
    ["a{ya{sv}}", 1],
    [`${"a".repeat(32)}y`, 1],
    [`${"(".repeat(32)}y${")".repeat(32)}`, 1],
    ["y".repeat(255), 255],
  ];
  for (const [signature, count] of accepted) {
    test(`accepts ${signature.length > 40 ? `${signature.slice(0, 20)}... (${signature.length})` : JSON.stringify(signature)}`, () => {
      assert.equal(parseSignature(signature).length, count);
    });
  }

  const refused: [string, string][] = [
    ["an unclosed struct", "(y"],
    ["an unopened struct", "y)"],
    ["a lone parenthesis", "("],
    ["an empty struct", "()"],
    ["an empty struct in an array", "a()"],
    ["an array of nothing", "a"],
    ["an array of an array of nothing", "aa"],
    ["an unclosed dict", "a{sv"],
    ["a dict entry with one type", "a{s}"],
    ["a dict entry with no types", "a{}"],
    ["a dict entry with three types", "a{svs}"],
    ["a variant as dict key", "a{vs}"],
    ["a struct as dict key", "a{(y)s}"],
    ["an array as dict key", "a{ays}"],
    ["a dict entry outside an array", "{sv}"],
    ["a stray closing brace", "a{sv}}"],
    ["an unknown type code", "z"],
    ["a struct holding an incomplete array", "(a)"],
    ["a non-ASCII character", "\u00fc"],
    ["more than 255 characters", "y".repeat(256)],
    ["33 nested arrays", `${"a".repeat(33)}y`],
    ["33 nested structs", `${"(".repeat(33)}y${")".repeat(33)}`],
    ["33 nested dicts", `${"a{s".repeat(33)}y${"}".repeat(33)}`],
  ];
  for (const [what, signature] of refused) {
    test(`refuses ${what}`, () => {
      assert.throws(() => parseSignature(signature), WireError);
    });
  }
});

describe("decodeMessage refuses malformed messages", () => {
  const hello = () => wireFixture("hello-reply").bytes;

  test("bytes after the end, or too few", () => {
    assert.throws(() => decodeMessage(concat(hello(), new Uint8Array([0]))), WireError);
    assert.throws(() => decodeMessage(hello().subarray(0, 88)), WireError);
    assert.throws(() => decodeMessage(hello().subarray(0, 15)), WireError);
  });

  test("serial 0, an unknown type, an unknown version", () => {
    for (const [offset, value] of [
      [8, 0],
      [1, 0],
      [1, 5],
      [3, 2],
    ]) {
      const bytes = hello();
      if (offset === 8) bytes.fill(0, 8, 12);
      else bytes[offset!] = value!;
      assert.throws(() => decodeMessage(bytes), WireError, `byte ${offset} = ${value}`);
    }
  });

  test("a header field of the wrong type", () => {
    const message = (destination: "s" | "o") =>
      rawMessage({
        endianness: "little",
        type: 2,
        serial: 1,
        fields: [
          [5, "u", 1],
          [6, destination, "/x"],
        ],
        body: new Uint8Array(0),
      });
    assert.equal(decodeMessage(message("s")).destination, "/x");
    assert.throws(() => decodeMessage(message("o")), WireError);
  });

  test("unknown header fields are ignored", () => {
    const message = rawMessage({
      endianness: "big",
      type: 2,
      serial: 3,
      fields: [
        [5, "u", 2],
        [200, "s", "from a future specification"],
        [8, "g", "u"],
      ],
      body: hex("0000002a"),
    });
    assertSameMessage(decodeMessage(message), {
      type: 2,
      flags: 0,
      serial: 3,
      replySerial: 2,
      signature: "u",
      body: [42],
    });
  });

  test("a message without the fields its type requires", () => {
    const missing: OutgoingWithoutSerial[] = [
      { type: 1, member: "Ping" },
      { type: 1, path: "/a" },
      { type: 2 },
      { type: 3, replySerial: 1 },
      { type: 3, errorName: "a.b.Failed" },
      { type: 4, path: "/a", member: "Changed" },
    ];
    for (const fields of missing) {
      const bytes = encodeMessage({ ...fields, serial: 1 });
      assert.throws(() => decodeMessage(bytes), WireError, JSON.stringify(fields));
    }
  });

  test("a boolean other than 0 or 1", () => {
    assert.throws(() => decodeBody("b", hex("02000000"), "little"), WireError);
  });

  test("a string without its nul, with a nul inside, or not UTF-8", () => {
    assert.throws(() => decodeBody("sy", hex("02000000 6162 01 00"), "little"), WireError);
    assert.throws(() => decodeBody("s", hex("03000000 610062 00"), "little"), WireError);
    assert.throws(() => decodeBody("s", hex("02000000 c328 00"), "little"), WireError);
    assert.throws(() => decodeBody("g", hex("01 79 01"), "little"), WireError);
  });

  test("an array whose elements overrun its length", () => {
    assert.throws(() => decodeBody("auu", hex("02000000 01000000 02000000"), "little"), WireError);
  });

  test("a body longer than its signature", () => {
    assert.throws(() => decodeBody("y", hex("01 02"), "little"), WireError);
  });
});

type OutgoingWithoutSerial = Omit<Parameters<typeof encodeMessage>[0], "serial">;

describe("encodeMessage refuses values that do not fit their type", () => {
  // WireError is "a value that does not fit its signature"; these are encoded silently:
  // numbers wrap, and strings come out as bytes that dbus-daemon (and decodeMessage) refuse.
  const cases: [string, DbusValue][] = [
    ["y", 256],
    ["y", -1],
    ["n", 40000],
    ["q", -1],
    ["i", 2 ** 31],
    ["u", -1],
    ["u", 1.5],
    ["u", NaN],
    ["x", 2n ** 63n],
    ["t", -1n],
    ["s", "a\0b"],
    ["o", "/a\0"],
    ["g", "y".repeat(256)],
    ["g", "a{"],
  ];
  const show = (value: DbusValue) =>
    typeof value === "bigint" ? `${value}n` : JSON.stringify(value).slice(0, 20);
  test("out-of-range numbers, nul bytes in strings, bad signatures", () => {
    const accepted = cases.filter(([signature, value]) => {
      try {
        encodeMessage({ type: 2, serial: 1, replySerial: 1, signature, body: [value] });
        return true;
      } catch (error) {
        if (!(error instanceof WireError)) throw error;
        return false;
      }
    });
    assert.deepEqual(
      accepted.map(([signature, value]) => `${signature} ${show(value)}`),
      [],
      "encoded without complaint",
    );
  });
});

describe("messageLength", () => {
  test("needs the first 16 bytes, then knows the whole length", () => {
    const bytes = wireFixture("big-endian-signal").bytes;
    assert.equal(messageLength(bytes.subarray(0, 15)), undefined);
    assert.equal(messageLength(bytes.subarray(0, 16)), bytes.length);
  });

  test("refuses a message over the limit from its first 16 bytes", () => {
    const prefix = (bodyLength: number) => {
      const bytes = wireFixture("delete-reply").bytes.slice(0, 16);
      new DataView(bytes.buffer).setUint32(4, bodyLength, true);
      return bytes;
    };
    const header = 16 + 48; // the fields' 45 bytes, padded
    assert.equal(messageLength(prefix(MAX_MESSAGE_BYTES - header)), MAX_MESSAGE_BYTES);
    assert.throws(() => messageLength(prefix(MAX_MESSAGE_BYTES - header + 1)), WireError);
    assert.throws(() => messageLength(prefix(0xffffffff)), WireError);
  });
});

describe("MessageReader with a filter: messages that are not wanted", () => {
  const signal = (body: Uint8Array, serial = 1) =>
    encodeMessage({
      type: MessageType.Signal,
      serial,
      sender: ":1.66",
      path: "/org/example/Spam",
      interface: "org.example.Spam",
      member: "Flood",
      signature: "ay",
      body: [body],
    });
  const reply = encodeMessage({
    type: MessageType.MethodReturn,
    serial: 2,
    replySerial: 7,
    signature: "s",
    body: ["ours"],
  });
  const onlyReplies = (header: { type: number }) => header.type === MessageType.MethodReturn;

  test("a signal larger than any reply we accept is skipped as it passes, unread and unkept", () => {
    const big = signal(new Uint8Array(MAX_MESSAGE_BYTES + 1024));
    const reader = new MessageReader(onlyReplies);
    const got: Message[] = [];
    // In socket-sized pieces: the reader keeps none of the skipped bytes between them.
    for (let at = 0; at < big.length; at += 65_536) {
      got.push(...reader.push(big.slice(at, at + 65_536)));
      assert.ok(
        (reader as unknown as { buffered: number }).buffered < 65_536,
        `kept bytes at ${at}`,
      );
    }
    got.push(...reader.push(reply));
    assert.deepEqual(
      got.map((message) => message.body),
      [["ours"]],
    );
  });

  test("a wanted message over the limit is refused once its header is read", () => {
    const big = signal(new Uint8Array(MAX_MESSAGE_BYTES + 1024));
    assert.throws(() => new MessageReader().push(big.slice(0, 200)), /over the \d+-byte limit/);
  });

  test("a wanted signal whose body does not decode is dropped; the reply after it is read", () => {
    const bad = new Uint8Array(signal(new Uint8Array(8)));
    // The ay's length claims more than the body holds.
    new DataView(bad.buffer).setUint32(bad.length - 12, 1000, true);
    const got = new MessageReader().push(concat(bad, reply));
    assert.deepEqual(
      got.map((message) => message.body),
      [["ours"]],
    );
  });
});
