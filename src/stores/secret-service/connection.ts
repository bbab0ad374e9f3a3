import type { Deadline } from "../../system/deadline.ts";
import { oneLine, printable } from "../../system/quote.ts";
import { describeAddress } from "./bus-address.ts";
import {
  connectUnixSocket,
  type ConnectFailed,
  type SocketAddress,
  type UnixSocket,
} from "./unix-socket.ts";
import {
  concat,
  encodeMessage,
  MessageReader,
  MessageType,
  type DbusValue,
  type Message,
  type MessageHeader,
} from "./wire.ts";

/** One method call. */
export interface MethodCall {
  readonly destination: string;
  readonly path: string;
  readonly interface: string;
  readonly member: string;
  readonly signature?: string;
  readonly body?: readonly DbusValue[];
  readonly flags?: number;
}

/** The peer answered a call with a D-Bus error (`errorName` such as org.freedesktop.DBus.Error.ServiceUnknown). */
export class DbusErrorReply extends Error {
  readonly errorName: string;

  constructor(errorName: string, message: string) {
    super(`${errorName}: ${message}`);
    this.errorName = errorName;
    this.name = "DbusErrorReply";
  }
}

/** The bus could not be reached, refused us, or closed the connection. */
export class BusUnavailable extends Error {
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
    this.name = "BusUnavailable";
  }
}

/** What DeadlineExpired names while a store or forget waits for another helper's turn on the same host. */
export const TURN = "its turn (another helper is storing or forgetting the same host)";

/** A call had no answer when the deadline passed. */
export class DeadlineExpired extends Error {
  readonly call: string;
  /** The bus name the call went to (who hung); undefined for a wait for a signal. */
  readonly destination: string | undefined;

  constructor(call: string, destination?: string) {
    super(`no answer to ${call} before the deadline`);
    this.call = call;
    this.destination = destination;
    this.name = "DeadlineExpired";
  }
}

/** Which signals a wait is for: each field given must match (arg0: the first argument). */
interface SignalFilter {
  readonly sender?: string;
  readonly path?: string;
  readonly interface: string;
  readonly member: string;
  readonly arg0?: string;
}

/** What a connect's error code means here, in words. */
const CONNECT_ERRORS: Readonly<Record<string, string | undefined>> = {
  ENOENT: "no such socket",
  ECONNREFUSED: "nothing listens there",
  EAGAIN: "it accepts no more connections for the moment",
  EACCES: "permission denied",
  EPERM: "permission denied",
  ENOTDIR: "a part of the path is not a directory",
  ENAMETOOLONG: "the path is too long for a socket",
  EAFNOSUPPORT: "abstract sockets need the built executable",
};

/** The message bus itself, as a call's destination. */
export const BUS = {
  destination: "org.freedesktop.DBus",
  path: "/org/freedesktop/DBus",
  interface: "org.freedesktop.DBus",
} as const;

/**
 * AUTH EXTERNAL with no identity in it: the bus takes ours from the socket's credentials,
 * so no uid has to be known here. Everything up to BEGIN goes out at once with the first
 * calls, as sd-bus does, instead of waiting for each answer: one round trip saved.
 */
const AUTH = new TextEncoder().encode("\0AUTH EXTERNAL\r\nDATA\r\nBEGIN\r\n");
const MAX_AUTH_BYTES = 4096;
/** The header flag that tells the peer not to reply (D-Bus specification, "Message Format"). */
const NO_REPLY_EXPECTED = 0x1;

interface Pending {
  readonly what: string;
  readonly destination?: string;
  resolve(message: Message): void;
  reject(error: Error): void;
}

/**
 * A connection to a message bus: authentication, `Hello`, method calls matched to their
 * replies by serial, and one deadline for everything. Calls made in the same turn of the
 * event loop leave in one write. When the deadline passes, every call still waiting is
 * rejected with `DeadlineExpired` and the socket is closed: nothing is left running.
 */
