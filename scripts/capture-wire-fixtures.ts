// `npx tsx scripts/capture-wire-fixtures.ts`: records the D-Bus messages that
// test/unit/stores/secret-service/wire.test.ts decodes, as real daemons put them on the wire.
//
// It starts a private bus with a real, unlocked gnome-keyring, watches it with two monitors,
// and drives the Secret Service calls our client depends on:
//   - `dbus-monitor --binary` writes every message it is sent, as marshalled bytes, one after
//     another with no framing (`man dbus-monitor`; the handshake is not included). The
//     stream is cut by the 16-byte prefix every message starts with, so each fixture is the
//     exact bytes the daemon sent the monitor: header fields in the sender's byte order, plus
//     the sender field the daemon adds.
//   - `dbus-monitor --monitor` prints the same messages as libdbus decodes them. Its lines go
//     into each fixture as `monitorText`: the expected values in the tests can be checked
//     against a decoder that is not ours.
// The traffic comes from `secret-tool` and `dbus-send` (little-endian, as libsecret, GDBus and
// libdbus write it here) and from a raw socket client in this script that speaks big-endian,
// built with our own encodeMessage (dbus-daemon validates every byte of it before forwarding).
// After each step the raw client emits a marker signal and waits for both monitors to show
// it, so every message is attributed to the step that caused it without any sleep.
//
// The fixtures hold random bytes (Diffie-Hellman public values, IVs, ciphertext) and unique
// names that change with every capture: after re-capturing, update the literals in
// wire.test.ts to match (the monitorText of each fixture shows the values).

