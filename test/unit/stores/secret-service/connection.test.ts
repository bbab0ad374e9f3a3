/**
 * BusConnection against a fake bus of our own: a `node:net` server on a Unix socket in a
 * temp dir that speaks just enough of the protocol, as each test scripts it. Its bytes are
 * cut and decoded with our MessageReader and written with encodeMessage, which
 * wire.test.ts checks against bytes a real daemon produced.
 */
import { deadlineIn } from "../../../../src/system/deadline.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, test, type TestContext } from "node:test";
import {
  BusConnection,
  BusUnavailable,
  DbusErrorReply,
  DeadlineExpired,
  type MethodCall,
} from "../../../../src/stores/secret-service/connection.ts";
import {
  encodeMessage,
  MessageReader,
  MessageType,
  WireError,
  type DbusValue,
  type Message,
  type OutgoingMessage,
} from "../../../../src/stores/secret-service/wire.ts";
import { PATIENCE_MS, PROMPT_MS } from "../../../support/timing.ts";

const GUID = "0123456789abcdef0123456789abcdef";
/** What dbus-daemon answers to the client's AUTH EXTERNAL, DATA: then BEGIN needs no answer. */
const AUTH_ANSWER = `DATA\r\nOK ${GUID}\r\n`;
const CLIENT_AUTH = "\0AUTH EXTERNAL\r\nDATA\r\nBEGIN\r\n";
const BUS_NAME = "org.freedesktop.DBus";
const CLIENT_NAME = ":1.7";

const ECHO: MethodCall = {
  destination: "org.example.Test",
  path: "/org/example/Test",
  interface: "org.example.Test",
  member: "Echo",
  signature: "s",
  body: ["hello"],
};
const NEVER: MethodCall = { ...ECHO, member: "Never", signature: "", body: [] };

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1");
const bytesOf = (part: Uint8Array | string) =>
  typeof part === "string" ? new Uint8Array(Buffer.from(part, "latin1")) : part;

