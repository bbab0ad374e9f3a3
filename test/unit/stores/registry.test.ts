import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CliError, ExitCode } from "../../../src/errors.ts";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import { BACKENDS, storeFor, storesOn } from "../../../src/stores/registry.ts";

const HOST = normalizeHostname("app.terraform.io");

describe("the registry", () => {
  test("--backend keychain picks each platform's own keychain", () => {
    assert.deepEqual(
      (["linux", "freebsd", "darwin", "win32"] as const).map(
        (platform) =>
          storeFor("keychain", platform).deleteCommands("work", [HOST], {})?.[0]?.words[0],
      ),
      ["secret-tool", "secret-tool", "security", "cmdkey"],
    );
  });

  test("each platform has one store per name, and pass everywhere", () => {
    for (const platform of ["linux", "darwin", "win32", "openbsd"] as const) {
      const names = storesOn(platform).map(({ name }) => name);
      assert.equal(new Set(names).size, names.length, platform);
      assert.ok(names.includes("pass"), platform);
      assert.ok(names.includes("keychain"), platform);
    }
    assert.ok(BACKENDS.includes("keychain") && BACKENDS.includes("pass"));
  });

  test("a name no store has is a usage error", () => {
    assert.throws(
      () => storeFor("vault", "linux"),
      (error: unknown) =>
        error instanceof CliError &&
        error.exitCode === ExitCode.Usage &&
        /--backend "vault" is no store: here use keychain, wincred or pass/.test(error.message),
    );
  });
});

describe("the commands that delete a store's entries", () => {
  test("Windows: cmdkey deletes the entry by the name the Credential Manager store gives it", () => {
    assert.deepEqual(storeFor("keychain", "win32").deleteCommands("work", [HOST], {}), [
      { words: ["cmdkey", "/delete:work/app.terraform.io"] },
    ]);
  });

  test("pass deletes the service's folder without the list of hosts; a keychain needs it", () => {
    assert.deepEqual(storeFor("pass", "linux").deleteCommands("work", undefined, {}), [
      { words: ["pass", "rm", "-r", "-f", "terraform-credentials/work"] },
    ]);
    assert.equal(storeFor("keychain", "linux").deleteCommands("work", undefined, {}), undefined);
  });

  test("pass's command names the store PASSWORD_STORE_DIR chose", () => {
    assert.deepEqual(
      storeFor("pass", "linux").deleteCommands("work", undefined, { PASSWORD_STORE_DIR: "/s" }),
      [
        {
          words: ["pass", "rm", "-r", "-f", "terraform-credentials/work"],
          variable: { name: "PASSWORD_STORE_DIR", value: "/s" },
        },
      ],
    );
  });
});
