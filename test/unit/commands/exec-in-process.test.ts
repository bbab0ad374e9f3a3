import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { CommandRunner } from "../../../src/commands/exec.ts";
import { run } from "../../../src/cli/run.ts";
import type { CommandOutcome } from "../../../src/system/run-command.ts";
import { createFakeIo } from "../../support/fake-io.ts";
import { createMemoryStore } from "../../support/memory-store.ts";

const SECRET = "SECRET-exec-123";

async function invoke(argv: readonly string[], outcome: CommandOutcome, env = {}) {
  const store = createMemoryStore({ "app.example.com": `{"token":"${SECRET}"}` });
  const calls: { command: string; args: readonly string[]; env: Record<string, string> }[] = [];
  const runCommand: CommandRunner = (command, args, childEnv) => {
    calls.push({ command, args, env: { ...childEnv } });
    return Promise.resolve(outcome);
  };
  const io = createFakeIo({ env: { PATH: "/bin", ...env } });
  const code = await run(argv, io, {
    version: "0",
    openStore: () => store,
    protectSecrets: async () => {},
    runCommand,
  });
  return { code, stdout: io.stdout.text, stderr: io.stderr.text, calls };
}

describe("exec, in-process", () => {
  test("runs the command with the tokens in its environment and says nothing", async () => {
    const result = await invoke(["exec", "--", "tool", "-x", "y"], { kind: "exited", code: 0 });
    assert.deepEqual(result, {
      code: 0,
      stdout: "",
      stderr: "",
      calls: [
        {
          command: "tool",
          args: ["-x", "y"],
          env: { PATH: "/bin", TF_TOKEN_app_example_com: SECRET },
        },
      ],
    });
  });

  const endings: readonly (readonly [CommandOutcome, number, string])[] = [
    [{ kind: "exited", code: 3 }, 3, ""],
    [{ kind: "signalled", signal: "SIGINT" }, 130, ""],
    [{ kind: "signalled", signal: "SIGTERM" }, 143, ""],
    [{ kind: "not-found" }, 127, 'exec: command not found: "tool"\n'],
    [{ kind: "not-executable" }, 126, 'exec: permission denied: "tool"\n'],
    [
      { kind: "too-big" },
      126,
      'exec: could not start "tool": its arguments and environment are larger than the system allows (E2BIG); pass fewer tokens with --host\n',
    ],
    [{ kind: "not-started", code: "ENOMEM" }, 126, 'exec: could not start "tool" (ENOMEM)\n'],
  ];
  for (const [outcome, code, stderr] of endings) {
    test(`${JSON.stringify(outcome)} exits ${code}`, async () => {
      const result = await invoke(["exec", "--", "tool"], outcome);
      assert.equal(result.code, code);
      assert.equal(result.stderr, stderr);
      assert.equal(result.stdout, "");
    });
  }

  test("no command is a usage error and runs nothing", async () => {
    for (const argv of [["exec"], ["exec", "--"], ["exec", "--host", "app.example.com"]]) {
      const result = await invoke(argv, { kind: "exited", code: 0 });
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^exec: missing command[^\n]*\n$/);
      assert.deepEqual(result.calls, []);
    }
  });

  test("an empty command is a usage error and runs nothing", async () => {
    const result = await invoke(["exec", "--", ""], { kind: "exited", code: 0 });
    assert.deepEqual([result.code, result.stderr], [2, 'exec: the command after "--" is empty\n']);
    assert.deepEqual(result.calls, []);
  });

  test("an invalid --host is a usage error and runs nothing", async () => {
    const result = await invoke(["exec", "--host", "https://x", "--", "tool"], {
      kind: "exited",
      code: 0,
    });
    assert.equal(result.code, 2);
    assert.deepEqual(result.calls, []);
  });

  test("the token never reaches exec's own output, even when the command is missing", async () => {
    const result = await invoke(
      ["exec", "--", "tool"],
      { kind: "not-found" },
      {
        TF_CREDENTIALS_KEYCHAIN_DEBUG: "1",
      },
    );
    assert.ok(!result.stderr.includes(SECRET));
    assert.ok(!result.stdout.includes(SECRET));
  });
});