function join(parts: readonly (Uint8Array | string)[]): Uint8Array {
  const all = parts.map(bytesOf);
  const joined = new Uint8Array(all.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of all) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

/** A copy of `bytes` with the byte at `index` set to `value`. */
function patched(bytes: Uint8Array, index: number, value: number): Uint8Array {
  const copy = new Uint8Array(bytes);
  copy[index] = value;
  return copy;
}

/** Two turns of the event loop: a read of what was written before has happened in between. */
async function nextTurns(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface Script {
  /** Written when the client's first bytes arrive; null: nothing (the test answers itself). */
  readonly authAnswer?: Uint8Array | string | null;
  /** Called for each message the client sends after BEGIN; by default Hello is answered. */
  readonly onMessage?: (message: Message, peer: Peer) => void;
}

/** One client connection, as the fake bus sees it. */
class Peer {
  /** Every chunk read from the client, as the data events gave them. */
  readonly chunks: Uint8Array[] = [];
  /** The client's messages after BEGIN, decoded. */
  readonly messages: Message[] = [];
  /** The authentication text the client sent, up to and including BEGIN. */
  authText = "";
  bytesSent = 0;
  /** Resolves when the client's side of the connection is gone. */
  readonly closed: Promise<void>;

  readonly socket: net.Socket;
  private readonly script: Script;
  private serial = 100;
  private authenticated = false;
  private readonly reader = new MessageReader();
  private readonly waiters: (() => void)[] = [];

  constructor(socket: net.Socket, script: Script) {
    this.socket = socket;
    this.script = script;
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => this.received(new Uint8Array(chunk)));
  }

  /** Writes `parts` in one write; resolves once the kernel has them. */
  send(...parts: (Uint8Array | string)[]): Promise<void> {
    const bytes = join(parts);
    this.bytesSent += bytes.length;
    return new Promise((resolve) => {
      if (this.socket.destroyed) resolve();
      else this.socket.write(bytes, () => resolve());
    });
  }

  /** Writes `bytes` in pieces cut at `cuts`, each read by the client before the next is sent. */
  async sendInPieces(bytes: Uint8Array, cuts: readonly number[]): Promise<void> {
    let start = 0;
    for (const cut of [...cuts, bytes.length]) {
      await this.send(bytes.subarray(start, cut));
      await nextTurns();
      start = cut;
    }
  }

  methodReturn(to: Message, signature = "", body: readonly DbusValue[] = []): Uint8Array {
    return this.message({
      type: MessageType.MethodReturn,
      replySerial: to.serial,
      sender: to.destination ?? BUS_NAME,
      signature,
      body,
    });
  }

  errorReply(to: Message, errorName: string, text?: string): Uint8Array {
    return this.message({
      type: MessageType.Error,
      replySerial: to.serial,
      sender: to.destination ?? BUS_NAME,
      errorName,
      ...(text === undefined ? {} : { signature: "s", body: [text] }),
    });
  }

  signal(fields: Omit<OutgoingMessage, "serial" | "type">): Uint8Array {
    return this.message({ type: MessageType.Signal, ...fields });
  }

  /** Any message from the bus's side, with the next serial and the client as destination. */
  message(fields: Omit<OutgoingMessage, "serial">): Uint8Array {
    return encodeMessage({ destination: CLIENT_NAME, ...fields, serial: ++this.serial });
  }

  /** Resolves once the client has sent `count` messages after BEGIN. */
  async whenMessages(count: number): Promise<Message[]> {
    while (this.messages.length < count) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return this.messages;
  }

  private received(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    let rest = chunk;
    if (!this.authenticated) {
      if (this.chunks.length === 1) {
        const answer = this.script.authAnswer === undefined ? AUTH_ANSWER : this.script.authAnswer;
        if (answer !== null) void this.send(answer);
      }
      this.authText += latin1(chunk);
      const begin = this.authText.indexOf("BEGIN\r\n");
      if (begin < 0) return;
      const after = begin + "BEGIN\r\n".length;
      rest = bytesOf(this.authText.slice(after));
      this.authText = this.authText.slice(0, after);
      this.authenticated = true;
    }
    for (const message of this.reader.push(rest)) {
      this.messages.push(message);
      for (const wake of this.waiters.splice(0)) wake();
      (this.script.onMessage ?? answerHello)(message, this);
    }
  }
}

/** Answers Hello as dbus-daemon does (our unique name); true when `message` was Hello. */
function answerHello(message: Message, peer: Peer): boolean {
  if (message.member !== "Hello") return false;
  void peer.send(peer.methodReturn(message, "s", [CLIENT_NAME]));
  return true;
}

interface FakeBus {
  readonly dir: string;
  readonly path: string;
  /** The connections accepted so far. */
  readonly peers: Peer[];
  /** The `index`th connection, once accepted. */
  peer(index?: number): Promise<Peer>;
}

async function startFakeBus(t: TestContext, script: Script = {}): Promise<FakeBus> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-fake-bus-"));
  const socketPath = path.join(dir, "bus");
  const peers: Peer[] = [];
  const waiters: (() => void)[] = [];
  const server = net.createServer((socket) => {
    peers.push(new Peer(socket, script));
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, resolve);
  });
  t.after(async () => {
    for (const peer of peers) peer.socket.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    path: socketPath,
    peers,
    async peer(index = 0) {
      while (peers.length <= index) await new Promise<void>((resolve) => waiters.push(resolve));
      return peers[index]!;
    },
  };
}

// The default deadline is far beyond PROMPT_MS, so that a wait for it shows.
async function open(t: TestContext, bus: FakeBus, deadlineMs = 60_000): Promise<BusConnection> {
  const connection = await BusConnection.open({ path: bus.path }, deadlineIn(deadlineMs / 1000));
  t.after(() => connection.close());
  return connection;
}

/** Answers Hello, and Echo with its own argument. */
function answerEcho(message: Message, peer: Peer): void {
  if (answerHello(message, peer)) return;
  if (message.member === "Echo") void peer.send(peer.methodReturn(message, "s", message.body));
}

