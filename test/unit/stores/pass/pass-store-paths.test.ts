import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Hostname } from "../../../../src/protocol/hostname.ts";
import { normalizeHostname } from "../../../../src/protocol/hostname.ts";
import { decodeHostFromPath, encodeHostForPath } from "../../../../src/stores/pass/entry-names.ts";

describe("encodeHostForPath and decodeHostFromPath", () => {
  const cases: Array<[string, string]> = [
    ["example.com", "example.com"],
    ["example.com:8443", "example.com%3A8443"],
    ["xn--mnchen-3ya.de", "xn--mnchen-3ya.de"],
    ["127.0.0.1:8443", "127.0.0.1%3A8443"],
    ["example.com.", "example.com%2E"],
    ["example.com.:8443", "example.com.%3A8443"],
    ["localhost", "localhost"],
    ["a-b.c-d.example", "a-b.c-d.example"],
  ];
  for (const [input, encoded] of cases) {
    test(`${input} is stored as ${encoded} and read back exactly`, () => {
      const host = normalizeHostname(input);
      assert.equal(host, input, "the case is already in comparison form");
      assert.equal(encodeHostForPath(host), encoded);
      assert.equal(decodeHostFromPath(encoded), host);
    });
  }

  test("an encoded name has no colon, slash or backslash, and never starts or ends with a dot", () => {
    const hosts = [
      ...cases.map(([input]) => input),
      "münchen.de:1",
      "app.terraform.io.",
      "x.y:0",
      "1.2.3.4.:65535",
    ];
    for (const input of hosts) {
      const encoded = encodeHostForPath(normalizeHostname(input));
      assert.doesNotMatch(encoded, /[:/\\]/, encoded);
      assert.ok(!encoded.startsWith(".") && !encoded.endsWith("."), encoded);
      assert.notEqual(encoded, ".");
      assert.notEqual(encoded, "..");
    }
  });

  test("names that are special to file systems and pass are never produced, whatever the input", () => {
    // Not hostnames, so forced through the type; the encoding must still not yield them.
    for (const [text, encoded] of [
      [".", "%2E"],
      ["..", "%2E%2E"],
      ["...", "%2E.%2E"],
      ["a/../b", "a%2F..%2Fb"],
      ["C:\\x", "%43%3A%5Cx"],
      [".gpg-id", "%2Egpg-id"],
      ["100%", "100%25"],
    ] as const) {
      assert.equal(encodeHostForPath(text as Hostname), encoded);
    }
  });

  test("only this encoding of a hostname decodes; other files in the folder are not ours", () => {
    for (const segment of [
      "",
      "example.com%3a8443", // lower-case hex: another spelling
      "%65xample.com", // an escape where none is needed
      "Example.com", // upper case: not the comparison form
      "example.com:8443", // a raw colon
      "example.com.", // a raw trailing dot
      "%2E%2E", // ".." is not a hostname
      "a..b",
      "example.com%3A443", // Terraform drops the default port
      "%FF",
      "bad%2",
      "-leading-hyphen.example",
    ]) {
      assert.equal(decodeHostFromPath(segment), undefined, segment);
    }
  });

  test("distinct hosts never share an encoding", () => {
    const hosts = [
      "example.com",
      "example.com.",
      "example.com:8443",
      "example.com.:8443",
      "example.com:80",
    ];
    const encoded = new Set(hosts.map((host) => encodeHostForPath(normalizeHostname(host))));
    assert.equal(encoded.size, hosts.length);
  });
});
