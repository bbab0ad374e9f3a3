import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isStoreCall, protocolCall } from "../../../src/cli/protocol-call.ts";

describe("protocolCall: the command lines Terraform runs, without commander", () => {
  test("a bare verb and hostname", () => {
    assert.deepEqual(protocolCall(["get", "app.terraform.io"]), {
      verb: "get",
      hostname: "app.terraform.io",
      given: {},
    });
  });

  test("options before the verb, spaced or with =, in any order, the last one winning", () => {
    assert.deepEqual(
      protocolCall(["--backend=pass", "--service", "a", "--service=work", "store", "h.example"]),
      { verb: "store", hostname: "h.example", given: { service: "work", backend: "pass" } },
    );
  });

  test("--timeout is read too, so a deadline in the CLI config's args keeps the fast path", () => {
    assert.deepEqual(protocolCall(["--timeout", "7.5", "get", "h.example"]), {
      verb: "get",
      hostname: "h.example",
      given: { timeout: 7.5 },
    });
  });

  const others: readonly (readonly string[])[] = [
    [],
    ["get"],
    ["get", "h", "extra"],
    ["Get", "h"],
    ["list"],
    ["--version"],
    ["get", "--help"],
    ["get", "-h"],
    ["--service", "get", "h"],
    ["--service", "--backend", "pass", "get", "h"],
    ["--service=", "get", "h"],
    ["--service", "bad name", "get", "h"],
    ["--backend", "vault", "forget", "h"],
    ["--unknown", "get", "h"],
    ["get", "h", "--service", "x"],
    ["--", "get", "h"],
    ["--timeout", "0", "get", "h"],
    ["--timeout=soon", "get", "h"],
  ];
  for (const argv of others) {
    test(`leaves ${JSON.stringify(argv)} to commander`, () => {
      assert.equal(protocolCall(argv), undefined);
    });
  }
});

describe("isStoreCall: whether a failed call must still read stdin", () => {
  for (const [argv, expected] of [
    [["store", "a.example"], true],
    [["--service", "store", "get", "a.example"], false],
    [["--backend", "pass", "--timeout=3", "store", "x"], true],
    [["exec", "--", "grep", "store"], false],
    [["--bogus", "store", "a.example"], true],
    [["get", "store"], false],
    [["--backend", "nope", "store", "a.example"], true],
    [["--timeout=soon", "store", "a.example"], true],
    [["--service", "--backend", "store", "a.example"], true],
    [["--service"], false],
  ] as const) {
    test(`${JSON.stringify(argv)}: ${expected}`, () => {
      assert.equal(isStoreCall(argv), expected);
    });
  }
});