import { spawn, type ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import * as prettier from "prettier";
import { parseBusAddress } from "../src/stores/secret-service/bus-address.ts";
import {
  decodeMessage,
  encodeMessage,
  MessageReader,
  MessageType,
  type DbusValue,
  type Message,
  type OutgoingMessage,
} from "../src/stores/secret-service/wire.ts";
import { startKeyringSession, stop, type KeyringSession } from "../test/support/keyring-session.ts";

const execFileAsync = promisify(execFile);

const OUTPUT = path.join(
  import.meta.dirname,
  "../test/unit/stores/secret-service/fixtures/wire-fixtures.json",
);

const SECRETS = "org.freedesktop.secrets";
const SERVICE_PATH = "/org/freedesktop/secrets";
const LOGIN = "/org/freedesktop/secrets/collection/login";
const FIXTURE_PATH = "/org/example/WireFixture";
const FIXTURE_INTERFACE = "org.example.WireFixture";
/** The one item the script stores; secret-tool puts the first item of "login" there. */
const ITEM = `${LOGIN}/1`;
const ATTRIBUTES = ["service", "example.test", "user", "alice"];
const SECRET = "test-secret";

// ---------------------------------------------------------------------------- the stream

/**
 * Cuts a `dbus-monitor --binary` stream into messages by each one's own prefix (D-Bus
 * specification, "Message Format"): body length at 4, header-field array length at 12, the
 * header padded to 8. Deliberately not our MessageReader, so the cut does not depend on the
 * code under test.
 */
function splitStream(stream: Uint8Array): { messages: Uint8Array[]; rest: Uint8Array } {
  const messages: Uint8Array[] = [];
  let offset = 0;
  while (stream.length - offset >= 16) {
    const view = new DataView(stream.buffer, stream.byteOffset + offset, 16);
    const marker = view.getUint8(0);
    if (marker !== 0x6c && marker !== 0x42) {
      throw new Error(`monitor stream is out of step at byte ${offset}`);
    }
    const little = marker === 0x6c;
    const fields = view.getUint32(12, little);
    const total = 16 + fields + ((8 - (fields % 8)) % 8) + view.getUint32(4, little);
    if (stream.length - offset < total) break;
    messages.push(stream.slice(offset, offset + total));
    offset += total;
  }
  return { messages, rest: stream.slice(offset) };
}

interface Captured {
  readonly bytes: Uint8Array;
  readonly message: Message;
  /** The step that caused it: the name in the first marker after it. */
  step: string | undefined;
}

/** `dbus-monitor --binary`: every message, decoded to find the ones we keep. */
class BinaryMonitor {
  readonly captured: Captured[] = [];
  private rest: Uint8Array = new Uint8Array(0);
  private readonly waiters = new Set<() => void>();

  readonly child: ChildProcess;

  constructor(env: Record<string, string>) {
    this.child = spawn("dbus-monitor", ["--address", env.DBUS_SESSION_BUS_ADDRESS!, "--binary"], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.child.stdout!.on("data", (chunk: Buffer) => {
      const joined = new Uint8Array(this.rest.length + chunk.length);
      joined.set(this.rest);
      joined.set(chunk, this.rest.length);
      const { messages, rest } = splitStream(joined);
      this.rest = rest;
      for (const bytes of messages) {
        const message = decodeMessage(bytes);
        if (isMarker(message)) {
          for (const earlier of this.captured) earlier.step ??= textOf(message.body[0]);
        }
        this.captured.push({ bytes, message, step: undefined });
      }
      for (const waiter of this.waiters) waiter();
    });
  }

  /** Resolves once a message matching `predicate` has been captured. */
  async waitFor(predicate: (message: Message) => boolean, what: string): Promise<void> {
    await waitUntil(
      this.waiters,
      () => this.captured.some(({ message }) => predicate(message)),
      `the binary monitor to show ${what}`,
    );
  }
}

/** `dbus-monitor --monitor`: the same messages as libdbus prints them. */
class TextMonitor {
  text = "";
  private readonly waiters = new Set<() => void>();

  readonly child: ChildProcess;

  constructor(env: Record<string, string>) {
    this.child = spawn("dbus-monitor", ["--address", env.DBUS_SESSION_BUS_ADDRESS!, "--monitor"], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.child.stdout!.on("data", (chunk: Buffer) => {
      this.text += chunk.toString("utf8");
      for (const waiter of this.waiters) waiter();
    });
  }

  async waitFor(fragment: string): Promise<void> {
    await waitUntil(
      this.waiters,
      () => this.text.includes(fragment),
      `the text monitor to print ${fragment}`,
    );
  }

  /**
   * The printed messages by a key both monitors can compute: sender, destination, and the
   * serial (errors are printed without one, so their reply serial instead). Times are cut.
   */
  blocks(): Map<string, string[]> {
    const blocks = new Map<string, string[]>();
    let current: string[] | undefined;
    for (const line of this.text.split("\n")) {
      if (/^(method call|method return|error|signal) /.test(line)) {
        const header = line.replace(/ time=\S+/, "");
        current = [header];
        const field = (name: string) => new RegExp(` ${name}=(\\S+)`).exec(header)?.[1];
        const destination = /-> destination=(\(null destination\)|\S+)/.exec(header)?.[1];
        const key = header.startsWith("error ")
          ? textKey(field("sender"), destination, `reply ${field("reply_serial")}`)
          : textKey(field("sender"), destination, field("serial"));
        if (!blocks.has(key)) blocks.set(key, current);
      } else if (current !== undefined && line.trim() !== "") {
        current.push(line.replace(/\s+$/, ""));
      }
    }
    return blocks;
  }
}

function textKey(sender?: string, destination?: string, serial?: string): string {
  return `${sender ?? "?"} ${destination ?? "?"} ${serial ?? "?"}`;
}

function keyOf(message: Message): string {
  return textKey(
    message.sender,
    message.destination ?? "(null destination)",
    message.type === MessageType.Error
      ? `reply ${String(message.replySerial)}`
      : String(message.serial),
  );
}

async function waitUntil(
  waiters: Set<() => void>,
  done: () => boolean,
  what: string,
): Promise<void> {
  if (done()) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`timed out waiting for ${what}`));
    }, 10_000);
    const check = () => {
      if (!done()) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve();
    };
    waiters.add(check);
  });
}

/** A value the script knows to be a string (a marker's name, a unique name, a path). */
function textOf(value: DbusValue | undefined): string {
  if (typeof value !== "string") throw new Error(`expected a string, got ${typeof value}`);
  return value;
}

function isMarker(message: Message): boolean {
  return (
    message.type === MessageType.Signal &&
    message.interface === FIXTURE_INTERFACE &&
    message.member === "Marker"
  );
}

