/**
 * The Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7` session (Secret Service API,
 * "Transfer of Secrets"): a Diffie-Hellman exchange in the 1024-bit MODP group of RFC 2409
 * (6.2, the Second Oakley Group) with generator 2, HKDF-SHA256 of the shared secret (no
 * salt, no info) to a 128-bit AES key, and AES-128-CBC with PKCS#7 padding and a random IV
 * per secret. The big-number work is BigInt; hashing and AES are the runtime's WebCrypto,
 * which costs nothing to load, unlike `node:crypto` in the built executable.
 */

export const ALGORITHM = "dh-ietf1024-sha256-aes128-cbc-pkcs7";

const PRIME = BigInt(
  "0xFFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF",
);
// Also the first row of the comb in publicValueOf(), which makes the public value.
const GENERATOR = 2n;
const PRIME_BYTES = 128;
// 256 random bits: twice the strength the 1024-bit group offers, and a quarter of the
// squarings a full-size exponent would take.
const PRIVATE_BYTES = 32;

/**
 * The generator's powers 2^(2^64), 2^(2^128) and 2^(2^192) mod p: with 2 itself, the rows of
 * a fixed-base comb that makes our public value in 64 squarings and as many multiplications,
 * where square-and-multiply takes 256 squarings (~0.5 ms on the critical path of every get).
 * session.test.ts computes them again.
 */
export const COMB_ROWS = [
  GENERATOR,
  BigInt(
    "0xC1F78F38074CCF2AC6D5FD85A9B7E6EA6FA1673A0BD3705A254C7A1B2F02690518F324B7BD64452770B308BE04836AC3D59ADA03A855964D64BA24288F71519A9D0B18811F842C5857334183E5930F441FC4F3C3284C3E2D463F95F887F2AF200A9AC06D5B91DEBAC9257AB8479CAC9C71747B274C1AB575EED456A3D7455FFE",
  ),
  BigInt(
    "0xC01D82B8AEF388CB004345A5514FD601719BC7F28E9B64FDE67A284BAD83E9C4E23FF4A94EC0A72170236513FDE80CA9FE038065BF2A0E814D9EC1D911A87DE078D407669BBDF6E05D556C547DF83308A6F0C03A05A8CCA313866E2AD6781D3BAF6F3E30C8A786723CE9D65EFBB0A42E98ABA2ECCDF7FF3A49155D305F7EDE25",
  ),
  BigInt(
    "0x6AAE57507A0A753B1042734320A793CBE9EC40482263E34DBFC04E877313AD6DAE6B20854D4AB76D690050B562D971DAE56BBD34F39E4022C9A01842E8EA1FE1E0EF1CA3EB43CA267D612BDBD22B09798E0190290B39C4532089250CB99E140880829F4C0020D0EC479C01D12F931B66623E1A2293C10B604EBB8656979CFE7D",
  ),
] as const;
const COMB_COLUMNS = (PRIVATE_BYTES * 8) / COMB_ROWS.length;

/** Our half of an exchange: the public value to send, and how to finish with the peer's. */
export interface KeyExchange {
  /** Our public value, big-endian and always 128 bytes (kwalletd refuses shorter ones). */
  readonly publicValue: Uint8Array;
  /** The session's AES key from the service's public value; throws `SessionError` on a bad one. */
  sessionKey(servicePublic: Uint8Array): Promise<SessionKey>;
}

export interface SessionKey {
  encrypt(plaintext: Uint8Array): Promise<{ iv: Uint8Array; ciphertext: Uint8Array }>;
  /** Throws `SessionError` when the bytes do not decrypt (wrong key, bad padding, bad IV). */
  decrypt(iv: Uint8Array, ciphertext: Uint8Array): Promise<Uint8Array>;
}

/** The service's half of the exchange, or a secret, could not be used. */
export class SessionError extends Error {
  /** True when a new exchange will do: this one's shared secret was merely unlucky. */
  readonly retry: boolean;

  constructor(message: string, retry = false) {
    super(message);
    this.name = "SessionError";
    this.retry = retry;
  }
}

/** Starts an exchange with fresh random bytes (`random` is for tests). */
export function startKeyExchange(
  random: (bytes: Uint8Array) => Uint8Array = (bytes) => crypto.getRandomValues(bytes),
): KeyExchange {
  let privateValue: bigint;
  let publicValue: Uint8Array;
  do {
    privateValue = toBigint(random(new Uint8Array(PRIVATE_BYTES))) | 1n;
    publicValue = toBytes(publicValueOf(privateValue), PRIME_BYTES);
  } while (misreadByOldKWallet(publicValue));
  return {
    publicValue,
    async sessionKey(servicePublic) {
      // Leading zero bytes are allowed (a signed encoding adds one), a longer value is not.
      if (servicePublic.length === 0 || servicePublic.length > PRIME_BYTES + 1) {
        throw new SessionError(`the service's public value is ${servicePublic.length} bytes long`);
      }
      const peer = toBigint(servicePublic);
      // 0, 1 and p-1 (and anything outside the group) would make the shared secret guessable.
      if (peer < 2n || peer > PRIME - 2n) {
        throw new SessionError("the service's public value is outside [2, p-2]");
      }
      const shared = toBytes(modPow(peer, privateValue, PRIME), PRIME_BYTES);
      if (shared[0] === 0) {
        // kwalletd before KWallet 6.25 (KDE bug 514194) derives its key from the shared secret
        // without its leading zero bytes; the specification and every other service keep all
        // 128. One session in 256 begins with a zero byte: it is refused here (a SessionError is
        // retried with a new exchange) instead of failing later on KWallet.
        shared.fill(0);
        throw new SessionError(
          "every exchange gave a shared secret that begins with a zero byte",
          true,
        );
      }
      try {
        return await deriveSessionKey(shared, random);
      } finally {
        shared.fill(0);
      }
    },
  };
}

