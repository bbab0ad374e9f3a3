import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { CliError, ExitCode } from "../../../src/errors.ts";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import { BACKENDS, storeFor, storesHere, storesOn } from "../../../src/stores/registry.ts";
import type { StoreDescription } from "../../../src/stores/store-description.ts";
import { FIXES } from "../../../src/fixes.ts";
import type { Machine } from "../../../src/system/io.ts";

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

describe("the stores offered on a machine", () => {
  const linux = (env: Record<string, string>): Machine => ({
    env,
    platform: "linux",
    arch: "x64",
    homedir: "/home/u",
    execPath: "/bin/helper",
    isSea: true,
    uid: 1000,
  });

  test("wincred only on WSL (its interop entry, on or off), unless it is the one chosen", async (t) => {
    const root = mkdtempSync(path.join(os.tmpdir(), "tfck-registry-"));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const names = async (machine: Machine, chosen?: string) =>
      (await storesHere(machine, chosen === undefined ? undefined : storeFor(chosen, "linux"))).map(
        ({ name }) => name,
      );
    const plainLinux = linux({ TF_CREDENTIALS_KEYCHAIN_WSL_ROOT: root });
    assert.deepEqual(await names(plainLinux), ["keychain", "pass"]);
    assert.deepEqual(await names(plainLinux, "wincred"), ["keychain", "wincred", "pass"]);
    mkdirSync(path.join(root, "proc/sys/fs/binfmt_misc"), { recursive: true });
    writeFileSync(path.join(root, "proc/sys/fs/binfmt_misc/WSLInterop"), "disabled\n");
    assert.deepEqual(await names(plainLinux), ["keychain", "wincred", "pass"]);
  });

  test("wincred deletes from WSL with cmdkey.exe, by the Windows helper's entry names", () => {
    assert.deepEqual(storeFor("wincred", "linux").deleteCommands("work", [HOST], {}), [
      { words: ["cmdkey.exe", "/delete:work/app.terraform.io"] },
    ]);
  });
});

describe("the commands that delete a store's entries", () => {
  test("Windows: cmdkey deletes the entry by the name the Credential Manager store gives it", () => {
    assert.deepEqual(storeFor("keychain", "win32").deleteCommands("work", [HOST], {}), [
      { words: ["cmdkey", "/delete:work/app.terraform.io"] },
    ]);
  });

  test("pass deletes entry by entry, which keeps the folder's .gpg-id (a team's recipients); without the list of hosts, nothing", () => {
    assert.deepEqual(storeFor("pass", "linux").deleteCommands("work", [HOST], {}), [
      { words: ["pass", "rm", "-f", "terraform-credentials/work/app.terraform.io"] },
    ]);
    assert.equal(storeFor("pass", "linux").deleteCommands("work", undefined, {}), undefined);
    assert.equal(storeFor("keychain", "linux").deleteCommands("work", undefined, {}), undefined);
  });

  test("pass's command names the store PASSWORD_STORE_DIR chose", () => {
    assert.deepEqual(
      storeFor("pass", "linux").deleteCommands("work", [HOST], { PASSWORD_STORE_DIR: "/s" }),
      [
        {
          words: ["pass", "rm", "-f", "terraform-credentials/work/app.terraform.io"],
          variable: { name: "PASSWORD_STORE_DIR", value: "/s" },
        },
      ],
    );
  });
});

describe("each store folder", () => {
  const storesDir = path.join(import.meta.dirname, "../../../src/stores");
  const folders = readdirSync(storesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  const registered = new Set(
    (["linux", "darwin", "win32"] as const).flatMap((platform) => storesOn(platform)),
  );

  for (const folder of folders) {
    test(`${folder}/ exports one description, listed in the registry, with the fixes it gives`, async () => {
      const exported = Object.values(
        (await import(path.join(storesDir, folder, "description.ts"))) as Record<string, unknown>,
      );
      assert.equal(exported.length, 1, "one export");
      const [description] = exported as StoreDescription[];
      assert.ok(description !== undefined && registered.has(description), "in the registry");
      // A situation the folder's code names, as a string, is a fix the store gives.
      const code = readdirSync(path.join(storesDir, folder))
        .filter((file) => file.endsWith(".ts") && file !== "description.ts")
        .map((file) => readFileSync(path.join(storesDir, folder, file), "utf8"))
        .join("\n");
      const given = Object.keys(FIXES).filter((situation) => code.includes(`"${situation}"`));
      assert.deepEqual([...description.fixes].sort(), [...given].sort());
    });
  }
});
