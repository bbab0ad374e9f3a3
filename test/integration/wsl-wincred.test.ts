/**
 * --backend wincred on a WSL stand-in whose Windows side is Wine (test/support/wsl-stand-in.ts),
 * for a Windows user whose %APPDATA% holds a space and non-ASCII letters: a token stored on
 * either side is the other's; list, exec, doctor, install and uninstall speak of the
 * Windows side; and the faults (interop off, no Windows helper, a hung .exe) each end in one
 * line that says what to do. The conformance table runs against the same store
 * (test/conformance/wsl-wincred.test.ts).
 */
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { runHelper } from "../support/helper-process.ts";
import { assertOneLineFailure, assertSilentSuccess } from "../support/protocol-suite.ts";
import { wineMissing } from "../support/wine-prefix.ts";
import {
  startWslStandIn,
  WINDOWS_HELPER_IN_APPDATA,
  type WslStandIn,
} from "../support/wsl-stand-in.ts";
import { PATIENCE_MS } from "../support/timing.ts";

const USER = "Jörg Müller";
const execFileAsync = promisify(execFile);

test("--backend wincred where this is not WSL (no interop entry): one line that says so", async (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), "tfck-not-wsl-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  // /proc/version as Docker on WSL 2 has it: not what WSL is recognised by.
  mkdirSync(path.join(root, "proc"));
  writeFileSync(
    path.join(root, "proc/version"),
    "Linux version 5.15.0 (microsoft-standard-WSL2)\n",
  );
  const result = await runHelper(["--backend", "wincred", "get", "app.example.com"], {
    env: { PATH: process.env.PATH, HOME: root, TF_CREDENTIALS_KEYCHAIN_WSL_ROOT: root },
  });
  assertOneLineFailure(result);
  assert.match(result.stderr, /^--backend wincred works only in WSL .*WSLInterop is missing/);
});

