import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { storedTokens } from "../../../src/commands/exec.ts";
import { CliError } from "../../../src/errors.ts";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import { createMemoryStore } from "../../support/memory-store.ts";

const h = normalizeHostname;

describe("storedTokens", () => {
  const entries = {
    "a.example.com": '{"token":"ta"}',
    "b.example.com": '{"token":"tb","org":"x"}',
    "notoken.example.com": '{"org":"x"}',
    "numeric.example.com": '{"token":5}',
    "garbage.example.com": "not json",
  };

  test("takes every host with a string token and leaves the others out", async () => {
    const tokens = await storedTokens(createMemoryStore(entries));
    assert.deepEqual(
      [...tokens],
      [
        ["a.example.com", "ta"],
        ["b.example.com", "tb"],
      ],
    );
  });

  test("with hosts given, takes only those", async () => {
    const tokens = await storedTokens(createMemoryStore(entries), [h("b.example.com")]);
    assert.deepEqual([...tokens], [["b.example.com", "tb"]]);
  });

  test("a given host without a token is an error that names it, not the token", async () => {
    for (const host of ["absent.example.com", "notoken.example.com", "garbage.example.com"]) {
      await assert.rejects(storedTokens(createMemoryStore(entries), [h(host)]), (error) => {
        assert.ok(error instanceof CliError);
        assert.match(error.message, new RegExp(host.replaceAll(".", "\\.")));
        return true;
      });
    }
  });

  test("a token with a NUL character is left out, with its host (never the token) told", async () => {
    const store = createMemoryStore({
      ...entries,
      "nul.example.com": '{"token":"SECRET\\u0000tail"}',
    });
    const told: string[] = [];
    const tokens = await storedTokens(store, undefined, (host) => told.push(host));
    assert.deepEqual([...tokens.keys()], ["a.example.com", "b.example.com"]);
    assert.deepEqual(told, ["nul.example.com"]);
    await assert.rejects(storedTokens(store, [h("nul.example.com")]), (error) => {
      assert.ok(error instanceof CliError);
      assert.match(error.message, /nul\.example\.com holds a NUL character/);
      assert.doesNotMatch(error.message, /SECRET|tail/);
      return true;
    });
  });

  test("only reads the store", async () => {
    const store = createMemoryStore(entries);
    await storedTokens(store);
    assert.ok(store.calls.every(([operation]) => operation === "list" || operation === "get"));
  });
});