/**
 * kwalletd before KWallet 6.25 (KDE bug 514194) reads our public value as a signed number
 * (QCA::BigInteger::fromArray) and hands it to OpenSSL in QCA's shortest signed form: a
 * value above 2^1024 - 2^1015 (first byte 0xff, second 0x80 or more) comes out without its
 * leading 0xff byte, another number, and the two sides derive different keys. One value in
 * 512 is such a one; drawing another private value costs ~0.3 ms, where the session would
 * fail every secret (a get cannot tell it from a broken service, a CreateItem is refused).
 * Every other service, and kwalletd from 6.25, reads 128 unsigned bytes like any others.
 */
function misreadByOldKWallet(publicValue: Uint8Array): boolean {
  return publicValue[0] === 0xff && (publicValue[1] ?? 0) >= 0x80;
}

async function deriveSessionKey(
  shared: Uint8Array,
  random: (bytes: Uint8Array) => Uint8Array,
): Promise<SessionKey> {
  const subtle = crypto.subtle;
  const material = await subtle.importKey("raw", shared, "HKDF", false, ["deriveBits"]);
  const bits = new Uint8Array(
    await subtle.deriveBits(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new Uint8Array(0) },
      material,
      128,
    ),
  );
  const key = await subtle.importKey("raw", bits, "AES-CBC", false, ["encrypt", "decrypt"]);
  bits.fill(0);
  return {
    async encrypt(plaintext) {
      const iv = random(new Uint8Array(16));
      const ciphertext = new Uint8Array(
        await subtle.encrypt({ name: "AES-CBC", iv }, key, plaintext),
      );
      return { iv, ciphertext };
    },
    async decrypt(iv, ciphertext) {
      if (iv.length !== 16) throw new SessionError(`the secret's IV is ${iv.length} bytes, not 16`);
      if (ciphertext.length === 0 || ciphertext.length % 16 !== 0) {
        throw new SessionError(
          `the encrypted secret is ${ciphertext.length} bytes, not whole AES blocks`,
        );
      }
      try {
        return new Uint8Array(await subtle.decrypt({ name: "AES-CBC", iv }, key, ciphertext));
      } catch {
        throw new SessionError("the secret did not decrypt with the session key");
      }
    },
  };
}

/**
 * base^exponent mod modulus, four bits at a time: the base's first 15 powers, then per hex
 * digit of the exponent four squarings and at most one multiply (a quarter fewer steps than
 * one multiply per set bit). It follows GetSecrets on the wire: the less, the sooner a get
 * can decrypt.
 */
export function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  const powers = [1n % modulus, base % modulus];
  for (let digit = 2; digit < 16; digit++) {
    powers.push(((powers[digit - 1] ?? 1n) * (powers[1] ?? 1n)) % modulus);
  }
  let result = 1n % modulus;
  let leading = true;
  for (const digit of exponent.toString(16)) {
    if (!leading) for (let i = 0; i < 4; i++) result = (result * result) % modulus;
    leading = false;
    const value = parseInt(digit, 16);
    if (value !== 0) result = (result * (powers[value] ?? 1n)) % modulus;
  }
  return result;
}

/**
 * 2^exponent mod p for an exponent below 2^256, by the fixed-base comb: the exponent's four
 * 64-bit words are read a bit of each at a time, from the top, and each column multiplies in
 * the product of the rows whose word has a 1 there (one of 15, made on first use).
 */
function publicValueOf(exponent: bigint): bigint {
  const products = (combProducts ??= combProductsOf(COMB_ROWS));
  const bits = exponent.toString(2).padStart(COMB_ROWS.length * COMB_COLUMNS, "0");
  let result = 1n;
  for (let column = 0; column < COMB_COLUMNS; column++) {
    result = (result * result) % PRIME;
    let rows = 0;
    for (let row = 0; row < COMB_ROWS.length; row++) {
      // Row `row` is the word of weight 2^(64·row): the string holds the highest word first.
      if (bits[bits.length - COMB_COLUMNS * (row + 1) + column] === "1") rows |= 1 << row;
    }
    if (rows !== 0) result = (result * (products[rows] ?? 1n)) % PRIME;
  }
  return result;
}

let combProducts: bigint[] | undefined;

/** products[k]: the product mod p of the rows whose bits are set in k. */
function combProductsOf(rows: readonly bigint[]): bigint[] {
  const products = [1n];
  for (let k = 1; k < 2 ** rows.length; k++) {
    const lowest = 31 - Math.clz32(k & -k);
    products.push(((products[k & (k - 1)] ?? 1n) * (rows[lowest] ?? 1n)) % PRIME);
  }
  return products;
}

/**
 * Starts the runtime's WebCrypto (about 1 ms the first time) while the caller waits for
 * the service, instead of after its answer.
 */
export function warmUpCrypto(): void {
  crypto.subtle.digest("SHA-256", new Uint8Array(0)).catch(() => {
    // Only a head start; the real calls report their own failures.
  });
}

function toBigint(bytes: Uint8Array): bigint {
  let hex = "0x0";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return BigInt(hex);
}

/** Big-endian, left-padded with zeros to `length` bytes. */
function toBytes(value: bigint, length: number): Uint8Array {
  const hex = value.toString(16).padStart(length * 2, "0");
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** For tests that play the service's side: the group, and our public value as a number. */
export const GROUP = { prime: PRIME, generator: GENERATOR, bytes: PRIME_BYTES } as const;