/** How long `promise` took to settle, in ms, and how. */
async function timed<T>(promise: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = performance.now();
  try {
    const value = await promise;
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

describe("authentication and the first write", () => {
  test("AUTH, Hello and the caller's first call leave in one write, before any answer", async (t) => {
    const bus = await startFakeBus(t, { authAnswer: null, onMessage: () => undefined });
    // Chunks on a Unix stream socket can hold several writes: count the client's writes too.
    const clientSockets = new Set<net.Socket>();
    const clientWrites: unknown[] = [];
    type Method = (this: net.Socket, ...args: unknown[]) => unknown;
    const connect = Reflect.get(net.Socket.prototype, "connect") as Method;
    const write = Reflect.get(net.Socket.prototype, "write") as Method;
    t.mock.method(net.Socket.prototype, "connect", function (this: net.Socket, ...args: unknown[]) {
      // net.createConnection passes its normalized [options, listener] as one argument.
      const [first] = args;
      const options = (Array.isArray(first) ? first[0] : first) as { path?: unknown } | undefined;
      if (options?.path === bus.path) clientSockets.add(this);
      return Reflect.apply(connect, this, args) as net.Socket;
    });
    t.mock.method(net.Socket.prototype, "write", function (this: net.Socket, ...args: unknown[]) {
      if (clientSockets.has(this)) clientWrites.push(args[0]);
      return Reflect.apply(write, this, args) as boolean;
    });
    const connection = await open(t, bus);
    const echoed = connection.call(ECHO);
    const peer = await bus.peer();
    const [hello, call] = await peer.whenMessages(2);

    assert.equal(peer.bytesSent, 0, "the bus had answered nothing");
    assert.equal(peer.chunks.length, 1, "one chunk");
    assert.equal(clientSockets.size, 1, "the client's socket was seen");
    assert.equal(clientWrites.length, 1, "one write");
    assert.equal(peer.authText, CLIENT_AUTH);
    assert.equal(latin1(peer.chunks[0]!).slice(0, CLIENT_AUTH.length), CLIENT_AUTH);
    assert.equal(peer.messages.length, 2);
    assert.equal(hello!.member, "Hello");
    assert.equal(hello!.destination, BUS_NAME);
    assert.equal(hello!.path, "/org/freedesktop/DBus");
    assert.equal(hello!.serial, 1);
    assert.equal(call!.member, "Echo");
    assert.equal(call!.serial, 2);
    assert.deepEqual(call!.body, ["hello"]);

    await peer.send(
      AUTH_ANSWER,
      peer.methodReturn(hello!, "s", [CLIENT_NAME]),
      peer.methodReturn(call!, "s", ["world"]),
    );
    assert.deepEqual((await echoed).body, ["world"]);
  });

  test("calls made in one turn leave together in one write", async (t) => {
    const bus = await startFakeBus(t, { onMessage: answerEcho });
    const connection = await open(t, bus);
    await connection.call(ECHO);
    const peer = await bus.peer();
    const before = peer.chunks.length;
    const replies = await Promise.all(
      ["a", "b", "c"].map((text) => connection.call({ ...ECHO, body: [text] })),
    );
    assert.deepEqual(
      replies.map((reply) => reply.body[0]),
      ["a", "b", "c"],
    );
    assert.equal(peer.chunks.length - before, 1);
  });

  test("AUTH answered with REJECTED: the call rejects with BusUnavailable naming it", async (t) => {
    const bus = await startFakeBus(t, { authAnswer: "REJECTED EXTERNAL\r\n" });
    const connection = await open(t, bus);
    const { ms, error } = await timed(connection.call(ECHO));
    assert.ok(error instanceof BusUnavailable, String(error));
    assert.match(error.message, /refused to authenticate us \(REJECTED EXTERNAL\)/);
    assert.equal(error.code, undefined);
    assert.ok(ms < PROMPT_MS, `took ${ms} ms`);
    await (
      await bus.peer()
    ).closed;
    await assert.rejects(connection.call(ECHO), (later) => later === error);
  });

  test("AUTH answered with ERROR after DATA: BusUnavailable", async (t) => {
    const bus = await startFakeBus(t, { authAnswer: "DATA\r\nERROR\r\n" });
    const connection = await open(t, bus);
    await assert.rejects(connection.call(ECHO), /refused to authenticate us \(ERROR\)/);
  });

  test("an overlong authentication line that never ends: BusUnavailable, and the client hangs up", async (t) => {
    const bus = await startFakeBus(t, { authAnswer: null });
    const connection = await open(t, bus);
    const rejected = assert.rejects(connection.call(ECHO), (error) => {
      assert.ok(error instanceof BusUnavailable);
      assert.match(error.message, /overlong authentication line/);
      return true;
    });
    const peer = await bus.peer();
    const hungUp = peer.closed.then(() => true);
    // A bus that writes one endless line, 1 KiB at a time, until the client hangs up.
    let sent = 0;
    const limit = 16 * 1024 * 1024;
    while (sent < limit && !(await Promise.race([hungUp, nextTurns().then(() => false)]))) {
      await peer.send("x".repeat(1024));
      sent += 1024;
    }
    await rejected;
    assert.ok(await hungUp);
    assert.ok(sent < 1024 * 1024, `the client read ${sent} bytes of one line before hanging up`);
  });

  test("an overlong authentication line in one chunk, newline included: BusUnavailable", async (t) => {
    const bus = await startFakeBus(t, { authAnswer: `DATA\r\nOK ${"x".repeat(20_000)}\r\n` });
    const connection = await open(t, bus);
    await assert.rejects(connection.call(ECHO), /overlong authentication line/);
  });
});

describe("reading the bus's answers", () => {
  test("the OK line and the first messages in one chunk", async (t) => {
    const bus = await startFakeBus(t, {
      authAnswer: null,
      onMessage: (message, peer) => {
        if (message.member !== "Echo") return;
        const [hello] = peer.messages;
        void peer.send(
          AUTH_ANSWER,
          peer.methodReturn(hello!, "s", [CLIENT_NAME]),
          peer.methodReturn(message, "s", ["one chunk"]),
        );
      },
    });
    const connection = await open(t, bus);
    assert.deepEqual((await connection.call(ECHO)).body, ["one chunk"]);
  });

  test("the OK line and the first messages split into two chunks at every byte", async (t) => {
    const bus = await startFakeBus(t, { authAnswer: null, onMessage: () => undefined });
    // The same answer every time: the client's serials are the same on every connection.
    let answer: Uint8Array | undefined;
    for (let index = 0; answer === undefined || index <= answer.length; index++) {
      const connection = await BusConnection.open({ path: bus.path }, deadlineIn(5));
      try {
        const echoed = connection.call({ ...ECHO, body: ["split"] });
        const peer = await bus.peer(index);
        const [hello, call] = await peer.whenMessages(2);
        answer ??= join([
          AUTH_ANSWER,
          peer.methodReturn(hello!, "s", [CLIENT_NAME]),
          peer.methodReturn(call!, "s", ["split"]),
        ]);
        const cut = Math.min(index, answer.length);
        await peer.sendInPieces(answer, cut === 0 || cut === answer.length ? [] : [cut]);
        const { value, error } = await timed(echoed);
        assert.equal(error, undefined, `cut at byte ${cut}: ${String(error)}`);
        assert.deepEqual(value?.body, ["split"], `cut at byte ${cut}`);
      } finally {
        connection.close();
      }
    }
  });

  test("the OK line and the first messages one byte at a time", async (t) => {
    const bus = await startFakeBus(t, { authAnswer: null, onMessage: () => undefined });
    const connection = await open(t, bus);
    const echoed = connection.call(ECHO);
    const peer = await bus.peer();
    const [hello, call] = await peer.whenMessages(2);
    const answer = join([
      AUTH_ANSWER,
      peer.methodReturn(hello!, "s", [CLIENT_NAME]),
      peer.methodReturn(call!, "s", ["bytewise"]),
    ]);
    await peer.sendInPieces(
      answer,
      Array.from({ length: answer.length - 1 }, (_, index) => index + 1),
    );
    assert.deepEqual((await echoed).body, ["bytewise"]);
  });

  test("replies out of order are matched to their calls by serial", async (t) => {
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (answerHello(message, peer)) return;
        const calls = peer.messages.filter((received) => received.member === "Echo");
        if (calls.length < 3) return;
        // Last first, and all three in one write.
        void peer.send(
          ...calls.reverse().map((received) => peer.methodReturn(received, "s", received.body)),
        );
      },
    });
    const connection = await open(t, bus);
    const replies = await Promise.all(
      ["first", "second", "third"].map((text) => connection.call({ ...ECHO, body: [text] })),
    );
    assert.deepEqual(
      replies.map((reply) => reply.body[0]),
      ["first", "second", "third"],
    );
    const peer = await bus.peer();
    assert.deepEqual(
      replies.map((reply) => reply.replySerial),
      peer.messages.filter((message) => message.member === "Echo").map((call) => call.serial),
    );
  });

  test("an error reply rejects with DbusErrorReply and its error name", async (t) => {
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (answerHello(message, peer)) return;
        if (message.body[0] === "text") {
          void peer.send(
            peer.errorReply(
              message,
              "org.freedesktop.Secret.Error.IsLocked",
              "Collection is locked",
            ),
          );
        } else if (message.body[0] === "bare") {
          void peer.send(peer.errorReply(message, "org.example.Error.Bare"));
        } else {
          answerEcho(message, peer);
        }
      },
    });
    const connection = await open(t, bus);
    await assert.rejects(connection.call({ ...ECHO, body: ["text"] }), (error) => {
      assert.ok(error instanceof DbusErrorReply);
      assert.equal(error.errorName, "org.freedesktop.Secret.Error.IsLocked");
      assert.equal(error.message, "org.freedesktop.Secret.Error.IsLocked: Collection is locked");
      return true;
    });
    await assert.rejects(connection.call({ ...ECHO, body: ["bare"] }), (error) => {
      assert.ok(error instanceof DbusErrorReply);
      assert.equal(error.errorName, "org.example.Error.Bare");
      return true;
    });
    // The connection lives on: an error reply fails one call, not the others.
    assert.deepEqual((await connection.call({ ...ECHO, member: "Echo" })).body, ["hello"]);
  });

  test("a method call aimed at the client is ignored, and other calls are still answered", async (t) => {
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (answerHello(message, peer)) return;
        if (message.member !== "Echo") return;
        void peer.send(
          // A call to us, even one carrying the reply serial of the call we wait for.
          peer.message({
            type: MessageType.MethodCall,
            sender: ":1.99",
            path: "/",
            interface: "org.freedesktop.DBus.Peer",
            member: "Ping",
            replySerial: message.serial,
          }),
          // A reply to no call of ours.
          peer.methodReturn({ ...message, serial: 9999 }, "s", ["stray"]),
          peer.methodReturn(message, "s", message.body),
        );
      },
    });
    const connection = await open(t, bus);
    assert.deepEqual((await connection.call({ ...ECHO, body: ["one"] })).body, ["one"]);
    assert.deepEqual((await connection.call({ ...ECHO, body: ["two"] })).body, ["two"]);
    const peer = await bus.peer();
    await nextTurns();
    assert.deepEqual(
      peer.messages.map((message) => message.member),
      ["Hello", "Echo", "Echo"],
      "the client answered nothing",
    );
  });

  test("a signal reaches waitForSignal; earlier and non-matching signals do not", async (t) => {
    const bus = await startFakeBus(t, { onMessage: answerEcho });
    const connection = await open(t, bus);
    await connection.call(ECHO);
    const peer = await bus.peer();
    const changed = (value: string) =>
      peer.signal({
        sender: ":1.3",
        path: "/org/example/Test",
        interface: "org.example.Test",
        member: "Changed",
        signature: "s",
        body: [value],
      });
    await peer.send(changed("before"));
    await nextTurns();
    const waited = connection.waitForSignal(
      { interface: "org.example.Test", member: "Changed", arg0: "after" },
      "org.example.Test.Changed",
    );
    await peer.send(changed("other"), changed("after"));
    const signal = await waited;
    assert.equal(signal.type, MessageType.Signal);
    assert.deepEqual(signal.body, ["after"]);
    assert.equal(signal.sender, ":1.3");
  });

  test("a malformed message: the pending call rejects with WireError at once, and the client hangs up", async (t) => {
    const cases: [string, (valid: Uint8Array) => Uint8Array, RegExp][] = [
      ["a bad endianness byte", (valid) => patched(valid, 0, 0x58), /bad endianness byte 0x58/],
      [
        "a length over the limit",
        (valid) => {
          const bytes = new Uint8Array(valid);
          new DataView(bytes.buffer).setUint32(4, 0xfffffff0, true);
          return bytes.subarray(0, 16);
        },
        /over the \d+-byte limit/,
      ],
      [
        "an unknown protocol version",
        (valid) => patched(valid, 3, 2),
        /unsupported protocol version 2/,
      ],
    ];
    for (const [what, corrupt, message] of cases) {
      const bus = await startFakeBus(t, {
        onMessage: (received, peer) => {
          if (answerHello(received, peer)) return;
          void peer.send(corrupt(peer.methodReturn(received, "s", ["x"])));
        },
      });
      const connection = await open(t, bus);
      const { ms, error } = await timed(connection.call(ECHO));
      assert.ok(error instanceof WireError, `${what}: ${String(error)}`);
      assert.match(error.message, message, what);
      assert.ok(ms < PROMPT_MS, `${what}: took ${ms} ms`);
      await (
        await bus.peer()
      ).closed;
    }
  });

  test("the bus closes the socket: pending calls reject with BusUnavailable, later ones at once", async (t) => {
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (!answerHello(message, peer)) peer.socket.destroy();
      },
    });
    const connection = await open(t, bus);
    const calls = [connection.call(ECHO), connection.call(NEVER)];
    for (const call of calls) {
      const { ms, error } = await timed(call);
      assert.ok(error instanceof BusUnavailable, String(error));
      assert.match(error.message, /the D-Bus session bus closed the connection/);
      assert.ok(ms < PROMPT_MS, `took ${ms} ms`);
    }
    await assert.rejects(connection.call(ECHO), BusUnavailable);
    await assert.rejects(
      connection.waitForSignal({ interface: "org.example.Test", member: "Any" }, "anything"),
      BusUnavailable,
    );
  });

  test("close() rejects the calls still waiting and hangs up", async (t) => {
    const bus = await startFakeBus(t);
    const connection = await open(t, bus);
    const waiting = connection.call(NEVER);
    await (await bus.peer()).whenMessages(2);
    connection.close();
    await assert.rejects(waiting, /the connection was closed/);
    await (
      await bus.peer()
    ).closed;
  });
});