// ---------------------------------------------------------------------------- raw client

/**
 * A bus client over a bare socket that writes every message big-endian: AUTH EXTERNAL by
 * hand, Hello, method calls matched to replies by serial, and signals.
 */
class BigEndianClient {
  uniqueName = "";
  private serial = 0;
  private readonly pending = new Map<number, (message: Message) => void>();
  private readonly reader = new MessageReader();
  private authText = "";
  private authenticated = false;

  private readonly socket: net.Socket;

  private constructor(socket: net.Socket) {
    this.socket = socket;
  }

  static async connect(address: string): Promise<BigEndianClient> {
    const [first] = parseBusAddress(address);
    if (first === undefined || !("path" in first)) {
      throw new Error(`no socket path in the bus address ${address}`);
    }
    const socket = net.createConnection({ path: first.path });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const client = new BigEndianClient(socket);
    socket.on("data", (chunk: Buffer) => {
      client.received(new Uint8Array(chunk));
    });
    // The handshake goes out in one write; the bus answers "DATA" and then "OK <guid>".
    socket.write("\0AUTH EXTERNAL\r\nDATA\r\nBEGIN\r\n");
    const hello = await client.call({
      destination: "org.freedesktop.DBus",
      path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus",
      member: "Hello",
    });
    client.uniqueName = textOf(hello.body[0]);
    return client;
  }

  private received(bytes: Uint8Array): void {
    let rest = bytes;
    if (!this.authenticated) {
      this.authText += Buffer.from(bytes).toString("latin1");
      const ok = /(^|\n)OK [0-9a-f]+\r\n/.exec(this.authText);
      if (ok === null) {
        if (/(^|\n)(REJECTED|ERROR)/.test(this.authText)) {
          throw new Error(`the bus refused AUTH EXTERNAL: ${this.authText}`);
        }
        return;
      }
      const end = ok.index + ok[0].length;
      rest = Buffer.from(this.authText.slice(end), "latin1");
      this.authenticated = true;
    }
    for (const message of this.reader.push(rest)) {
      const resolve =
        message.replySerial === undefined ? undefined : this.pending.get(message.replySerial);
      if (resolve === undefined) continue;
      this.pending.delete(message.replySerial!);
      resolve(message);
    }
  }

  /** Sends a method call; resolves with its reply or error reply. */
  call(message: Omit<OutgoingMessage, "serial">): Promise<Message> {
    const serial = ++this.serial;
    const reply = new Promise<Message>((resolve) => this.pending.set(serial, resolve));
    this.socket.write(encodeMessage({ ...message, serial }, "big"));
    return reply;
  }

  emit(message: Omit<OutgoingMessage, "serial" | "type">): void {
    const serial = ++this.serial;
    this.socket.write(encodeMessage({ ...message, type: MessageType.Signal, serial }, "big"));
  }

  close(): void {
    this.socket.destroy();
  }
}

// ---------------------------------------------------------------------------- the traffic

