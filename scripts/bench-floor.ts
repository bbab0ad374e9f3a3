/**
 * The floor of a get, for `npm run bench`: the Bun features a `get` on the Secret Service
 * uses, each once, with as little JavaScript as can use them: bun:ffi's prctl (no core
 * dumps), a 1024-bit BigInt exponentiation (the session's key exchange), a unix socket to the
 * session bus, WebCrypto's AES-CBC (the secret), and a FileSink write of the answer. What the
 * helper costs above this program is its own code; what this costs above an empty program is
 * Bun's, for this job. Compiled by the bench with the build's flags, never bundled into the
 * helper.
 */
import { dlopen } from "bun:ffi";

interface Socket {
  write(data: string): number;
  end(): void;
}
interface BunRuntime {
  connect(options: {
    unix: string;
    socket: {
      open(socket: Socket): void;
      data(socket: Socket, data: Uint8Array): void;
      close(): void;
    };
  }): Promise<Socket>;
  file(path: string): { writer(): { write(bytes: Uint8Array): number; flush(): unknown } };
}
const bun = (globalThis as unknown as { Bun: BunRuntime }).Bun;

const libc = dlopen("libc.so.6", {
  prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
});
libc.symbols.prctl(4, 0n, 0n, 0n, 0n);
libc.close();

const modulus = 2n ** 1024n - 1093337n;
let power = 1n;
let base = 7n;
for (let bit = 0; bit < 256; bit++) {
  power = (power * base) % modulus;
  base = (base * base) % modulus;
}

const address = process.env.DBUS_SESSION_BUS_ADDRESS ?? "";
const socketPath = /unix:path=([^,;]+)/.exec(address)?.[1] ?? "/nonexistent";
let received = 0;
await new Promise<void>((resolve) => {
  void bun.connect({
    unix: socketPath,
    socket: {
      open: (socket) => socket.write("\0AUTH EXTERNAL 30\r\n"),
      data: (socket, data) => {
        received += data.byteLength;
        socket.end();
        resolve();
      },
      close: resolve,
    },
  });
});

const iv = new Uint8Array(16);
const key = await crypto.subtle.importKey("raw", new Uint8Array(16), "AES-CBC", false, [
  "encrypt",
  "decrypt",
]);
const ciphertext = await crypto.subtle.encrypt({ name: "AES-CBC", iv }, key, new Uint8Array(20));
await crypto.subtle.decrypt({ name: "AES-CBC", iv }, key, ciphertext);

const writer = bun.file("/proc/self/fd/1").writer();
writer.write(new TextEncoder().encode(`{"token":"${String(power % 10n)}${String(received)}"}\n`));
await writer.flush();