export class BusConnection {
  private serial = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly signalHandlers = new Map<SignalFilter, (message: Message) => void>();
  private outgoing: Uint8Array[] = [];
  private flushQueued = false;
  private authenticated = false;
  private authText = "";
  // Only our replies and the signals we wait for are read: any client on the bus can send us
  // a message, and its body is never decoded, nor its bytes kept.
  private readonly reader = new MessageReader((header) => this.wanted(header));
  private timer: ReturnType<typeof setTimeout> | undefined;
  private failure: Error | undefined;

  private readonly socket: UnixSocket;
  private deadline: number;
  private readonly clock: Pick<Deadline, "now">;

  private constructor(socket: UnixSocket, deadline: number, clock: Pick<Deadline, "now">) {
    this.socket = socket;
    this.deadline = deadline;
    this.clock = clock;
  }

  /**
   * Connects to `address` and queues authentication and `Hello`; calls can be made at
   * once. Rejects with `BusUnavailable` when the socket cannot be connected.
   */
  static async open(address: SocketAddress, deadline: Deadline): Promise<BusConnection> {
    const holder: { connection?: BusConnection } = {};
    const early: Uint8Array[] = [];
    let socket: UnixSocket;
    try {
      socket = await connectUnixSocket(address, {
        data: (bytes) => {
          if (holder.connection) holder.connection.received(bytes);
          else early.push(bytes);
        },
        closed: (error) => holder.connection?.fail(closedError(error)),
      });
    } catch (error) {
      const { code, message } = error as ConnectFailed;
      const why =
        code === undefined
          ? oneLine(message, 120)
          : `${code}, ${CONNECT_ERRORS[code] ?? oneLine(message, 120)}`;
      throw new BusUnavailable(
        `could not connect to the D-Bus session bus at ${printable(describeAddress(address))}: ${why}`,
        code,
      );
    }
    const connection = new BusConnection(socket, deadline.at, deadline);
    holder.connection = connection;
    // Held back until the caller's first call, so that they all leave in one write.
    connection.outgoing.push(AUTH);
    void connection.call({ ...BUS, member: "Hello" }, false).catch(() => {
      // A failed Hello fails every later call too, which is where it is reported.
    });
    for (const bytes of early) connection.received(bytes);
    return connection;
  }

