import { listensAt } from "./unix-listeners.ts";

/**
 * A Unix stream socket in the runtime's own API. In the built executable that is Bun's
 * `Bun.connect({ unix })`: `node:net` costs 1.5-2 ms to load there, and only Bun reaches
 * abstract sockets (`unix:abstract=`). From source (Node 20, unit tests) it is `node:net`,
 * which cannot reach an abstract socket: such an address is refused with a clear error,
 * and the tests that need one run against the built executable.
 */

/** What the owner of a socket hears from it. */
interface SocketListener {
  data(bytes: Uint8Array): void;
  /** The socket is closed: by the peer, by an error (`error`), or by `end()`. */
  closed(error: Error | undefined): void;
}

export interface UnixSocket {
  /** Queues `bytes`; all of them reach the peer in order, however many writes it takes. */
  write(bytes: Uint8Array): void;
  /** Whether the open socket keeps the process alive: only while an answer is awaited. */
  keepAlive(active: boolean): void;
  end(): void;
}

/** A socket path, or an abstract name (without its leading nul). */
export type SocketAddress = { readonly path: string } | { readonly abstract: string };

/** A connect that failed, with the system's error code (ENOENT, ECONNREFUSED, EAGAIN, ...). */
export class ConnectFailed extends Error {
  readonly code: string | undefined;

  constructor(code: string | undefined, detail: string) {
    super(detail);
    this.code = code;
    this.name = "ConnectFailed";
  }
}

/** Connects; rejects with ConnectFailed on failure. */
export async function connectUnixSocket(
  address: SocketAddress,
  listener: SocketListener,
): Promise<UnixSocket> {
  const bun = (globalThis as { Bun?: BunSockets }).Bun;
  try {
    return await (bun !== undefined
      ? connectWithBun(bun, address, listener)
      : connectWithNode(address, listener));
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    throw new ConnectFailed(
      await trueCode(typeof code === "string" ? code : undefined, address),
      typeof message === "string" ? message : String(error),
    );
  }
}

/**
 * The connect's real error. Bun (1.4) reports the kernel's EAGAIN, which a listener whose
 * queue of new connections is full gives a non-blocking connect, as ECONNREFUSED, the error
 * for an address where nothing listens (strace shows the EAGAIN). So an ECONNREFUSED at an
 * address where the kernel's table shows a listener was an EAGAIN: worth another try.
 */
async function trueCode(
  code: string | undefined,
  address: SocketAddress,
): Promise<string | undefined> {
  if (code !== undefined && code !== "ECONNREFUSED") return code;
  return (await listensAt(address)) === true ? "EAGAIN" : code;
}

interface BunSocket {
  write(data: Uint8Array): number;
  ref(): void;
  unref(): void;
  end(): void;
}

interface BunSockets {
  connect(options: {
    unix: string;
    socket: {
      data(socket: BunSocket, data: Uint8Array): void;
      drain(socket: BunSocket): void;
      close(socket: BunSocket, error?: Error): void;
      error(socket: BunSocket, error: Error): void;
      connectError?(socket: BunSocket, error: Error): void;
    };
  }): Promise<BunSocket>;
}

async function connectWithBun(
  bun: BunSockets,
  address: SocketAddress,
  listener: SocketListener,
): Promise<UnixSocket> {
  let unsent: Uint8Array[] = [];
  let closed = false;
  const close = (error: Error | undefined) => {
    if (closed) return;
    closed = true;
    listener.closed(error);
  };
  // Bun's write takes what the kernel accepts now and says how much; the rest waits for drain.
  const flush = (socket: BunSocket) => {
    for (let next = unsent[0]; next !== undefined; next = unsent[0]) {
      const written = socket.write(next);
      if (written < 0) {
        close(new Error("the socket is closed"));
        return;
      }
      if (written < next.length) {
        unsent[0] = next.subarray(written);
        return;
      }
      unsent.shift();
    }
  };
  const socket = await bun.connect({
    unix: "path" in address ? address.path : `\0${address.abstract}`,
    socket: {
      data: (_socket, data) => listener.data(data),
      drain: flush,
      close: (_socket, error) => close(error),
      error: (_socket, error) => close(error),
    },
  });
  return {
    write(bytes) {
      if (closed) return;
      const idle = unsent.length === 0;
      unsent.push(bytes);
      if (idle) flush(socket);
    },
    keepAlive(active) {
      if (active) socket.ref();
      else socket.unref();
    },
    end() {
      unsent = [];
      socket.end();
      close(undefined);
    },
  };
}

async function connectWithNode(
  address: SocketAddress,
  listener: SocketListener,
): Promise<UnixSocket> {
  if (!("path" in address)) {
    throw Object.assign(
      new Error("abstract sockets need the built executable (Node 20 cannot reach them)"),
      {
        code: "EAFNOSUPPORT",
      },
    );
  }
  const net = await import("node:net");
  return new Promise((resolve, reject) => {
    const socket = net.createConnection({ path: address.path });
    let open = false;
    let closed = false;
    socket.once("connect", () => {
      open = true;
      resolve({
        write: (bytes) => void socket.write(bytes),
        keepAlive(active) {
          if (active) socket.ref();
          else socket.unref();
        },
        end() {
          socket.destroy();
          if (!closed) {
            closed = true;
            listener.closed(undefined);
          }
        },
      });
    });
    socket.on("data", (data: Uint8Array) => listener.data(data));
    socket.on("error", (error) => {
      if (!open) reject(error);
    });
    socket.on("close", () => {
      if (!open || closed) return;
      closed = true;
      listener.closed(undefined);
    });
  });
}
