import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { helperCommand, runHelper } from "./helper-process.ts";
import type { ProtocolBackend } from "./protocol-suite.ts";
import { assertOneLineFailure, assertSilentSuccess } from "./protocol-suite.ts";
import { PATIENCE_MS } from "./timing.ts";

const NODE = process.execPath;
// The child prints its TF_TOKEN_/TFE_ variables and its own argv as JSON on stdout.
const PRINT_ENV = `
const picked = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(TF_TOKEN_|TFE_)/.test(k)).sort());
console.log(JSON.stringify({ env: picked, argv: process.argv }));`;

/** Stored before the tests: stored names on the left, as a person might type them. */
const STORED: readonly (readonly [string, string])[] = [
  ["app.example.com", '{"token":"secret-app"}'],
  ["my-registry.example.com", '{"token":"secret-hyphen"}'],
  ["REG.Example.COM", '{"token":"secret-upper"}'],
  ["münchen.example", '{"token":"secret-idn"}'],
  ["localhost:8443", '{"token":"secret-port"}'],
  ["notoken.example.com", '{"org":"acme"}'],
];
const SECRETS = ["secret-app", "secret-hyphen", "secret-upper", "secret-idn", "secret-port"];
const ALL_VARIABLES = {
  TF_TOKEN_app_example_com: "secret-app",
  TF_TOKEN_my__registry_example_com: "secret-hyphen",
  TF_TOKEN_reg_example_com: "secret-upper",
  TF_TOKEN_xn____mnchen__3ya_example: "secret-idn",
  "TF_TOKEN_localhost:8443": "secret-port",
};

/**
 * `exec` through the built executable over a real backend: the variables its command sees,
 * the caller's variables winning, exit codes, signals and streams, and a store left as it was.
 */