describe("the deadline", () => {
  test("a call the bus never answers rejects with DeadlineExpired naming it, at the deadline", async (t) => {
    const bus = await startFakeBus(t);
    const deadlineMs = 300;
    const started = performance.now();
    const connection = await open(t, bus, deadlineMs);
    const { error } = await timed(connection.call(NEVER));
    const elapsed = performance.now() - started;
    assert.ok(error instanceof DeadlineExpired, String(error));
    assert.equal(error.call, "org.example.Test.Never");
    assert.equal(error.destination, "org.example.Test", "who hung: the call's destination");
    assert.ok(elapsed >= deadlineMs - 5, `rejected early, after ${elapsed} ms`);
    assert.ok(elapsed < deadlineMs + PROMPT_MS, `rejected after ${elapsed} ms`);
    await (
      await bus.peer()
    ).closed;
  });

  test("a bus that never answers AUTH: DeadlineExpired names Hello", async (t) => {
    const bus = await startFakeBus(t, { authAnswer: null });
    const connection = await open(t, bus, 200);
    await assert.rejects(connection.call(ECHO), (error) => {
      assert.ok(error instanceof DeadlineExpired);
      assert.equal(error.call, "org.freedesktop.DBus.Hello");
      return true;
    });
  });

  test("a deadline already passed rejects the first call at once", async (t) => {
    const bus = await startFakeBus(t);
    const connection = await open(t, bus, -1);
    const { ms, error } = await timed(connection.call(ECHO));
    assert.ok(error instanceof DeadlineExpired, String(error));
    assert.ok(ms < PROMPT_MS, `took ${ms} ms`);
  });

  test("a wait for a signal ends at the deadline too", async (t) => {
    const bus = await startFakeBus(t, { onMessage: answerEcho });
    const connection = await open(t, bus, 300);
    // A first call: AUTH and Hello leave only with one.
    await connection.call(ECHO);
    await assert.rejects(
      connection.waitForSignal(
        { interface: "org.example.Test", member: "Completed" },
        "org.example.Test.Completed",
      ),
      (error) => error instanceof DeadlineExpired && error.call === "org.example.Test.Completed",
    );
  });

  test("setDeadline moves the deadline of a call already waiting", async (t) => {
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (answerHello(message, peer)) return;
        setTimeout(() => void peer.send(peer.methodReturn(message, "s", ["late"])), 400);
      },
    });
    const connection = await open(t, bus);
    // The short deadline set just before the call, not at open, which a loaded machine may
    // take longer than it.
    connection.setDeadline(performance.now() + 200);
    const late = connection.call(ECHO);
    connection.setDeadline(performance.now() + 60_000);
    assert.deepEqual((await late).body, ["late"]);
  });

  test("a bus that never answers RequestName: DeadlineExpired names RequestName, not the turn", async (t) => {
    const bus = await startFakeBus(t);
    const connection = await open(t, bus, 200);
    await assert.rejects(connection.acquireName("org.example.Lock"), (error) => {
      assert.ok(error instanceof DeadlineExpired);
      assert.equal(error.call, "org.freedesktop.DBus.RequestName");
      return true;
    });
  });
});

