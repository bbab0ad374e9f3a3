import assert from "node:assert/strict";
import { test } from "node:test";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import { storeForgetCommands } from "../../../src/stores/forget-commands.ts";

const HOST = normalizeHostname("app.terraform.io");

test("Windows: cmdkey deletes the entry by the name the Credential Manager store gives it", () => {
  assert.deepEqual(storeForgetCommands("keychain", "win32", "work", [HOST]), [
    ["cmdkey", "/delete:work/app.terraform.io"],
  ]);
});

test("pass deletes the service's folder without the list of hosts; a keychain needs it", () => {
  assert.deepEqual(storeForgetCommands("pass", "linux", "work", undefined), [
    ["pass", "rm", "-r", "-f", "terraform-credentials/work"],
  ]);
  assert.equal(storeForgetCommands("keychain", "linux", "work", undefined), undefined);
});