export function describeExec(name: string, start: () => Promise<ProtocolBackend>): void {
  describe(`exec over ${name}`, () => {
    let backend: ProtocolBackend;
    const helper = (
      args: readonly string[],
      extraEnv: Record<string, string> = {},
      stdin?: string,
    ) =>
      runHelper([...backend.args, ...args], {
        env: { ...backend.env, ...extraEnv },
        ...(stdin === undefined ? {} : { stdin }),
      });
    const seen = async (args: readonly string[], extraEnv: Record<string, string> = {}) => {
      const result = await helper([...args, "--", NODE, "-e", PRINT_ENV, "arg-one"], extraEnv);
      assert.equal(result.stderr, "", "exec and its command print nothing on stderr");
      assert.equal(result.code, 0);
      const printed = JSON.parse(result.stdout) as { env: Record<string, string>; argv: string[] };
      for (const secret of SECRETS) {
        assert.ok(!printed.argv.join(" ").includes(secret), "no token in the command's argv");
      }
      return printed.env;
    };
    const snapshot = async () => {
      const list = await helper(["list", "--json"]);
      const hosts = JSON.parse(list.stdout) as string[];
      const objects = await Promise.all(
        hosts.map(async (host) => (await helper(["get", host])).stdout),
      );
      return { hosts, objects };
    };

    before(async () => {
      backend = await start();
      for (const [host, object] of STORED)
        assertSilentSuccess(await helper(["store", host], {}, object));
    });
    after(async () => {
      await backend.close();
    });

    test("every stored token becomes a TF_TOKEN_ variable in Terraform's encoding", async () => {
      // The object without a token gets none; nothing else is added.
      assert.deepEqual(await seen(["exec"]), ALL_VARIABLES);
    });

    test("a TF_TOKEN_ variable the caller set wins, in whatever spelling Terraform accepts", async () => {
      const env = await seen(["exec"], {
        TF_TOKEN_app_example_com: "caller-app",
        "TF_TOKEN_MY-REGISTRY.example.com": "caller-hyphen",
        TF_TOKEN_münchen_example: "caller-idn",
      });
      assert.deepEqual(env, {
        TF_TOKEN_app_example_com: "caller-app",
        "TF_TOKEN_MY-REGISTRY.example.com": "caller-hyphen",
        TF_TOKEN_münchen_example: "caller-idn",
        TF_TOKEN_reg_example_com: "secret-upper",
        "TF_TOKEN_localhost:8443": "secret-port",
      });
    });

    test("--host passes only the named hosts, in any spelling", async () => {
      assert.deepEqual(
        await seen(["exec", "--host", "App.Example.com", "--host", "xn--mnchen-3ya.example"]),
        {
          TF_TOKEN_app_example_com: "secret-app",
          TF_TOKEN_xn____mnchen__3ya_example: "secret-idn",
        },
      );
    });

    test("--host for a host without a token fails in one line and runs nothing", async () => {
      for (const host of ["absent.example.com", "notoken.example.com"]) {
        const result = await helper([
          "exec",
          "--host",
          host,
          "--",
          NODE,
          "-e",
          "console.log('ran')",
        ]);
        assertOneLineFailure(result);
        assert.equal(result.code, 1);
      }
    });

    test("--tfe sets TFE_TOKEN and TFE_HOSTNAME beside the host's TF_TOKEN_ variable", async () => {
      assert.deepEqual(
        await seen(["exec", "--host", "app.example.com", "--tfe", "my-registry.example.com"]),
        {
          TFE_HOSTNAME: "my-registry.example.com",
          TFE_TOKEN: "secret-hyphen",
          TF_TOKEN_app_example_com: "secret-app",
          TF_TOKEN_my__registry_example_com: "secret-hyphen",
        },
      );
      const env = await seen(["exec", "--tfe", "localhost:8443"]);
      assert.equal(env.TFE_TOKEN, "secret-port");
      assert.equal(env.TFE_HOSTNAME, "localhost:8443");
    });

    test("exec exits with its command's code", async () => {
      for (const code of [0, 1, 7, 255]) {
        const result = await helper(["exec", "--", NODE, "-e", `process.exit(${code})`]);
        assert.equal(result.code, code);
        assert.equal(result.stderr, "");
        assert.equal(result.stdout, "");
      }
    });

    test("a command killed by a signal gives 128 plus its number", async () => {
      const result = await helper([
        "exec",
        "--",
        NODE,
        "-e",
        "process.kill(process.pid, 'SIGKILL')",
      ]);
      assert.equal(result.code, 128 + 9);
      assert.equal(result.stderr, "");
    });

    test("no command is a usage error; an unknown one exits 127 with one line", async () => {
      for (const args of [["exec"], ["exec", "--"], ["exec", "--host", "app.example.com"]]) {
        const result = await helper(args);
        assertOneLineFailure(result);
        assert.equal(result.code, 2);
      }
      const missing = await helper(["exec", "--", "no-such-command-for-exec-test"]);
      assertOneLineFailure(missing);
      assert.equal(missing.code, 127);
      assert.match(missing.stderr, /no-such-command-for-exec-test/);
    });

    test("the command gets exec's stdin, stdout and stderr", async () => {
      const script =
        "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{process.stdout.write('out:'+s);process.stderr.write('err:'+s)})";
      const result = await helper(["exec", "--", NODE, "-e", script], {}, "piped text");
      assert.equal(result.code, 0);
      assert.equal(result.stdout, "out:piped text");
      assert.equal(result.stderr, "err:piped text");
    });

    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      test(`${signal} is forwarded to the command, and exec exits with its code`, async () => {
        const script = `process.on('${signal}',()=>{console.log('got ${signal}');process.exit(42)});console.log('ready');setInterval(()=>{},1000)`;
        const [command, ...commandArgs] = helperCommand();
        const child = spawn(
          command,
          [...commandArgs, ...backend.args, "exec", "--", NODE, "-e", script],
          {
            env: backend.env,
            stdio: ["ignore", "pipe", "pipe"],
            timeout: PATIENCE_MS,
          },
        );
        let stdout = "";
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          if (stdout === "ready\n") child.kill(signal);
        });
        const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
        assert.equal(stdout, `ready\ngot ${signal}\n`);
        assert.equal(stderr, "");
        assert.equal(code, 42);
      });
    }

    test("the store is unchanged afterwards", async () => {
      const before = await snapshot();
      await seen(["exec"]);
      await seen(["exec", "--tfe", "app.example.com"]);
      assert.deepEqual(await snapshot(), before);
      assert.equal(before.hosts.length, STORED.length);
    });
  });
}