describe("acquireName", () => {
  const NAME = "org.terraform_credentials_keychain.Store.h0123abcd";
  const nameAcquired = (peer: Peer, name = NAME, sender = BUS_NAME) =>
    peer.signal({
      sender,
      path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus",
      member: "NameAcquired",
      signature: "s",
      body: [name],
    });

  for (const order of ["reply, then signal", "signal, then reply"] as const) {
    test(`free at once (1), NameAcquired in the same chunk (${order}): true`, async (t) => {
      const bus = await startFakeBus(t, {
        onMessage: (message, peer) => {
          if (answerHello(message, peer)) return;
          assert.equal(message.member, "RequestName");
          assert.deepEqual(message.body, [NAME, 0]);
          const reply = peer.methodReturn(message, "u", [1]);
          const signal = nameAcquired(peer);
          void peer.send(...(order === "reply, then signal" ? [reply, signal] : [signal, reply]));
        },
      });
      const connection = await open(t, bus);
      assert.equal(await connection.acquireName(NAME), true);
    });
  }

  test("in the queue (2), NameAcquired later: false, and only once the signal came", async (t) => {
    let signalledAt = Infinity;
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (answerHello(message, peer)) return;
        void peer.send(peer.methodReturn(message, "u", [2]));
        setTimeout(() => {
          // Not ours: another name, and our name from a sender that is not the bus.
          void peer
            .send(nameAcquired(peer, "org.example.Other"), nameAcquired(peer, NAME, ":1.66"))
            .then(nextTurns)
            .then(() => {
              signalledAt = performance.now();
              return peer.send(nameAcquired(peer));
            });
        }, 150);
      },
    });
    const connection = await open(t, bus);
    const acquired = await connection.acquireName(NAME);
    assert.equal(acquired, false);
    assert.ok(performance.now() >= signalledAt, "resolved before NameAcquired was sent");
  });

  test("already the owner (4): true, with no NameAcquired to wait for", async (t) => {
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (answerHello(message, peer)) return;
        void peer.send(peer.methodReturn(message, "u", [4]));
      },
    });
    const connection = await open(t, bus);
    const { ms, value } = await timed(connection.acquireName(NAME));
    assert.equal(value, true);
    assert.ok(ms < PROMPT_MS, `took ${ms} ms`);
  });

  test("the bus refuses the name: DbusErrorReply, and the connection lives on", async (t) => {
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (answerHello(message, peer)) return;
        if (message.member === "RequestName") {
          void peer.send(peer.errorReply(message, "org.freedesktop.DBus.Error.AccessDenied", "no"));
        } else {
          answerEcho(message, peer);
        }
      },
    });
    const connection = await open(t, bus);
    await assert.rejects(
      connection.acquireName(NAME),
      (error) =>
        error instanceof DbusErrorReply &&
        error.errorName === "org.freedesktop.DBus.Error.AccessDenied",
    );
    assert.deepEqual((await connection.call(ECHO)).body, ["hello"]);
  });
});

