import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CliError } from "../../../../src/errors.ts";
import { normalizeHostname } from "../../../../src/protocol/hostname.ts";
import { deadlineIn } from "../../../../src/system/deadline.ts";
import { createWincredStore } from "../../../../src/stores/wincred/store.ts";
import type { WindowsHelper } from "../../../../src/stores/wincred/windows-helper.ts";
import { wslMachine } from "../../../../src/stores/wincred/wsl-machine.ts";

const HOST = normalizeHostname("app.example.com");

/** A Windows helper that answers each run with `answer`, recording what it was run with. */
function fakeHelper(
  answer: (args: readonly string[]) => { code: number; stdout: string; stderr?: string },
) {
  const runs: { args: readonly string[]; input: string | undefined }[] = [];
  const helper: WindowsHelper = {
    machine: wslMachine({}),
    windowsPath:
      "C:\\Users\\u\\AppData\\Roaming\\terraform.d\\plugins\\terraform-credentials-keychain.exe",
    path: "/mnt/c/Users/u/AppData/Roaming/terraform.d/plugins/terraform-credentials-keychain.exe",
    run(args, input) {
      runs.push({ args, input });
      const { code, stdout, stderr = "" } = answer(args);
      return Promise.resolve({ kind: "exited", code, stdout, stderr });
    },
  };
  return { helper, runs };
}

describe("the wincred store: the Windows helper's verbs", () => {
  test("each verb runs the Windows helper's own, on Credential Manager, with what is left of the deadline", async () => {
    const { helper, runs } = fakeHelper(() => ({ code: 0, stdout: "" }));
    const store = createWincredStore(() => Promise.resolve(helper), "work", deadlineIn(10));
    await store.store(HOST, '{"token":"t"}');
    const [run] = runs;
    const seconds = Number(run?.args[5]);
    assert.ok(seconds > 0 && seconds <= 10, run?.args[5]);
    assert.deepEqual(run?.args, [
      ...["--service", "work", "--backend", "keychain", "--timeout", run?.args[5]],
      ...["store", HOST],
    ]);
    // The secret only on stdin.
    assert.equal(run.input, '{"token":"t"}');
    assert.ok(!run.args.some((arg) => arg.includes("token")));
  });

  test("get: the object without its newline; {} is nothing stored", async () => {
    let printed = '{"token":"t"}\r\n';
    const { helper } = fakeHelper(() => ({ code: 0, stdout: printed }));
    const store = createWincredStore(() => Promise.resolve(helper), "work", deadlineIn(10));
    assert.equal(await store.get(HOST), '{"token":"t"}');
    printed = "{}\n";
    assert.equal(await store.get(HOST), undefined);
  });

  test("a failure of the Windows helper: its message, on one line", async () => {
    const { helper } = fakeHelper(() => ({
      code: 1,
      stdout: "",
      stderr: "Windows Credential Manager did not answer\r\nwithin 3 s\r\n",
    }));
    const store = createWincredStore(() => Promise.resolve(helper), "work", deadlineIn(10));
    await assert.rejects(
      store.forget(HOST),
      (error: unknown) =>
        error instanceof CliError &&
        error.message ===
          "the Windows helper failed: Windows Credential Manager did not answer within 3 s",
    );
  });

  test("list: the hosts of its JSON list, sorted; anything else is an error", async () => {
    let printed = '["b.example.com","a.example.com","Not A Host!"]\n';
    const { helper, runs } = fakeHelper(() => ({ code: 0, stdout: printed }));
    const store = createWincredStore(() => Promise.resolve(helper), "work", deadlineIn(10));
    assert.deepEqual(await store.list(), ["a.example.com", "b.example.com"]);
    assert.deepEqual(runs[0]?.args.slice(6), ["list", "--json"]);
    printed = "app.example.com\n";
    await assert.rejects(store.list(), /printed no list/);
  });
});
