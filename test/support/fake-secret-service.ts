/**
 * A Secret Service of our own on a private socket: a `node:net` server that plays both the
 * message bus (AUTH, Hello, AddMatch, RequestName) and one provider, in-process, so that a
 * test controls every answer. It speaks the dh-ietf1024-sha256-aes128-cbc-pkcs7 session with
 * node:crypto (OpenSSL), not with the client's code, and models what gnome-keyring does with
 * a locked collection: SearchItems still finds its items (by hashed attributes), but their
 * Attributes property holds only hashes, GetSecrets leaves them out, and CreateItem and
 * SetSecret are refused with IsLocked until an Unlock prompt has run.
 *
 * For faults no real daemon produces on demand, `hooks.beforeAnswer` may hold back an answer
 * (for ever, or until it has sent something else to the client).
 */
import {
  createCipheriv,
  createDecipheriv,
  createDiffieHellmanGroup,
  createHash,
  hkdfSync,
  randomBytes,
} from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
  encodeMessage,
  MessageReader,
  MessageType,
  type DbusValue,
  type Message,
  type OutgoingMessage,
  type Variant,
} from "../../src/stores/secret-service/wire.ts";

const BUS_NAME = "org.freedesktop.DBus";
const SECRETS = "org.freedesktop.secrets";
/** The provider's unique name: the sender of its replies and signals. */
export const SERVICE_UNIQUE_NAME = ":1.1";
export const COLLECTION = "/org/freedesktop/secrets/collection/login";
const NONE = "/";
const ERROR = {
  unknownMethod: "org.freedesktop.DBus.Error.UnknownMethod",
  isLocked: "org.freedesktop.Secret.Error.IsLocked",
  noSuchObject: "org.freedesktop.Secret.Error.NoSuchObject",
} as const;

export interface FakeItem {
  readonly path: string;
  readonly attributes: ReadonlyMap<string, string>;
  secret: Uint8Array;
}

/** One client connection, as the fake sees it. */
export interface FakeClient {
  /** The client's unique name on the fake bus. */
  readonly name: string;
  /** Writes a message from the bus's side to this client (serial and sender filled in). */
  send(fields: Omit<OutgoingMessage, "serial">): Promise<void>;
}

export interface FakeHooks {
  /**
   * Called before each call to the provider is answered: resolve to answer it, never
   * resolve to hang. Calls to the bus itself are always answered.
   */
  beforeAnswer?(call: Message, client: FakeClient): Promise<void> | void;
}

export interface FakeSecretService {
  /** DBUS_SESSION_BUS_ADDRESS for the client. */
  readonly address: string;
  /** The items, by path. */
  readonly items: Map<string, FakeItem>;
  /** Whether the collection is locked (its items too). */
  locked: boolean;
  /** Every call the clients made, in order. */
  readonly calls: Message[];
  close(): Promise<void>;
}