describe("releaseName", () => {
  test("ReleaseName leaves asking for no reply (NO_REPLY_EXPECTED), and the connection goes on", async (t) => {
    const released: { flags: number; body: unknown }[] = [];
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (answerHello(message, peer)) return;
        if (message.member === "ReleaseName") released.push(message);
        else answerEcho(message, peer);
      },
    });
    const connection = await open(t, bus);
    connection.releaseName("org.terraform_credentials_keychain.Store.h0123abcd");
    // Sent after it, answered after it: the bus has seen the ReleaseName by then.
    assert.deepEqual((await connection.call(ECHO)).body, ["hello"]);
    assert.deepEqual(
      released.map(({ flags, body }) => ({ flags, body })),
      [{ flags: 1, body: ["org.terraform_credentials_keychain.Store.h0123abcd"] }],
    );
  });
});

describe("connecting", () => {
  test("a missing socket: BusUnavailable with code ENOENT", async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-no-bus-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    await assert.rejects(
      BusConnection.open({ path: path.join(dir, "bus") }, deadlineIn(60)),
      (error) => {
        assert.ok(error instanceof BusUnavailable);
        assert.equal(error.code, "ENOENT");
        assert.equal(
          error.message,
          `could not connect to the D-Bus session bus at unix:path=${path.join(dir, "bus")}: ENOENT, no such socket`,
        );
        return true;
      },
    );
  });

  test("a path that is no socket: BusUnavailable with code ECONNREFUSED", async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-no-bus-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, "bus"), "");
    await assert.rejects(
      BusConnection.open({ path: path.join(dir, "bus") }, deadlineIn(60)),
      (error) =>
        error instanceof BusUnavailable &&
        error.code === "ECONNREFUSED" &&
        /at unix:path=.*: ECONNREFUSED, nothing listens there$/.test(error.message),
    );
  });

  test("an abstract socket under Node: BusUnavailable with code EAFNOSUPPORT that says why", async () => {
    await assert.rejects(
      BusConnection.open({ abstract: "/tmp/dbus-abc" }, deadlineIn(60)),
      (error) => {
        assert.ok(error instanceof BusUnavailable);
        assert.equal(error.code, "EAFNOSUPPORT");
        assert.match(error.message, /abstract sockets need the built executable/);
        return true;
      },
    );
  });
});

