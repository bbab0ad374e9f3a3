/**
 * Terraform runs the helper in the user's project directory, which may be a clone of
 * someone else's repository. Nothing there may change what the helper runs: no bunfig.toml
 * preload, no .env, no package.json or tsconfig.json, no node_modules shadowing a package.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { runHelper } from "../support/helper-process.ts";
import { startDefaultKeychain } from "../support/keychain-backends.ts";
import type { ProtocolBackend } from "../support/protocol-suite.ts";
import { assertSilentSuccess } from "../support/protocol-suite.ts";

const TOKEN = "SECRET-hostile-directory-token";
const HOST = "hostile.example.com";

describe("a hostile working directory changes nothing the helper runs", () => {
  let session: ProtocolBackend;
  let args: readonly string[];
  let project: string;
  let marker: string;
  let env: Record<string, string>;
  before(async () => {
    session = await startDefaultKeychain();
    args = session.args;
    project = mkdtempSync(path.join(os.tmpdir(), "tfck-hostile-"));
    marker = path.join(project, "ran");
    // Every planted script records that it ran by creating the marker file, and prints.
    const plant = (name: string) =>
      `require("node:fs").appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(`${name}\n`)});` +
      `console.log(${JSON.stringify(`planted ${name} ran`)});`;
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
      writeFileSync(path.join(project, file), text);
    };
    write("bunfig.toml", 'preload = ["./preload.cjs"]\n[run]\npreload = ["./preload.cjs"]\n');
    write("preload.cjs", plant("bunfig preload"));
    // Each would move the addon cache, turn on debug output or pass extra options.
    write(
      ".env",
      [
        `XDG_CACHE_HOME=${path.join(project, "cache")}`,
        "TF_CREDENTIALS_KEYCHAIN_DEBUG=1",
        "BUN_OPTIONS=--preload ./preload.cjs",
        "NODE_OPTIONS=--require ./preload.cjs",
        "",
      ].join("\n"),
    );
    write(".env.local", "TF_CREDENTIALS_KEYCHAIN_DEBUG=1\n");
    write(
      "package.json",
      JSON.stringify({ name: "hostile", type: "commonjs", main: "preload.cjs", imports: {} }),
    );
    write(
      "tsconfig.json",
      JSON.stringify({ compilerOptions: { paths: { "*": ["./node_modules/*"] } } }),
    );
    for (const name of ["@napi-rs/keyring", "commander", "zod", "zod/mini"]) {
      write(
        `node_modules/${name}/package.json`,
        JSON.stringify({ name, version: "99.0.0", main: "index.js" }),
      );
      write(`node_modules/${name}/index.js`, plant(name));
    }
    env = { ...session.env };
  });
  after(async () => {
    await session.close();
    rmSync(project, { recursive: true, force: true });
  });

  test("store, get and list work as anywhere else and run nothing planted", async () => {
    assertSilentSuccess(
      await runHelper([...args, "store", HOST], {
        env,
        cwd: project,
        stdin: `{"token":"${TOKEN}"}`,
      }),
    );
    const got = await runHelper([...args, "get", HOST], { env, cwd: project });
    assert.equal(got.stderr, "");
    assert.equal(got.stdout, `{"token":"${TOKEN}"}\n`);
    assert.equal(got.code, 0);
    const listed = await runHelper([...args, "list"], { env, cwd: project });
    assert.equal(listed.stderr, "");
    assert.equal(listed.code, 0);
    assert.match(listed.stdout, new RegExp(HOST.replaceAll(".", "\\.")));
    assert.doesNotMatch(listed.stdout, /planted/);
    assert.equal(existsSync(marker), false, "a planted script ran");
    // The addon cache stayed where the real environment puts it.
    assert.equal(existsSync(path.join(project, "cache")), false);
  });
});
