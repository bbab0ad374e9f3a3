/**
 * AES-128 (FIPS 197) in CBC mode with PKCS#7 padding: the cipher of the Secret Service's
 * `dh-ietf1024-sha256-aes128-cbc-pkcs7` session, which carries one secret or two per call.
 *
 * By hand (docs/build.md), because each ready-made one costs a call more than the cipher's
 * work: the runtime's WebCrypto is asynchronous and each of its calls waits for a thread pool
 * (a get was ~5% faster without them); `node:crypto` costs ~5 ms to load in the built
 * executable; @noble/ciphers builds tables of 65,536 entries as it loads (~15 ms in the
 * interpreter that runs a call). This is the textbook 32-bit form (FIPS 197 5.2, 5.3.5) with
 * tables of 256 words, made once per process while the service computes its half of the
 * exchange; a block takes a few microseconds. aes-cbc.test.ts checks it against OpenSSL in
 * both directions at every length up to six blocks.
 */

const BLOCK = 16;
const ROUNDS = 10;

interface Tables {
  readonly sbox: Uint8Array;
  readonly inverseSbox: Uint8Array;
  /** Round tables: SubBytes and MixColumns of a byte in each of the four rows. */
  readonly encrypt: readonly [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  /** The same for InvSubBytes and InvMixColumns. */
  readonly decrypt: readonly [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
}

let tables: Tables | undefined;

/** Doubling in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1. */
function double(byte: number): number {
  return ((byte << 1) ^ (byte & 0x80 ? 0x1b : 0)) & 0xff;
}

function rotateByte(byte: number, bits: number): number {
  return ((byte << bits) | (byte >>> (8 - bits))) & 0xff;
}

function makeTables(): Tables {
  // The S-box (FIPS 197 5.1.1): each byte's multiplicative inverse, found by walking the
  // powers of the generator 3 and of its inverse in step, then the affine transformation.
  const sbox = new Uint8Array(256);
  const inverseSbox = new Uint8Array(256);
  let power = 1;
  let inversePower = 1;
  do {
    power ^= double(power);
    // Times 3's inverse (0xf6); shifted bits above the byte never come back down.
    inversePower ^= inversePower << 1;
    inversePower ^= inversePower << 2;
    inversePower ^= inversePower << 4;
    inversePower &= 0xff;
    if (inversePower & 0x80) inversePower ^= 0x09;
    const substituted =
      inversePower ^
      rotateByte(inversePower, 1) ^
      rotateByte(inversePower, 2) ^
      rotateByte(inversePower, 3) ^
      rotateByte(inversePower, 4) ^
      0x63;
    sbox[power] = substituted;
    inverseSbox[substituted] = power;
  } while (power !== 1);
  // 0 has no inverse: its entry is the affine transformation of 0.
  sbox[0] = 0x63;
  inverseSbox[0x63] = 0;

  const encrypt = [0, 1, 2, 3].map(() => new Uint32Array(256)) as unknown as Tables["encrypt"];
  const decrypt = [0, 1, 2, 3].map(() => new Uint32Array(256)) as unknown as Tables["decrypt"];
  for (let x = 0; x < 256; x++) {
    const s = sbox[x] ?? 0;
    const s2 = double(s);
    // The column (2s, s, s, 3s), most significant byte first.
    const forward = ((s2 << 24) | (s << 16) | (s << 8) | (s2 ^ s)) >>> 0;
    const i = inverseSbox[x] ?? 0;
    const i2 = double(i);
    const i4 = double(i2);
    const i8 = double(i4);
    // The column (14i, 9i, 13i, 11i).
    const backward =
      (((i8 ^ i4 ^ i2) << 24) | ((i8 ^ i) << 16) | ((i8 ^ i4 ^ i) << 8) | (i8 ^ i2 ^ i)) >>> 0;
    // Rows 1 to 3 are the same column turned by a byte each.
    encrypt[0][x] = forward;
    encrypt[1][x] = ((forward >>> 8) | (forward << 24)) >>> 0;
    encrypt[2][x] = ((forward >>> 16) | (forward << 16)) >>> 0;
    encrypt[3][x] = ((forward >>> 24) | (forward << 8)) >>> 0;
    decrypt[0][x] = backward;
    decrypt[1][x] = ((backward >>> 8) | (backward << 24)) >>> 0;
    decrypt[2][x] = ((backward >>> 16) | (backward << 16)) >>> 0;
    decrypt[3][x] = ((backward >>> 24) | (backward << 8)) >>> 0;
  }
  return { sbox, inverseSbox, encrypt, decrypt };
}

/** The 44 words of the 11 round keys of a 16-byte key (FIPS 197 5.2). */
function expandKey(key: Uint8Array, sbox: Uint8Array): Uint32Array {
  const words = new Uint32Array(4 * (ROUNDS + 1));
  for (let i = 0; i < 4; i++) words[i] = readWord(key, 4 * i);
  let roundConstant = 1;
  for (let i = 4; i < words.length; i++) {
    let word = words[i - 1] ?? 0;
    if (i % 4 === 0) {
      // RotWord, SubWord, and the round constant.
      word =
        (((sbox[(word >>> 16) & 0xff] ?? 0) << 24) |
          ((sbox[(word >>> 8) & 0xff] ?? 0) << 16) |
          ((sbox[word & 0xff] ?? 0) << 8) |
          (sbox[word >>> 24] ?? 0)) ^
        (roundConstant << 24);
      roundConstant = double(roundConstant);
    }
    words[i] = ((words[i - 4] ?? 0) ^ word) >>> 0;
  }
  return words;
}

/**
 * The round keys of the equivalent inverse cipher (FIPS 197 5.3.5), in the order decryption
 * uses them: the last round key first, InvMixColumns applied to all but the first and last.
 */
function inverseKeys(keys: Uint32Array, { sbox, decrypt }: Tables): Uint32Array {
  const inverse = new Uint32Array(keys.length);
  for (let round = 0; round <= ROUNDS; round++) {
    for (let column = 0; column < 4; column++) {
      const word = keys[4 * (ROUNDS - round) + column] ?? 0;
      inverse[4 * round + column] =
        round === 0 || round === ROUNDS
          ? word
          : // The decryption tables hold InvMixColumns after InvSubBytes: undo the latter.
            ((decrypt[0][sbox[word >>> 24] ?? 0] ?? 0) ^
              (decrypt[1][sbox[(word >>> 16) & 0xff] ?? 0] ?? 0) ^
              (decrypt[2][sbox[(word >>> 8) & 0xff] ?? 0] ?? 0) ^
              (decrypt[3][sbox[word & 0xff] ?? 0] ?? 0)) >>>
            0;
    }
  }
  return inverse;
}

function readWord(bytes: Uint8Array, offset: number): number {
  return (
    (((bytes[offset] ?? 0) << 24) |
      ((bytes[offset + 1] ?? 0) << 16) |
      ((bytes[offset + 2] ?? 0) << 8) |
      (bytes[offset + 3] ?? 0)) >>>
    0
  );
}

function writeWord(bytes: Uint8Array, offset: number, word: number): void {
  bytes[offset] = word >>> 24;
  bytes[offset + 1] = word >>> 16;
  bytes[offset + 2] = word >>> 8;
  bytes[offset + 3] = word;
}

/**
 * One block in place (FIPS 197 5.1): the four columns as words, each round four table
 * lookups a column. ShiftRows takes row r of column c from column c + r.
 */
function encryptBlock(block: Uint8Array, keys: Uint32Array, { sbox, encrypt }: Tables): void {
  const [t0, t1, t2, t3] = encrypt;
  let s0 = readWord(block, 0) ^ (keys[0] ?? 0);
  let s1 = readWord(block, 4) ^ (keys[1] ?? 0);
  let s2 = readWord(block, 8) ^ (keys[2] ?? 0);
  let s3 = readWord(block, 12) ^ (keys[3] ?? 0);
  for (let k = 4; k < 4 * ROUNDS; k += 4) {
    const n0 =
      (t0[s0 >>> 24] ?? 0) ^
      (t1[(s1 >>> 16) & 0xff] ?? 0) ^
      (t2[(s2 >>> 8) & 0xff] ?? 0) ^
      (t3[s3 & 0xff] ?? 0) ^
      (keys[k] ?? 0);
    const n1 =
      (t0[s1 >>> 24] ?? 0) ^
      (t1[(s2 >>> 16) & 0xff] ?? 0) ^
      (t2[(s3 >>> 8) & 0xff] ?? 0) ^
      (t3[s0 & 0xff] ?? 0) ^
      (keys[k + 1] ?? 0);
    const n2 =
      (t0[s2 >>> 24] ?? 0) ^
      (t1[(s3 >>> 16) & 0xff] ?? 0) ^
      (t2[(s0 >>> 8) & 0xff] ?? 0) ^
      (t3[s1 & 0xff] ?? 0) ^
      (keys[k + 2] ?? 0);
    s3 =
      (t0[s3 >>> 24] ?? 0) ^
      (t1[(s0 >>> 16) & 0xff] ?? 0) ^
      (t2[(s1 >>> 8) & 0xff] ?? 0) ^
      (t3[s2 & 0xff] ?? 0) ^
      (keys[k + 3] ?? 0);
    s0 = n0;
    s1 = n1;
    s2 = n2;
  }
  // The last round has no MixColumns.
  writeWord(block, 0, lastRound(sbox, s0, s1, s2, s3, keys[40] ?? 0));
  writeWord(block, 4, lastRound(sbox, s1, s2, s3, s0, keys[41] ?? 0));
  writeWord(block, 8, lastRound(sbox, s2, s3, s0, s1, keys[42] ?? 0));
  writeWord(block, 12, lastRound(sbox, s3, s0, s1, s2, keys[43] ?? 0));
}

/** The inverse cipher's block (FIPS 197 5.3.5): InvShiftRows takes row r from column c - r. */
function decryptBlock(
  block: Uint8Array,
  keys: Uint32Array,
  { inverseSbox, decrypt }: Tables,
): void {
  const [t0, t1, t2, t3] = decrypt;
  let s0 = readWord(block, 0) ^ (keys[0] ?? 0);
  let s1 = readWord(block, 4) ^ (keys[1] ?? 0);
  let s2 = readWord(block, 8) ^ (keys[2] ?? 0);
  let s3 = readWord(block, 12) ^ (keys[3] ?? 0);
  for (let k = 4; k < 4 * ROUNDS; k += 4) {
    const n0 =
      (t0[s0 >>> 24] ?? 0) ^
      (t1[(s3 >>> 16) & 0xff] ?? 0) ^
      (t2[(s2 >>> 8) & 0xff] ?? 0) ^
      (t3[s1 & 0xff] ?? 0) ^
      (keys[k] ?? 0);
    const n1 =
      (t0[s1 >>> 24] ?? 0) ^
      (t1[(s0 >>> 16) & 0xff] ?? 0) ^
      (t2[(s3 >>> 8) & 0xff] ?? 0) ^
      (t3[s2 & 0xff] ?? 0) ^
      (keys[k + 1] ?? 0);
    const n2 =
      (t0[s2 >>> 24] ?? 0) ^
      (t1[(s1 >>> 16) & 0xff] ?? 0) ^
      (t2[(s0 >>> 8) & 0xff] ?? 0) ^
      (t3[s3 & 0xff] ?? 0) ^
      (keys[k + 2] ?? 0);
    s3 =
      (t0[s3 >>> 24] ?? 0) ^
      (t1[(s2 >>> 16) & 0xff] ?? 0) ^
      (t2[(s1 >>> 8) & 0xff] ?? 0) ^
      (t3[s0 & 0xff] ?? 0) ^
      (keys[k + 3] ?? 0);
    s0 = n0;
    s1 = n1;
    s2 = n2;
  }
  writeWord(block, 0, lastRound(inverseSbox, s0, s3, s2, s1, keys[40] ?? 0));
  writeWord(block, 4, lastRound(inverseSbox, s1, s0, s3, s2, keys[41] ?? 0));
  writeWord(block, 8, lastRound(inverseSbox, s2, s1, s0, s3, keys[42] ?? 0));
  writeWord(block, 12, lastRound(inverseSbox, s3, s2, s1, s0, keys[43] ?? 0));
}

/** A column of the last round: row r's byte from the r-th word given, through `box`. */
function lastRound(
  box: Uint8Array,
  a: number,
  b: number,
  c: number,
  d: number,
  key: number,
): number {
  return (
    ((((box[a >>> 24] ?? 0) << 24) |
      ((box[(b >>> 16) & 0xff] ?? 0) << 16) |
      ((box[(c >>> 8) & 0xff] ?? 0) << 8) |
      (box[d & 0xff] ?? 0)) ^
      key) >>>
    0
  );
}

/** A 16-byte key's CBC cipher. */
export interface AesCbc {
  /** The PKCS#7-padded ciphertext of `plaintext`, chained from `iv` (16 bytes). */
  encrypt(iv: Uint8Array, plaintext: Uint8Array): Uint8Array;
  /** The plaintext, or `undefined` when the padding is not PKCS#7's (a wrong key). */
  decrypt(iv: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined;
}

/** Makes the tables now, while there is time, rather than when the first key needs them. */
export function warmUpAes(): void {
  tables ??= makeTables();
}

export function aes128Cbc(key: Uint8Array): AesCbc {
  if (key.length !== BLOCK) throw new RangeError(`an AES-128 key is 16 bytes, not ${key.length}`);
  const made = (tables ??= makeTables());
  const keys = expandKey(key, made.sbox);
  const decryptionKeys = inverseKeys(keys, made);
  const checkIv = (iv: Uint8Array) => {
    if (iv.length !== BLOCK) throw new RangeError(`a CBC IV is 16 bytes, not ${iv.length}`);
  };
  return {
    encrypt(iv, plaintext) {
      checkIv(iv);
      const padding = BLOCK - (plaintext.length % BLOCK);
      const output = new Uint8Array(plaintext.length + padding);
      output.set(plaintext);
      output.fill(padding, plaintext.length);
      let previous = iv;
      for (let offset = 0; offset < output.length; offset += BLOCK) {
        const block = output.subarray(offset, offset + BLOCK);
        for (let i = 0; i < BLOCK; i++) block[i] = (block[i] ?? 0) ^ (previous[i] ?? 0);
        encryptBlock(block, keys, made);
        previous = block;
      }
      return output;
    },
    decrypt(iv, ciphertext) {
      checkIv(iv);
      if (ciphertext.length === 0 || ciphertext.length % BLOCK !== 0) return undefined;
      // A copy: a Buffer's slice() would be a view of the caller's bytes.
      const output = new Uint8Array(ciphertext);
      for (let offset = 0; offset < output.length; offset += BLOCK) {
        const block = output.subarray(offset, offset + BLOCK);
        decryptBlock(block, decryptionKeys, made);
        const previous = offset === 0 ? iv : ciphertext.subarray(offset - BLOCK, offset);
        for (let i = 0; i < BLOCK; i++) block[i] = (block[i] ?? 0) ^ (previous[i] ?? 0);
      }
      const padding = output[output.length - 1] ?? 0;
      let valid = padding >= 1 && padding <= BLOCK;
      for (let i = 1; i <= BLOCK && valid; i++) {
        if (i <= padding && output[output.length - i] !== padding) valid = false;
      }
      const plaintext = valid ? output.slice(0, output.length - padding) : undefined;
      output.fill(0);
      return plaintext;
    },
  };
}