// Wine's own Credential Manager is read here: the stand-in's, even in a real WSL.
const missing = process.platform === "linux" ? wineMissing() : "SKIP: Wine runs on Linux only";
if (missing !== undefined) {
  test("--backend wincred on a WSL stand-in", { skip: missing }, () => {});
} else {
  describe("--backend wincred on a WSL stand-in, %APPDATA% with a space and non-ASCII letters", () => {
    let wsl: WslStandIn;
    before(async () => {
      wsl = await startWslStandIn({ user: USER });
    });
    after(async () => {
      await wsl.close();
    });
    const fromWsl = (args: readonly string[], stdin?: string, env = wsl.env) =>
      runHelper(["--backend", "wincred", ...args], {
        env,
        timeoutMs: PATIENCE_MS,
        ...(stdin === undefined ? {} : { stdin }),
      });
    const fromWindows = (args: readonly string[], stdin?: string) =>
      runHelper(args, {
        env: wsl.wine.env,
        command: wsl.windowsHelperCommand(),
        timeoutMs: PATIENCE_MS,
        ...(stdin === undefined ? {} : { stdin }),
      });

    test("the Windows user's %APPDATA% holds a space and non-ASCII letters", () => {
      assert.ok(wsl.appData.includes(USER), wsl.appData);
    });

    test("a token stored in WSL is the one Terraform on Windows gets", async () => {
      assertSilentSuccess(await fromWsl(["store", "wsl.example.com"], '{"token":"from-wsl"}'));
      const got = await fromWindows(["get", "wsl.example.com"]);
      assert.equal(got.stderr, "");
      assert.equal(got.stdout, '{"token":"from-wsl"}\n');
      // The entry is the Windows helper's own: the target its uninstall names.
      const entry = await wsl.wine.readCredential("terraform-credentials/wsl.example.com");
      assert.equal(entry?.userName, "wsl.example.com");
    });

    test("a token stored on Windows is the one WSL gets, and forget there forgets it here", async () => {
      assertSilentSuccess(
        await fromWindows(["store", "windows.example.com"], '{"token":"from-windows"}'),
      );
      const got = await fromWsl(["get", "windows.example.com"]);
      assert.equal(got.stderr, "");
      assert.equal(got.stdout, '{"token":"from-windows"}\n');
      assertSilentSuccess(await fromWsl(["forget", "windows.example.com"]));
      assert.equal((await fromWindows(["get", "windows.example.com"])).stdout, "{}\n");
    });

    test("list and exec go through the Windows helper", async () => {
      assertSilentSuccess(await fromWsl(["store", "exec.example.com"], '{"token":"exec-token"}'));
      const listed = await fromWsl(["list", "--json"]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(JSON.parse(listed.stdout), ["exec.example.com", "wsl.example.com"]);
      const ran = await fromWsl([
        "exec",
        "--host",
        "exec.example.com",
        "--",
        "sh",
        "-c",
        'test "$TF_TOKEN_exec_example_com" = exec-token',
      ]);
      assert.equal(ran.code, 0, ran.stderr);
    });

    test("doctor reports the Windows side: interop, the .exe and its version, Credential Manager through it", async () => {
      const version = (await fromWindows(["--version"])).stdout.trim();
      // The keychain chosen (no Secret Service here): wincred is the store that works.
      const keychain = await runHelper(["doctor", "--offline"], {
        env: wsl.env,
        timeoutMs: PATIENCE_MS,
      });
      const line = keychain.stdout
        .split("\n")
        .find((text) => text.includes("--backend wincred works here too:"));
      assert.equal(
        line?.trim(),
        `ok    --backend wincred works here too: WSL interop runs the Windows helper C:\\users\\${USER}\\AppData\\Roaming\\terraform.d\\plugins\\terraform-credentials-keychain.exe (${version}), and Windows Credential Manager answers through it (2 hosts of service "terraform-credentials")`,
      );
      const result = await fromWsl(["doctor", "--offline"]);
      assert.match(result.stdout, /^ok {4}store --backend wincred .*: reachable, 2 hosts stored$/m);
    });

    test("install with no Secret Service prints the wincred install, which then works as printed", async () => {
      const installed = await runHelper(["install"], { env: wsl.env, timeoutMs: PATIENCE_MS });
      assert.equal(installed.code, 0, installed.stderr);
      const [, command] =
        /^ +or store in the Windows login's Credential Manager \(shared with Terraform on Windows\) instead: "([^"]+)"$/m.exec(
          installed.stdout,
        ) ?? [];
      assert.ok(command !== undefined, installed.stdout);
      assert.match(command, / --backend wincred install --force$/);
      const { stdout } = await execFileAsync("sh", ["-c", command], { env: wsl.env });
      assert.match(stdout, /credentials_helper block/);
      // Now the block selects wincred: a get with no options reads the Windows entry.
      const rc = readFileSync(path.join(wsl.env.HOME!, ".terraformrc"), "utf8");
      assert.match(rc, /args = \["--backend", "wincred", "--service", "terraform-credentials"\]/);
      const listed = await runHelper(["list", "--json"], { env: wsl.env, timeoutMs: PATIENCE_MS });
      assert.deepEqual(JSON.parse(listed.stdout), ["exec.example.com", "wsl.example.com"]);
    });

    test("uninstall prints cmdkey.exe lines that name the Windows entries", async () => {
      const result = await fromWsl(["uninstall"]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(
        result.stdout,
        /^the tokens for exec\.example\.com, wsl\.example\.com stay in the Windows login's Credential Manager \(shared with Terraform on Windows\) \(service "terraform-credentials"\); to delete them, run: cmdkey\.exe \/delete:terraform-credentials\/exec\.example\.com && cmdkey\.exe \/delete:terraform-credentials\/wsl\.example\.com$/m,
      );
      // Wine has no cmdkey: the entries it names are there, under exactly those targets.
      for (const host of ["exec.example.com", "wsl.example.com"])
        assert.ok(await wsl.wine.readCredential(`terraform-credentials/${host}`), host);
    });

    test("interop switched off: one line that says so and how to switch it on", async () => {
      const result = await fromWsl(["get", "wsl.example.com"], undefined, wsl.interopOffEnv);
      assertOneLineFailure(result);
      assert.match(
        result.stderr,
        /^WSL interop is switched off, .*remove enabled=false under \[interop\] in \/etc\/wsl\.conf/,
      );
    });

    describe("with the Windows helper replaced", () => {
      const helper = () => path.join(wsl.appData, WINDOWS_HELPER_IN_APPDATA);
      const aside = () => `${helper()}.aside`;
      before(() => renameSync(helper(), aside()));
      after(() => renameSync(aside(), helper()));

      test("no Windows helper: one line with the PowerShell command that installs it", async () => {
        const result = await fromWsl(["get", "wsl.example.com"]);
        assertOneLineFailure(result);
        assert.match(
          result.stderr,
          /^the Windows helper is not installed: C:\\users\\Jörg Müller\\AppData\\Roaming\\terraform\.d\\plugins\\terraform-credentials-keychain\.exe is missing; run "powershell\.exe -NoProfile -Command '.*& \(Join-Path \$d terraform-credentials-keychain\.exe\) install.*'"/,
        );
      });

      test("a hung .exe: the call ends at its --timeout with one line, and the .exe is ended", async () => {
        execFileSync("x86_64-w64-mingw32-gcc", [
          "-municode",
          "-O2",
          "-s",
          "-o",
          helper(),
          path.join(import.meta.dirname, "../support/wine/hang.c"),
        ]);
        try {
          const result = await fromWsl(["--timeout", "3", "get", "wsl.example.com"]);
          assertOneLineFailure(result);
          assert.match(
            result.stderr,
            /^the Windows side did not answer within 3 s \(terraform-credentials-keychain\.exe was ended\); try again, and if it keeps hanging, run wsl\.exe --shutdown in Windows/,
          );
          assert.deepEqual(processesRunning(helper()), []);
        } finally {
          rmSync(helper(), { force: true });
        }
      });
    });
  });
}

/** The ids of processes running `file`: Wine shows a program's path as its command line. */
function processesRunning(file: string): string[] {
  return readdirSync("/proc")
    .filter((name) => /^[0-9]+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(`${file}\0`);
      } catch {
        return false;
      }
    });
}