  /**
   * Sends a call; resolves with its reply, rejects with `DbusErrorReply` for an error reply.
   * Without `flush` it waits in the queue for the next call that flushes (Hello waits for the
   * caller's first call, so that they leave together).
   */
  call(call: MethodCall, flush = true): Promise<Message> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const serial = ++this.serial;
    const what = `${call.interface}.${call.member}`;
    const bytes = encodeMessage({
      serial,
      path: call.path,
      interface: call.interface,
      member: call.member,
      destination: call.destination,
      ...(call.flags === undefined ? {} : { flags: call.flags }),
      ...(call.signature === undefined ? {} : { signature: call.signature }),
      ...(call.body === undefined ? {} : { body: call.body }),
    });
    return new Promise<Message>((resolve, reject) => {
      if (this.pending.size === 0) this.awaitingAnswers(true);
      this.pending.set(serial, { what, destination: call.destination, resolve, reject });
      this.queue(bytes, flush);
    });
  }

  /**
   * Resolves with the first signal that matches `filter`, received from now on. Waiting
   * counts as a call: the deadline ends it too.
   */
  waitForSignal(filter: SignalFilter, what: string): Promise<Message> {
    return this.cancellableWait(filter, what).signal;
  }

  /** waitForSignal, with a way to stop waiting (the promise then rejects). */
  private cancellableWait(
    filter: SignalFilter,
    what: string,
  ): { signal: Promise<Message>; cancel(): void } {
    if (this.failure !== undefined) return { signal: Promise.reject(this.failure), cancel() {} };
    // Negative keys: never a serial the bus will answer.
    const key = -++this.serial;
    const cancel = () => {
      const pending = this.pending.get(key);
      if (pending === undefined) return;
      this.settled(key);
      pending.reject(new Error("no longer waited for"));
    };
    const signal = new Promise<Message>((resolve, reject) => {
      if (this.pending.size === 0) this.awaitingAnswers(true);
      const handler = (message: Message) => {
        if (filter.arg0 !== undefined && message.body[0] !== filter.arg0) return;
        this.signalHandlers.delete(filter);
        this.settled(key);
        resolve(message);
      };
      this.pending.set(key, {
        what,
        resolve,
        reject: (error) => {
          this.signalHandlers.delete(filter);
          reject(error);
        },
      });
      this.signalHandlers.set(filter, handler);
    });
    return { signal, cancel };
  }

  /**
   * Owns the bus name `name` for as long as this connection lives, waiting in the bus's
   * queue while another connection owns it: a lock that the bus releases when its holder
   * ends, however it ends. Resolves true when the name was free at once, false when we
   * waited; rejects when the bus refuses (its policy), the deadline passes, or the
   * connection fails.
   */
  async acquireName(name: string): Promise<boolean> {
    // Waited for from before the request: the signal can arrive in the same read as the reply.
    const acquired = this.cancellableWait(
      { sender: BUS.destination, interface: BUS.interface, member: "NameAcquired", arg0: name },
      TURN,
    );
    acquired.signal.catch(() => {
      // Cancelled below, or failed with the connection, which the request reports too.
    });
    let code;
    try {
      [code] = (
        await this.call({ ...BUS, member: "RequestName", signature: "su", body: [name, 0] })
      ).body;
    } catch (error) {
      acquired.cancel();
      throw error;
    }
    // 1: ours now; 2: in the queue, NameAcquired comes when it is our turn; 4: already ours
    // (no signal follows).
    if (code !== 1 && code !== 2) {
      acquired.cancel();
      return true;
    }
    await acquired.signal;
    return code === 1;
  }

  /**
   * Gives up a name taken with acquireName, so that the next in the queue gets it now. No
   * reply is asked for or awaited (the bus releases the name anyway when the connection
   * closes): a process that ends after it does not wait a round trip for the answer.
   */
  releaseName(name: string): void {
    if (this.failure !== undefined) return;
    this.queue(
      encodeMessage({
        serial: ++this.serial,
        ...BUS,
        member: "ReleaseName",
        flags: NO_REPLY_EXPECTED,
        signature: "s",
        body: [name],
      }),
      true,
    );
  }

  /** Asks the bus to route signals that match `rule` to us. */
  async addMatch(rule: string): Promise<void> {
    await this.call({ ...BUS, member: "AddMatch", signature: "s", body: [rule] });
  }

  /** Moves the deadline (an unlock prompt waits for a person, not for the service). */
  setDeadline(deadline: number): void {
    this.deadline = deadline;
    // With nothing awaited no timer runs (it would keep the process alive); the next call arms it.
    if (this.pending.size > 0) this.armTimer();
  }

  /** Closes the socket; calls still waiting are rejected. */
  close(): void {
    this.fail(new BusUnavailable("the connection was closed"));
  }

  /** Queues `bytes`; with `flush`, everything queued leaves once this turn of the event loop ends. */
  private queue(bytes: Uint8Array, flush: boolean): void {
    this.outgoing.push(bytes);
    if (!flush || this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      const parts = this.outgoing;
      this.outgoing = [];
      if (this.failure !== undefined || parts.length === 0) return;
      this.socket.write(concat(...parts));
    });
  }

  private armTimer(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        // The oldest unanswered call is what hangs; a wait for a signal only if no call is left.
        let hung: Pending | undefined;
        for (const [key, pending] of this.pending) {
          if (key > 0) {
            hung = pending;
            break;
          }
        }
        hung ??= this.pending.values().next().value;
        this.fail(new DeadlineExpired(hung?.what ?? "the bus", hung?.destination));
      },
      Math.max(0, this.deadline - this.clock.now()),
    );
  }

  private received(bytes: Uint8Array): void {
    if (this.failure !== undefined) return;
    try {
      const rest = this.authenticated ? bytes : this.authenticate(bytes);
      if (rest === undefined) return;
      for (const message of this.reader.push(rest)) this.dispatch(message);
    } catch (error) {
      this.fail(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /**
   * Reads the bus's answers to AUTH; returns the bytes after its OK line (the first
   * messages), or `undefined` while that line has not come yet.
   */
  private authenticate(bytes: Uint8Array): Uint8Array | undefined {
    let consumed = 0;
    for (;;) {
      const end = bytes.indexOf(0x0a, consumed);
      if (end < 0) {
        this.authText += latin1(bytes.subarray(consumed, consumed + MAX_AUTH_BYTES + 1));
        if (this.authText.length > MAX_AUTH_BYTES) {
          throw new BusUnavailable("the D-Bus session bus sent an overlong authentication line");
        }
        return undefined;
      }
      if (end - consumed > MAX_AUTH_BYTES) {
        throw new BusUnavailable("the D-Bus session bus sent an overlong authentication line");
      }
      const received = this.authText + latin1(bytes.subarray(consumed, end));
      // Not replace(/\r$/): a regular expression's replace() compiles a builtin (~60 µs).
      const line = received.endsWith("\r") ? received.slice(0, -1) : received;
      consumed = end + 1;
      this.authText = "";
      if (line.startsWith("OK ")) {
        this.authenticated = true;
        return bytes.subarray(consumed);
      }
      if (line !== "DATA") {
        throw new BusUnavailable(
          `the D-Bus session bus refused to authenticate us (${line.slice(0, 80)})`,
        );
      }
    }
  }

  /**
   * Whether a message is to be read, by its header alone: a reply to a call still waiting,
   * or a signal someone waits for. Calls aimed at us are not: we offer nothing on the bus.
   */
  private wanted(header: MessageHeader): boolean {
    switch (header.type) {
      case MessageType.MethodReturn:
      case MessageType.Error:
        return (header.replySerial ?? 0) > 0 && this.pending.has(header.replySerial ?? 0);
      case MessageType.Signal:
        for (const filter of this.signalHandlers.keys()) {
          if (signalMatches(filter, header)) return true;
        }
        return false;
      case MessageType.MethodCall:
        return false;
    }
  }

  private dispatch(message: Message): void {
    if (message.type === MessageType.Signal) {
      for (const [filter, handler] of this.signalHandlers) {
        if (signalMatches(filter, message)) handler(message);
      }
      return;
    }
    if (message.type === MessageType.MethodCall) return;
    const serial = message.replySerial ?? 0;
    const pending = this.pending.get(serial);
    if (pending === undefined || serial <= 0) return;
    this.settled(serial);
    if (message.type === MessageType.Error) {
      const [text] = message.body;
      const name = message.errorName ?? "org.freedesktop.DBus.Error.Failed";
      pending.reject(new DbusErrorReply(name, typeof text === "string" ? text : ""));
    } else {
      pending.resolve(message);
    }
  }

  private settled(key: number): void {
    this.pending.delete(key);
    if (this.pending.size === 0) this.awaitingAnswers(false);
  }

  /**
   * While nothing is awaited, neither the timer nor the socket keeps the process alive: it
   * ends when its work is done, even when the store is never closed.
   */
  private awaitingAnswers(active: boolean): void {
    this.socket.keepAlive(active);
    if (active) this.armTimer();
    else clearTimeout(this.timer);
  }

  private fail(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    clearTimeout(this.timer);
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const pending of waiting) pending.reject(error);
    this.socket.end();
  }
}

function signalMatches(filter: SignalFilter, header: MessageHeader): boolean {
  return (
    header.member === filter.member &&
    header.interface === filter.interface &&
    (filter.sender === undefined || header.sender === filter.sender) &&
    (filter.path === undefined || header.path === filter.path)
  );
}

function closedError(error: Error | undefined): Error {
  return new BusUnavailable(
    `the D-Bus session bus closed the connection${error ? `: ${error.message}` : ""}`,
  );
}

function latin1(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}
