/**
 * A session bus with a Secret Service that answers only as far as a test needs, so that a
 * helper talking to it stops, waiting, at a chosen point of a call: it answers the bus's
 * Hello, SearchItems (with the items given), ReadAlias and the service's Collections (one
 * collection), and OpenSession (with a valid public value), and nothing else: no property
 * of a collection or an item, no secret, no Delete. Messages are cut and decoded with our MessageReader and written with encodeMessage,
 * which wire.test.ts checks against bytes a real daemon produced. Its socket, in a
 * directory of its own, is open to every user: the helper may run as another.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
  encodeMessage,
  MessageReader,
  MessageType,
  type DbusValue,
  type Message,
} from "../../src/stores/secret-service/wire.ts";

const GUID = "0123456789abcdef0123456789abcdef";
const COLLECTION = "/org/freedesktop/secrets/collection/login";

export interface StalledSecretService {
  /** DBUS_SESSION_BUS_ADDRESS for the helper. */
  readonly address: string;
  /**
   * Resolves once a client has sent a call of `member` (SearchItems, GetSecrets, Delete, ...;
   * a property's Get as `Get:<name>`, such as `Get:Locked`).
   */
  called(member: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts the bus; SearchItems finds `items` (object paths), all unlocked. */
export async function startStalledSecretService(
  items: readonly string[],
): Promise<StalledSecretService> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-stalled-bus-"));
  chmodSync(dir, 0o777);
  const socketPath = path.join(dir, "bus");
  const seen = new Set<string>();
  const waiters: (() => void)[] = [];
  const sockets = new Set<net.Socket>();

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.once("close", () => sockets.delete(socket));
    const reader = new MessageReader();
    let serial = 1;
    let auth: string | undefined = "";
    const reply = (to: Message, signature: string, body: readonly DbusValue[]) =>
      socket.write(
        encodeMessage({
          type: MessageType.MethodReturn,
          serial: serial++,
          replySerial: to.serial,
          sender: to.destination ?? "org.freedesktop.DBus",
          destination: ":1.1",
          signature,
          body,
        }),
      );
    socket.on("data", (chunk: Buffer) => {
      let rest = new Uint8Array(chunk);
      if (auth !== undefined) {
        // The client's AUTH EXTERNAL, DATA and BEGIN, answered as dbus-daemon does.
        if (auth === "") socket.write(`DATA\r\nOK ${GUID}\r\n`);
        auth += chunk.toString("latin1");
        const begin = auth.indexOf("BEGIN\r\n");
        if (begin < 0) return;
        rest = new Uint8Array(Buffer.from(auth.slice(begin + "BEGIN\r\n".length), "latin1"));
        auth = undefined;
      }
      for (const message of reader.push(rest)) {
        const property = message.member === "Get" ? message.body[1] : undefined;
        if (message.member === "Hello") reply(message, "s", [":1.1"]);
        if (message.member === "SearchItems") reply(message, "aoao", [items, []]);
        if (message.member === "ReadAlias") reply(message, "o", [COLLECTION]);
        if (property === "Collections") {
          reply(message, "v", [{ signature: "ao", value: [COLLECTION] }]);
        }
        if (message.member === "OpenSession") {
          // dh-ietf1024: 2 is a public value in range; the shared key it makes is never used.
          reply(message, "vo", [
            { signature: "ay", value: new Uint8Array([2]) },
            "/org/freedesktop/secrets/session/1",
          ]);
        }
        if (message.member !== undefined) seen.add(message.member);
        if (typeof property === "string") seen.add(`Get:${property}`);
        for (const wake of waiters.splice(0)) wake();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, resolve);
  });
  chmodSync(socketPath, 0o777);
  return {
    address: `unix:path=${socketPath}`,
    async called(member) {
      while (!seen.has(member)) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