/** Runs a command in the session; resolves with stdout, or rejects with its stderr. */
function run(
  session: KeyringSession,
  command: string,
  args: string[],
  input = "",
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: session.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${stderr.trim()}`));
    });
    child.stdin.end(input);
  });
}

/** A call that must fail: resolves with the error text dbus-send printed. */
async function failingDbusSend(session: KeyringSession, args: string[]): Promise<string> {
  try {
    await run(session, "dbus-send", ["--session", "--print-reply", ...args]);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`dbus-send ${args.join(" ")} succeeded, but it was meant to fail`);
}

/** The body of the big-endian signal: every type our client reads or writes, and more. */
function everythingBody(): { signature: string; body: DbusValue[] } {
  const parts: [string, DbusValue][] = [
    ["s", "wire fixture \u2713 caf\u00e9"],
    ["o", `${FIXTURE_PATH}/item_1`],
    ["g", "a{sv}(oayays)"],
    ["y", 0xfe],
    ["n", -12345],
    ["q", 54321],
    ["i", -2147483648],
    ["u", 4294967295],
    ["x", -9007199254740993n],
    ["t", 18446744073709551615n],
    ["d", -1.5],
    ["b", true],
    ["ay", new Uint8Array([0x00, 0x01, 0x7f, 0x80, 0xff])],
    ["ay", new Uint8Array(0)],
    [
      "a{sv}",
      new Map<DbusValue, DbusValue>([
        ["Label", { signature: "s", value: "test label" }],
        ["Count", { signature: "u", value: 3 }],
        [
          "Attributes",
          {
            signature: "a{ss}",
            value: new Map([
              ["service", "example.test"],
              ["user", "alice"],
            ]),
          },
        ],
        [
          "Nested",
          {
            signature: "v",
            value: { signature: "v", value: { signature: "(yx)", value: [7, -2n] } },
          },
        ],
      ]),
    ],
    [
      "a{ss}",
      new Map([
        ["service", "example.test"],
        ["user", "alice"],
      ]),
    ],
    ["y", 1],
    [
      "(oayays)",
      [
        "/org/freedesktop/secrets/session/s1",
        new Uint8Array(Array.from({ length: 16 }, (_, index) => index)),
        new TextEncoder().encode(SECRET),
        "text/plain",
      ],
    ],
    ["ao", ["/org/example/a", "/org/example/b"]],
    ["a{sv}", new Map()],
    ["at", []],
    ["v", { signature: "ay", value: new Uint8Array([0xca, 0xfe]) }],
    ["b", false],
  ];
  return { signature: parts.map(([type]) => type).join(""), body: parts.map(([, v]) => v) };
}

interface Step {
  readonly name: string;
  /** Resolves when the step's traffic is over (what it resolves with is not used). */
  run(): Promise<unknown>;
}

function steps(session: KeyringSession, client: BigEndianClient): Step[] {
  const secretTool = (args: string[], input?: string) => run(session, "secret-tool", args, input);
  const dbusSend = (args: string[]) =>
    run(session, "dbus-send", ["--session", "--print-reply", ...args]);
  const keyring = { destination: SECRETS, path: SERVICE_PATH };
  const service = "org.freedesktop.Secret.Service";
  const expectReply = (message: Message, what: string) => {
    if (message.type !== MessageType.MethodReturn) {
      throw new Error(
        `${what} failed: ${message.errorName ?? "?"} ${JSON.stringify(message.body)}`,
      );
    }
    return message;
  };
  return [
    {
      name: "store",
      run: async () => {
        await secretTool(["store", "--label=test label", ...ATTRIBUTES], SECRET);
      },
    },
    {
      name: "lookup",
      run: async () => {
        const found = await secretTool(["lookup", ...ATTRIBUTES]);
        if (found !== SECRET) throw new Error(`secret-tool lookup found ${JSON.stringify(found)}`);
      },
    },
    {
      name: "search",
      run: () => secretTool(["search", "--all", ...ATTRIBUTES]),
    },
    {
      name: "read-alias",
      run: () =>
        dbusSend([`--dest=${SECRETS}`, SERVICE_PATH, `${service}.ReadAlias`, "string:default"]),
    },
    {
      name: "get-attributes",
      run: () =>
        dbusSend([
          `--dest=${SECRETS}`,
          ITEM,
          "org.freedesktop.DBus.Properties.Get",
          "string:org.freedesktop.Secret.Item",
          "string:Attributes",
        ]),
    },
    {
      name: "get-all",
      run: () =>
        dbusSend([
          `--dest=${SECRETS}`,
          ITEM,
          "org.freedesktop.DBus.Properties.GetAll",
          "string:org.freedesktop.Secret.Item",
        ]),
    },
    {
      // Big-endian calls to gnome-keyring, over a "plain" session: its secret has an empty IV.
      name: "big-endian-calls",
      run: async () => {
        const opened = expectReply(
          await client.call({
            ...keyring,
            interface: service,
            member: "OpenSession",
            signature: "sv",
            body: ["plain", { signature: "s", value: "" }],
          }),
          "OpenSession(plain)",
        );
        const sessionPath = textOf(opened.body[1]);
        const getSecrets = async (items: string[]) =>
          expectReply(
            await client.call({
              ...keyring,
              interface: service,
              member: "GetSecrets",
              signature: "aoo",
              body: [items, sessionPath],
            }),
            "GetSecrets",
          );
        await getSecrets([ITEM]);
        await getSecrets([]);
        expectReply(
          await client.call({
            ...keyring,
            interface: service,
            member: "SearchItems",
            signature: "a{ss}",
            body: [new Map([["service", "example.invalid"]])],
          }),
          "SearchItems",
        );
      },
    },
    {
      name: "big-endian-signal",
      run: async () => {
        client.emit({
          path: FIXTURE_PATH,
          interface: FIXTURE_INTERFACE,
          member: "Everything",
          ...everythingBody(),
        });
      },
    },
    {
      name: "errors",
      run: async () => {
        await failingDbusSend(session, [
          "--dest=org.example.NobodyOwnsThis",
          "/org/example/Nothing",
          "org.example.Nothing.Ping",
        ]);
        await failingDbusSend(session, [
          `--dest=${SECRETS}`,
          SERVICE_PATH,
          `${service}.SetAlias`,
          "string:default",
          `objpath:${SERVICE_PATH}/collection/nonexistent`,
        ]);
        await failingDbusSend(session, [
          `--dest=${SECRETS}`,
          `${SERVICE_PATH}/collection/nonexistent`,
          "org.freedesktop.DBus.Properties.Get",
          "string:org.freedesktop.Secret.Collection",
          "string:Label",
        ]);
      },
    },
    { name: "clear", run: () => secretTool(["clear", ...ATTRIBUTES]) },
  ];
}

// ---------------------------------------------------------------------------- choosing

interface Fixture {
  readonly name: string;
  readonly description: string;
  readonly answers: string | null;
  readonly signature: string;
  readonly endianness: "little" | "big";
  readonly monitorText: readonly string[] | null;
  readonly hex: readonly string[];
}

/** What to keep: which message, found how, and what to say about it. */
interface Choice {
  readonly name: string;
  readonly description: string;
  readonly step: string;
  /** For a reply: the call it answers, as interface.member. */
  readonly answers?: string;
  /** Further conditions on the call (for a reply) or on the message itself. */
  readonly where?: (message: Message) => boolean;
  /** Which of several matches; 0 by default. */
  readonly nth?: number;
}

const CHOICES: readonly Choice[] = [
  {
    name: "hello-reply",
    description: "dbus-daemon's reply to secret-tool's Hello: its unique name",
    step: "store",
    answers: "org.freedesktop.DBus.Hello",
  },
  {
    name: "name-acquired",
    description: "dbus-daemon's NameAcquired signal to secret-tool, after Hello",
    step: "store",
    where: (m) => m.type === MessageType.Signal && m.member === "NameAcquired",
  },
  {
    name: "service-get-all-reply",
    description: "gnome-keyring's reply to Properties.GetAll(Service) from secret-tool",
    step: "store",
    answers: "org.freedesktop.DBus.Properties.GetAll",
  },
  {
    name: "open-session-call",
    description:
      "secret-tool's OpenSession(dh-ietf1024-sha256-aes128-cbc-pkcs7, its public value), forwarded by dbus-daemon",
    step: "store",
    where: (m) => m.type === MessageType.MethodCall && m.member === "OpenSession",
  },
  {
    name: "open-session-reply",
    description:
      "gnome-keyring's reply to OpenSession(dh-ietf1024-...): its public value and the session",
    step: "store",
    answers: "org.freedesktop.Secret.Service.OpenSession",
  },
  {
    name: "create-item-call",
    description:
      "secret-tool's CreateItem(properties, encrypted secret, replace), forwarded by dbus-daemon",
    step: "store",
    where: (m) => m.type === MessageType.MethodCall && m.member === "CreateItem",
  },
  {
    name: "create-item-reply",
    description: "gnome-keyring's reply to CreateItem: the new item and no prompt",
    step: "store",
    answers: "org.freedesktop.Secret.Collection.CreateItem",
  },
  {
    name: "properties-changed",
    description:
      "gnome-keyring's PropertiesChanged signal for the login collection after CreateItem",
    step: "store",
    where: (m) => m.type === MessageType.Signal && m.member === "PropertiesChanged",
  },
  {
    name: "search-items-reply",
    description: "gnome-keyring's reply to SearchItems from secret-tool lookup: one unlocked item",
    step: "lookup",
    answers: "org.freedesktop.Secret.Service.SearchItems",
  },
  {
    name: "get-secrets-reply",
    description:
      "gnome-keyring's reply to GetSecrets from secret-tool lookup, in a dh-ietf1024 session",
    step: "lookup",
    answers: "org.freedesktop.Secret.Service.GetSecrets",
  },
  {
    name: "read-alias-reply",
    description: "gnome-keyring's reply to ReadAlias(default) from dbus-send",
    step: "read-alias",
    answers: "org.freedesktop.Secret.Service.ReadAlias",
  },
  {
    name: "get-attributes-reply",
    description: "gnome-keyring's reply to Properties.Get(Item, Attributes) from dbus-send",
    step: "get-attributes",
    answers: "org.freedesktop.DBus.Properties.Get",
  },
  {
    name: "item-get-all-reply",
    description: "gnome-keyring's reply to Properties.GetAll(Item) from dbus-send",
    step: "get-all",
    answers: "org.freedesktop.DBus.Properties.GetAll",
  },
  {
    name: "big-endian-open-session-call",
    description:
      "our big-endian OpenSession(plain) call as dbus-daemon forwards it to gnome-keyring",
    step: "big-endian-calls",
    where: (m) => m.type === MessageType.MethodCall && m.member === "OpenSession",
  },
  {
    name: "plain-open-session-reply",
    description:
      "gnome-keyring's reply to our big-endian OpenSession(plain): an empty string output",
    step: "big-endian-calls",
    answers: "org.freedesktop.Secret.Service.OpenSession",
  },
  {
    name: "plain-get-secrets-reply",
    description:
      "gnome-keyring's reply to our big-endian GetSecrets([item]) in a plain session: an empty IV",
    step: "big-endian-calls",
    answers: "org.freedesktop.Secret.Service.GetSecrets",
    where: (call) => Array.isArray(call.body[0]) && (call.body[0] as unknown[]).length === 1,
  },
  {
    name: "empty-get-secrets-reply",
    description: "gnome-keyring's reply to our big-endian GetSecrets([]): an empty dict",
    step: "big-endian-calls",
    answers: "org.freedesktop.Secret.Service.GetSecrets",
    where: (call) => Array.isArray(call.body[0]) && (call.body[0] as unknown[]).length === 0,
  },
  {
    name: "empty-search-items-reply",
    description: "gnome-keyring's reply to our big-endian SearchItems that matches nothing",
    step: "big-endian-calls",
    answers: "org.freedesktop.Secret.Service.SearchItems",
  },
  {
    name: "big-endian-signal",
    description: "our big-endian signal of every type, as dbus-daemon forwards it (sender added)",
    step: "big-endian-signal",
    where: (m) => m.type === MessageType.Signal && m.member === "Everything",
  },
  {
    name: "service-unknown-error",
    description: "dbus-daemon's error reply to a call to a name nobody owns",
    step: "errors",
    where: (m) => m.errorName === "org.freedesktop.DBus.Error.ServiceUnknown",
  },
  {
    name: "no-such-object-error",
    description:
      "gnome-keyring's error reply to SetAlias(default, a collection that does not exist)",
    step: "errors",
    where: (m) => m.errorName === "org.freedesktop.Secret.Error.NoSuchObject",
  },
  {
    name: "unknown-object-error",
    description:
      "gnome-keyring's (GDBus's) error reply to Properties.Get on an object that does not exist",
    step: "errors",
    where: (m) => m.errorName === "org.freedesktop.DBus.Error.UnknownMethod",
  },
  {
    name: "delete-reply",
    description: "gnome-keyring's reply to Item.Delete from secret-tool clear: no prompt",
    step: "clear",
    answers: "org.freedesktop.Secret.Item.Delete",
  },
];

function choose(captured: readonly Captured[], choice: Choice): Captured {
  const inStep = captured.filter(({ step }) => step === choice.step);
  let matches: Captured[];
  if (choice.answers !== undefined) {
    const calls = inStep.filter(
      ({ message: m }) =>
        m.type === MessageType.MethodCall &&
        `${m.interface}.${m.member}` === choice.answers &&
        (choice.where?.(m) ?? true),
    );
    matches = calls.flatMap(({ message: call }) =>
      inStep.filter(
        ({ message: m }) =>
          (m.type === MessageType.MethodReturn || m.type === MessageType.Error) &&
          m.replySerial === call.serial &&
          m.destination === call.sender,
      ),
    );
  } else {
    matches = inStep.filter(({ message }) => choice.where?.(message) ?? true);
  }
  const found = matches[choice.nth ?? 0];
  if (found === undefined) throw new Error(`no message for the fixture ${choice.name}`);
  return found;
}

function hexLines(bytes: Uint8Array): string[] {
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += 32) {
    lines.push(Buffer.from(bytes.subarray(at, at + 32)).toString("hex"));
  }
  return lines;
}

async function version(command: string): Promise<string> {
  const { stdout } = await execFileAsync(command, ["--version"]);
  return stdout.split("\n")[0]!.trim();
}

// ---------------------------------------------------------------------------- main

const session = await startKeyringSession();
const children: ChildProcess[] = [];
let client: BigEndianClient | undefined;
try {
  // The text monitor first, so that it prints the binary monitor's own messages too.
  const text = new TextMonitor(session.env);
  children.push(text.child);
  await text.waitFor("member=NameLost");
  const binary = new BinaryMonitor(session.env);
  children.push(binary.child);
  // A monitor loses its unique name when it becomes one: from then on it sees everything.
  await binary.waitFor((m) => m.member === "NameLost", "its own NameLost");

  const bigEndian = await BigEndianClient.connect(session.env.DBUS_SESSION_BUS_ADDRESS!);
  client = bigEndian;
  const mark = async (name: string) => {
    bigEndian.emit({
      path: FIXTURE_PATH,
      interface: FIXTURE_INTERFACE,
      member: "Marker",
      signature: "s",
      body: [name],
    });
    await binary.waitFor((m) => isMarker(m) && m.body[0] === name, `marker ${name}`);
    await text.waitFor(`string "${name}"`);
  };
  // The monitors' and this client's own Hello and NameAcquired belong to no step.
  await mark("connect");
  for (const step of steps(session, bigEndian)) {
    await step.run();
    await mark(step.name);
  }

  const blocks = text.blocks();
  const fixtures: Fixture[] = CHOICES.map((choice) => {
    const { bytes, message } = choose(binary.captured, choice);
    return {
      name: choice.name,
      description: choice.description,
      answers: choice.answers ?? null,
      signature: message.signature,
      endianness: bytes[0] === 0x42 ? "big" : "little",
      monitorText: blocks.get(keyOf(message)) ?? null,
      hex: hexLines(bytes),
    };
  });

  const document = {
    about:
      'D-Bus messages as dbus-daemon delivered them to `dbus-monitor --binary`, captured by scripts/capture-wire-fixtures.ts; monitorText is how `dbus-monitor --monitor` (libdbus) printed the same message. Test data only: the secret is "test-secret", the keys were thrown away.',
    capturedWith: {
      "dbus-daemon": await version("dbus-daemon"),
      "gnome-keyring-daemon": await version("gnome-keyring-daemon"),
    },
    messages: fixtures,
  };
  mkdirSync(path.dirname(OUTPUT), { recursive: true });
  const options = (await prettier.resolveConfig(OUTPUT)) ?? {};
  const json = await prettier.format(JSON.stringify(document), { ...options, parser: "json" });
  writeFileSync(OUTPUT, json);
  for (const fixture of fixtures) {
    const size = fixture.hex.join("").length / 2;
    process.stdout.write(
      `${fixture.name.padEnd(30)} ${fixture.endianness.padEnd(6)} ${String(size).padStart(5)} bytes  ${fixture.signature}${fixture.monitorText === null ? "  (no monitor text)" : ""}\n`,
    );
  }
  process.stdout.write(`wrote ${path.relative(process.cwd(), OUTPUT)}\n`);
} finally {
  client?.close();
  for (const child of children.reverse()) await stop(child);
  await session.close();
}
