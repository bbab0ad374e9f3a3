import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { wslMachine } from "../../../../src/stores/wincred/wsl-machine.ts";

describe("wslMachine: WSL found by its interop entry under the root", () => {
  const top = mkdtempSync(path.join(os.tmpdir(), "tfck-wsl-unit-"));
  after(() => rmSync(top, { recursive: true, force: true }));
  const root = (name: string, files: Record<string, string>) => {
    const dir = path.join(top, name);
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    mkdirSync(dir, { recursive: true });
    return { TF_CREDENTIALS_KEYCHAIN_WSL_ROOT: dir };
  };
  const entry = "proc/sys/fs/binfmt_misc/WSLInterop";

  test("no entry: not WSL, whatever /proc/version says (Docker on WSL 2)", () => {
    const env = root("docker", { "proc/version": "Linux version 5.15 (microsoft-standard-WSL2)" });
    assert.equal(wslMachine(env).interop, undefined);
  });
  test("the entry enabled", () => {
    assert.equal(
      wslMachine(root("on", { [entry]: "enabled\ninterpreter /init\n" })).interop,
      "enabled",
    );
  });
  test("the entry disabled", () => {
    assert.equal(wslMachine(root("off", { [entry]: "disabled\n" })).interop, "disabled");
  });
  test("the late entry enabled (systemd registered it): enabled", () => {
    const env = root("late", { [entry]: "disabled\n", [`${entry}-late`]: "enabled\n" });
    assert.equal(wslMachine(env).interop, "enabled");
  });
  test("the mount root from etc/wsl.conf, and the launcher's words", () => {
    const env = {
      ...root("conf", { [entry]: "enabled\n", "etc/wsl.conf": "[automount]\nroot=/win\n" }),
      TF_CREDENTIALS_KEYCHAIN_WSL_LAUNCHER: "env  wine64",
    };
    const machine = wslMachine(env);
    assert.equal(machine.mountRoot, "/win/");
    assert.deepEqual(machine.launcher, ["env", "wine64"]);
  });
  test("without the stand-ins: the machine's own root and no launcher", () => {
    const machine = wslMachine({});
    assert.equal(machine.root, "/");
    assert.deepEqual(machine.launcher, []);
  });
});
