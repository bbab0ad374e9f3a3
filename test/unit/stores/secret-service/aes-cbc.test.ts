import assert from "node:assert/strict";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { aes128Cbc } from "../../../../src/stores/secret-service/aes-cbc.ts";

function opensslEncrypt(key: Uint8Array, iv: Uint8Array, plaintext: Uint8Array): Uint8Array {
  const cipher = createCipheriv("aes-128-cbc", key, iv);
  return new Uint8Array(Buffer.concat([cipher.update(plaintext), cipher.final()]));
}

function opensslDecrypt(key: Uint8Array, iv: Uint8Array, ciphertext: Uint8Array): Uint8Array {
  const decipher = createDecipheriv("aes-128-cbc", key, iv);
  return new Uint8Array(Buffer.concat([decipher.update(ciphertext), decipher.final()]));
}

const hex = (text: string) => new Uint8Array(Buffer.from(text, "hex"));

describe("AES-128-CBC", () => {
  test("the cipher of FIPS 197's example (appendix C.1): one block, a zero IV", () => {
    const ciphertext = aes128Cbc(hex("000102030405060708090a0b0c0d0e0f")).encrypt(
      new Uint8Array(16),
      hex("00112233445566778899aabbccddeeff"),
    );
    assert.deepEqual(ciphertext.subarray(0, 16), hex("69c4e0d86a7b0430d8cdb78070b4c55a"));
  });

  test("OpenSSL decrypts what it encrypts, and the reverse, at every length up to six blocks", () => {
    for (let length = 0; length <= 96; length++) {
      for (let round = 0; round < 4; round++) {
        const key = randomBytes(16);
        const iv = randomBytes(16);
        const plaintext = randomBytes(length);
        const cipher = aes128Cbc(key);
        const ours = cipher.encrypt(iv, plaintext);
        assert.deepEqual(ours, opensslEncrypt(key, iv, plaintext), `encrypt, ${length} bytes`);
        assert.deepEqual(opensslDecrypt(key, iv, ours), new Uint8Array(plaintext));
        const theirs = opensslEncrypt(key, iv, plaintext);
        assert.deepEqual(cipher.decrypt(iv, theirs), new Uint8Array(plaintext), `${length} bytes`);
      }
    }
  });

  test("decrypting leaves the caller's bytes as they were, even a Buffer's", () => {
    const key = randomBytes(16);
    const iv = randomBytes(16);
    const ciphertext = Buffer.from(opensslEncrypt(key, iv, randomBytes(40)));
    const before = Buffer.from(ciphertext);
    aes128Cbc(key).decrypt(iv, ciphertext);
    assert.deepEqual(ciphertext, before);
  });

  test("a padding that is not PKCS#7's gives undefined: a wrong key, or bytes changed", () => {
    const key = randomBytes(16);
    const iv = randomBytes(16);
    // One block of padding after 16 bytes: its last byte follows the first block's (CBC).
    const ciphertext = opensslEncrypt(key, iv, new Uint8Array(16).fill(0x61));
    for (const change of [0x10, 0x01, 0xef]) {
      const tampered = ciphertext.slice();
      tampered[15]! ^= change;
      assert.equal(aes128Cbc(key).decrypt(iv, tampered), undefined, `last byte ^ ${change}`);
    }
    let refused = 0;
    for (let round = 0; round < 64; round++) {
      if (aes128Cbc(randomBytes(16)).decrypt(iv, ciphertext) === undefined) refused++;
    }
    // A random key passes the padding check about once in 256 (last byte 0x01).
    assert.ok(refused >= 60, `${refused} of 64 wrong keys refused`);
  });

  test("a key or an IV of another size is refused", () => {
    assert.throws(() => aes128Cbc(new Uint8Array(24)), RangeError);
    const cipher = aes128Cbc(new Uint8Array(16));
    assert.throws(() => cipher.encrypt(new Uint8Array(15), new Uint8Array(1)), RangeError);
    assert.throws(() => cipher.decrypt(new Uint8Array(17), new Uint8Array(16)), RangeError);
  });
});