/** Starts the fake on a socket in a temp directory; close() stops it and removes both. */
export async function startFakeSecretService(hooks: FakeHooks = {}): Promise<FakeSecretService> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-fake-secrets-"));
  const socketPath = path.join(dir, "bus");
  const sockets = new Set<net.Socket>();
  let clients = 1;
  let itemCount = 0;
  let promptCount = 0;
  const sessions = new Map<string, Buffer>();
  const service: FakeSecretService = {
    address: `unix:path=${socketPath}`,
    items: new Map(),
    locked: false,
    calls: [],
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    const name = `:1.${++clients}`;
    let serial = 0;
    let auth = "";
    let authenticated = false;
    const reader = new MessageReader();
    const client: FakeClient = {
      name,
      send: (fields) =>
        new Promise((resolve) => {
          const bytes = encodeMessage({ destination: name, ...fields, serial: ++serial });
          if (socket.destroyed) resolve();
          else socket.write(bytes, () => resolve());
        }),
    };
    const reply = (to: Message, sender: string, signature = "", body: readonly DbusValue[] = []) =>
      client.send({
        type: MessageType.MethodReturn,
        replySerial: to.serial,
        sender,
        signature,
        body,
      });
    const fail = (to: Message, errorName: string, text: string) =>
      client.send({
        type: MessageType.Error,
        replySerial: to.serial,
        sender: SERVICE_UNIQUE_NAME,
        errorName,
        signature: "s",
        body: [text],
      });

    const answerBus = (call: Message) => {
      if (call.member === "Hello") return reply(call, BUS_NAME, "s", [name]);
      if (call.member === "ReleaseName") return reply(call, BUS_NAME, "u", [1]);
      if (call.member !== "RequestName") return reply(call, BUS_NAME);
      void reply(call, BUS_NAME, "u", [1]);
      return client.send({
        type: MessageType.Signal,
        sender: BUS_NAME,
        path: "/org/freedesktop/DBus",
        interface: BUS_NAME,
        member: "NameAcquired",
        signature: "s",
        body: [call.body[0] as string],
      });
    };

    const answerService = async (call: Message) => {
      await hooks.beforeAnswer?.(call, client);
      const ok = (signature = "", body: readonly DbusValue[] = []) =>
        reply(call, SERVICE_UNIQUE_NAME, signature, body);
      const item = service.items.get(call.path ?? "");
      const isItem = call.path?.startsWith(`${COLLECTION}/`) === true;
      if (isItem && item === undefined) {
        return fail(call, ERROR.unknownMethod, `No such interface on ${call.path}`);
      }
      switch (`${call.interface}.${call.member}`) {
        case "org.freedesktop.Secret.Service.OpenSession": {
          const ours = createDiffieHellmanGroup("modp2");
          ours.generateKeys();
          const theirs = (call.body[1] as Variant).value as Uint8Array;
          const shared = ours.computeSecret(theirs);
          const key = Buffer.from(hkdfSync("sha256", shared, Buffer.alloc(0), Buffer.alloc(0), 16));
          const sessionPath = `/org/freedesktop/secrets/session/s${sessions.size + 1}`;
          sessions.set(sessionPath, key);
          return ok("vo", [
            { signature: "ay", value: new Uint8Array(ours.getPublicKey()) },
            sessionPath,
          ]);
        }
        case "org.freedesktop.Secret.Service.SearchItems": {
          const wanted = call.body[0] as ReadonlyMap<string, string>;
          const found = [...service.items.values()]
            .filter((candidate) =>
              [...wanted].every(([key, value]) => candidate.attributes.get(key) === value),
            )
            .map((candidate) => candidate.path);
          return ok("aoao", service.locked ? [[], found] : [found, []]);
        }
        case "org.freedesktop.Secret.Service.ReadAlias":
          return ok("o", [call.body[0] === "default" ? COLLECTION : NONE]);
        case "org.freedesktop.Secret.Service.Unlock": {
          const objects = call.body[0] as readonly string[];
          if (!service.locked) return ok("aoo", [objects, NONE]);
          return ok("aoo", [[], `/org/freedesktop/secrets/prompt/p${++promptCount}`]);
        }
        case "org.freedesktop.Secret.Prompt.Prompt": {
          // No one to ask: the prompt completes as if the person had typed the password.
          service.locked = false;
          await ok();
          return client.send({
            type: MessageType.Signal,
            sender: SERVICE_UNIQUE_NAME,
            path: call.path!,
            interface: "org.freedesktop.Secret.Prompt",
            member: "Completed",
            signature: "bv",
            body: [false, { signature: "ao", value: [COLLECTION] }],
          });
        }
        case "org.freedesktop.Secret.Service.GetSecrets": {
          const key = sessions.get(call.body[1] as string);
          const secrets = new Map<DbusValue, DbusValue>();
          for (const itemPath of call.body[0] as readonly string[]) {
            const found = service.items.get(itemPath);
            // gnome-keyring leaves out what it cannot give: locked or gone.
            if (found === undefined || service.locked || key === undefined) continue;
            const iv = randomBytes(16);
            const cipher = createCipheriv("aes-128-cbc", key, iv);
            const ciphertext = Buffer.concat([cipher.update(found.secret), cipher.final()]);
            secrets.set(itemPath, [
              call.body[1] as string,
              new Uint8Array(iv),
              new Uint8Array(ciphertext),
              "text/plain",
            ]);
          }
          return ok("a{o(oayays)}", [secrets]);
        }
        case "org.freedesktop.DBus.Properties.Get": {
          const [iface, property] = call.body as readonly string[];
          if (call.path === "/org/freedesktop/secrets" && property === "Collections") {
            return ok("v", [{ signature: "ao", value: [COLLECTION] }]);
          }
          if (call.path === COLLECTION && property === "Locked") {
            return ok("v", [{ signature: "b", value: service.locked }]);
          }
          if (item !== undefined && iface === "org.freedesktop.Secret.Item") {
            if (property === "Attributes") {
              return ok("v", [
                { signature: "a{ss}", value: shownAttributes(item, service.locked) },
              ]);
            }
            if (property === "Locked") return ok("v", [{ signature: "b", value: service.locked }]);
          }
          return fail(call, ERROR.unknownMethod, `no property ${property}`);
        }
        case "org.freedesktop.Secret.Collection.CreateItem": {
          if (service.locked) return fail(call, ERROR.isLocked, "the collection is locked");
          const properties = call.body[0] as ReadonlyMap<string, Variant>;
          const attributes = properties.get("org.freedesktop.Secret.Item.Attributes")
            ?.value as ReadonlyMap<string, string>;
          const replace = call.body[2] === true;
          const same = [...service.items.values()].find((candidate) =>
            sameAttributes(candidate.attributes, attributes),
          );
          const secret = decrypt(sessions, call.body[1] as readonly DbusValue[]);
          if (replace && same !== undefined) {
            same.secret = secret;
            return ok("oo", [same.path, NONE]);
          }
          const itemPath = `${COLLECTION}/${++itemCount}`;
          service.items.set(itemPath, { path: itemPath, attributes: new Map(attributes), secret });
          return ok("oo", [itemPath, NONE]);
        }
        case "org.freedesktop.Secret.Item.SetSecret":
          if (service.locked) return fail(call, ERROR.isLocked, "the item is locked");
          item!.secret = decrypt(sessions, call.body[0] as readonly DbusValue[]);
          return ok();
        case "org.freedesktop.Secret.Item.Delete":
          if (service.locked) return fail(call, ERROR.isLocked, "the item is locked");
          service.items.delete(item!.path);
          return ok("o", [NONE]);
        default:
          return fail(call, ERROR.noSuchObject, `${call.interface}.${call.member}`);
      }
    };

    socket.on("data", (chunk: Buffer) => {
      let rest: Uint8Array = new Uint8Array(chunk);
      if (!authenticated) {
        if (auth === "") socket.write("DATA\r\nOK 0123456789abcdef0123456789abcdef\r\n");
        auth += chunk.toString("latin1");
        const begin = auth.indexOf("BEGIN\r\n");
        if (begin < 0) return;
        rest = new Uint8Array(Buffer.from(auth.slice(begin + "BEGIN\r\n".length), "latin1"));
        authenticated = true;
      }
      for (const call of reader.push(rest)) {
        if (call.type !== MessageType.MethodCall) continue;
        service.calls.push(call);
        void (call.destination === SECRETS ? answerService(call) : answerBus(call));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, resolve);
  });
  return service;
}

/**
 * What gnome-keyring shows of the attributes of an item loaded locked from disk: only their
 * hashes, under other names (`gkr:compat:hashed:NAME`).
 */
function shownAttributes(item: FakeItem, locked: boolean): Map<string, string> {
  if (!locked) return new Map(item.attributes);
  return new Map(
    [...item.attributes].map(([key, value]) => [
      `gkr:compat:hashed:${key}`,
      createHash("md5").update(value).digest("hex"),
    ]),
  );
}

function sameAttributes(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  return a.size === b.size && [...a].every(([key, value]) => b.get(key) === value);
}

function decrypt(sessions: ReadonlyMap<string, Buffer>, secret: readonly DbusValue[]): Uint8Array {
  const [session, iv, ciphertext] = secret as [string, Uint8Array, Uint8Array];
  const key = sessions.get(session);
  if (key === undefined) throw new Error(`no session ${session}`);
  const decipher = createDecipheriv("aes-128-cbc", key, iv);
  return new Uint8Array(Buffer.concat([decipher.update(ciphertext), decipher.final()]));
}
