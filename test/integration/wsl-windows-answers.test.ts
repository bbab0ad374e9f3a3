/**
 * --backend wincred when the Windows side answers what it should not: a WSL stand-in whose
 * "Windows programs" are shell scripts run by a launcher (TF_CREDENTIALS_KEYCHAIN_WSL_LAUNCHER,
 * as Wine is in wsl-wincred.test.ts), so each answer is exactly the one under test. What
 * cmd.exe prints reaches the terminal only quoted; a Windows helper that answers nothing is
 * said to, with no fix that deletes a token; one that writes without end is ended at once.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { runHelperMeasured } from "../support/peak-memory.ts";
import { assertOneLineFailure } from "../support/protocol-suite.ts";

const APPDATA = "C:\\Users\\wsl-user\\AppData\\Roaming";

describe(
  "--backend wincred, the Windows side answering oddly",
  { skip: linuxOnly("the WSL stand-in") },
  () => {
    let dir: string;
    let root: string;
    let helperExe: string;
    before(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), "tfck-wsl-answers-"));
      root = path.join(dir, "root");
      const driveC = path.join(dir, "c");
      mkdirSync(path.join(root, "proc/sys/fs/binfmt_misc"), { recursive: true });
      writeFileSync(
        path.join(root, "proc/sys/fs/binfmt_misc/WSLInterop"),
        "enabled\ninterpreter /init\nflags: PF\noffset 0\nmagic 4d5a\n",
      );
      mkdirSync(path.join(root, "etc"));
      writeFileSync(path.join(root, "etc/wsl.conf"), "");
      mkdirSync(path.join(root, "mnt"));
      mkdirSync(driveC);
      symlinkSync(driveC, path.join(root, "mnt/c"));
      const plugins = path.join(driveC, "Users/wsl-user/AppData/Roaming/terraform.d/plugins");
      mkdirSync(plugins, { recursive: true });
      helperExe = path.join(plugins, "terraform-credentials-keychain.exe");
      // The launcher: cmd.exe says what the test wrote in its answer file (UTF-16LE, as
      // `cmd /u` writes); any other program is a shell script, run as it is.
      writeFileSync(
        path.join(dir, "launcher"),
        '#!/bin/sh\nif [ "$1" = cmd.exe ]; then exec cat "$TFCK_TEST_APPDATA_ANSWER"; fi\nexec "$@"\n',
      );
      chmodSync(path.join(dir, "launcher"), 0o755);
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    /** The helper's environment, cmd.exe answering `appData`, the Windows helper `script`. */
    const wsl = (appData: string, script: string) => {
      const answer = path.join(dir, "appdata-answer");
      writeFileSync(answer, Buffer.from(`${appData}\r\n`, "utf16le"));
      writeFileSync(helperExe, `#!/bin/sh\n${script}\n`);
      chmodSync(helperExe, 0o755);
      return {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: dir,
        TF_CREDENTIALS_KEYCHAIN_WSL_ROOT: root,
        TF_CREDENTIALS_KEYCHAIN_WSL_LAUNCHER: path.join(dir, "launcher"),
        TFCK_TEST_APPDATA_ANSWER: answer,
      };
    };
    const get = (env: Record<string, string>) =>
      runHelperMeasured(["--backend", "wincred", "--timeout", "2", "get", "example.com"], {
        env,
        timeoutMs: 60_000,
      });

    test("escape sequences and line breaks in cmd.exe's %APPDATA% reach the terminal quoted", async () => {
      const result = await get(wsl(`C:\\Users\\\u001b[31mred\u001b[0m\r\nsecond line`, "exit 0"));
      assertOneLineFailure(result);
      assert.ok(
        !result.stderr.includes("\u001b") && !result.stderr.includes("\r"),
        "no raw ESC or CR",
      );
      assert.match(
        result.stderr,
        /^cmd\.exe answered %APPDATA% with "C:\\\\Users\\\\\\u001b\[31mred\\u001b\[0m\\r\\nsecond line", which is not a Windows path; check that WSL interop works/,
      );
    });

    test("a Windows helper that exits 0 and prints nothing is said to, and nothing is deleted", async () => {
      const result = await get(wsl(APPDATA, "exit 0"));
      assertOneLineFailure(result);
      assert.match(
        result.stderr,
        /^the Windows helper answered nothing to "get example\.com" \(exit code 0, no output\); check that WSL interop works/,
      );
      assert.doesNotMatch(result.stderr, /logout|forget/);
    });

    test("a Windows helper that prints without end is ended at once, in bounded memory", async () => {
      const result = await get(wsl(APPDATA, `exec yes ${"x".repeat(200)}`));
      assertOneLineFailure(result);
      assert.match(
        result.stderr,
        /^terraform-credentials-keychain\.exe wrote more than 4 MiB to stdout, more than any answer holds, and was ended/,
      );
      // Against seconds and gigabytes (it took 6-13 s and 1-2 GB): generous on a loaded machine.
      assert.ok(result.milliseconds < 2000 + 8000, `took ${Math.round(result.milliseconds)} ms`);
      assert.ok(result.peakMegabytes < 200, `took ${Math.round(result.peakMegabytes)} MB`);
    });
  },
);
