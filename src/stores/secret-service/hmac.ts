import { builtin } from "../../system/lazy-builtins.ts";

interface BunHasher {
  update(data: Uint8Array): BunHasher;
  digest(): Uint8Array;
}

interface BunCrypto {
  CryptoHasher: new (algorithm: "sha256", hmacKey: Uint8Array) => BunHasher;
}

/**
 * HMAC-SHA256 of `data` under `key`, synchronously: Bun's own hasher in the built executable
 * (WebCrypto's HMAC would wait for a thread pool, node:crypto costs ~5 ms to load there);
 * node:crypto under Node (the tests, `npm start`).
 */
export function hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array {
  const bun = (globalThis as { Bun?: BunCrypto }).Bun;
  if (bun !== undefined) return new bun.CryptoHasher("sha256", key).update(data).digest();
  const hmac = builtin("node:crypto").createHmac("sha256", key);
  return new Uint8Array(hmac.update(data).digest());
}
