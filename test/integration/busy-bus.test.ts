/**
 * A session bus whose queue of new connections is full: the kernel refuses a connect for
 * the moment (EAGAIN), which Bun reports as ECONNREFUSED. The helper must tell it from a bus
 * that is not there, try again until its deadline, and name the errno and the address.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { parseBusAddress } from "../../src/stores/secret-service/bus-address.ts";
import { runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startKeyringSession, type KeyringSession } from "../support/keyring-session.ts";
import { assertOneLineFailure } from "../support/protocol-suite.ts";

/**
 * Listens on argv[1] with a backlog of one and fills it with connects of its own that it
 * does not accept; prints "full". A line on stdin frees the queue: from then on it accepts,
 * and relays each connection to the real bus at argv[2].
 */
const FULL_QUEUE = `
import socket, sys, threading
path, target = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen(0)
fillers = []
while True:
    client = socket.socket(socket.AF_UNIX)
    client.setblocking(False)
    try:
        client.connect(path)
        fillers.append(client)
    except BlockingIOError:
        client.close()
        break
print("full", flush=True)
sys.stdin.readline()
for client in fillers:
    client.close()
def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    for end in (source, sink):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    accepted, _ = server.accept()
    upstream = socket.socket(socket.AF_UNIX)
    upstream.connect(target)
    threading.Thread(target=pump, args=(accepted, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, accepted), daemon=True).start()
`;

describe(
  "a session bus that accepts no more connections for the moment",
  { skip: linuxOnly("the busy bus suite") },
  () => {
    let session: KeyringSession;
    let relay: ChildProcessWithoutNullStreams;
    let socketPath: string;
    before(async () => {
      session = await startKeyringSession();
      const [bus] = parseBusAddress(session.env.DBUS_SESSION_BUS_ADDRESS!);
      assert.ok(bus !== undefined && "path" in bus);
      socketPath = path.join(session.env.XDG_RUNTIME_DIR!, "busy-bus");
      relay = spawn("python3", ["-c", FULL_QUEUE, socketPath, bus.path]);
      await new Promise<void>((resolve, reject) => {
        relay.once("error", reject);
        relay.once("exit", (code) => reject(new Error(`the relay exited (${code})`)));
        relay.stdout.setEncoding("utf8").on("data", (text: string) => {
          if (text.includes("full")) resolve();
        });
      });
    });
    after(async () => {
      relay.kill("SIGKILL");
      await session.close();
    });

    test("get tries again until --timeout, then says EAGAIN at that address, not 'no session bus'", async () => {
      const env = { ...session.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${socketPath}` };
      const result = await runHelper(["--timeout", "2", "get", "busy.example.com"], { env });
      assertOneLineFailure(result);
      assert.match(
        result.stderr,
        new RegExp(
          `^could not read from the keychain: the D-Bus session bus is overloaded \\(could not connect to the D-Bus session bus at unix:path=${socketPath}: EAGAIN, `,
        ),
      );
      assert.doesNotMatch(result.stderr, /log in to a desktop session/);
      // Retried, not refused at once: the deadline ended it (less a last backoff of up to 1.5 s).
      assert.ok(result.milliseconds >= 500, `gave up after ${result.milliseconds} ms`);

      // The same address, once the queue is free: a bus like any other.
      relay.stdin.write("free\n");
      const got = await runHelper(["get", "busy.example.com"], { env });
      assert.deepEqual([got.code, got.stdout, got.stderr], [0, "{}\n", ""]);
    });
  },
);