describe("the process ends when its work is done", () => {
  const CONNECTION = new URL("../../../../src/stores/secret-service/connection.ts", import.meta.url)
    .href;
  const DEADLINE = new URL("../../../../src/system/deadline.ts", import.meta.url).href;
  // Run in a process of its own with tsx; prints one line when its work is done, and never
  // closes the connection.
  const CHILD = `
    import { BusConnection } from ${JSON.stringify(CONNECTION)};
    import { deadlineIn } from ${JSON.stringify(DEADLINE)};
    const [socketPath, scenario] = process.argv.slice(-2);
    const call = { destination: "org.example.Test", path: "/org/example/Test", interface: "org.example.Test" };
    const deadline = deadlineIn(scenario === "deadline" ? 0.3 : 60);
    const connection = await BusConnection.open({ path: socketPath }, deadline);
    if (scenario === "deadline" || scenario === "hang-up") {
      await connection.call({ ...call, member: "Never" }).catch((error) => console.log(error.name));
    } else {
      const reply = await connection.call({ ...call, member: "Echo", signature: "s", body: ["done"] });
      if (scenario === "set-deadline") connection.setDeadline(performance.now() + 60_000);
      console.log(reply.body[0]);
    }
  `;

  /** Runs CHILD; resolves with its line and how long it lived after printing it. */
  function runChild(
    bus: FakeBus,
    scenario: string,
  ): Promise<{ line: string; lingeredMs: number; code: number | null }> {
    const script = path.join(bus.dir, "child.mts");
    writeFileSync(script, CHILD);
    const child = spawn(process.execPath, ["--import", "tsx", script, bus.path, scenario], {
      stdio: ["ignore", "pipe", "pipe"],
      timeout: PATIENCE_MS,
    });
    let output = "";
    let printedAt = Infinity;
    let killer: ReturnType<typeof setTimeout> | undefined;
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      output += text;
      printedAt = Math.min(printedAt, performance.now());
      // Long enough to fail the test: no need to wait for a deadline that keeps it alive.
      killer ??= setTimeout(() => child.kill("SIGKILL"), PROMPT_MS + 1000);
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
    return new Promise((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (code) => {
        clearTimeout(killer);
        resolve({ line: output.trim(), lingeredMs: performance.now() - printedAt, code });
      });
    });
  }

  test("after DeadlineExpired, neither the timer nor the socket keeps the process alive", async (t) => {
    const bus = await startFakeBus(t);
    const { line, lingeredMs, code } = await runChild(bus, "deadline");
    assert.equal(line, "DeadlineExpired");
    assert.equal(code, 0);
    assert.ok(lingeredMs < PROMPT_MS, `the process lived on for ${lingeredMs} ms`);
  });

  test("with every call answered, the open connection does not keep the process alive", async (t) => {
    const bus = await startFakeBus(t, { onMessage: answerEcho });
    const { line, lingeredMs, code } = await runChild(bus, "answered");
    assert.equal(line, "done");
    assert.equal(code, 0);
    assert.ok(lingeredMs < PROMPT_MS, `the process lived on for ${lingeredMs} ms`);
  });

  test("after the bus hangs up, the deadline's timer does not keep the process alive", async (t) => {
    const bus = await startFakeBus(t, {
      onMessage: (message, peer) => {
        if (!answerHello(message, peer)) peer.socket.destroy();
      },
    });
    const { line, lingeredMs, code } = await runChild(bus, "hang-up");
    assert.equal(line, "BusUnavailable");
    assert.equal(code, 0);
    assert.ok(lingeredMs < PROMPT_MS, `the process lived on for ${lingeredMs} ms`);
  });

  test("setDeadline with nothing awaited does not keep the process alive until that deadline", async (t) => {
    const bus = await startFakeBus(t, { onMessage: answerEcho });
    const { line, lingeredMs } = await runChild(bus, "set-deadline");
    assert.equal(line, "done");
    assert.ok(lingeredMs < PROMPT_MS, `the process lived on for ${lingeredMs} ms`);
  });
});
