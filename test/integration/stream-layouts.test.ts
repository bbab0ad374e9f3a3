/**
 * One rule for the store a call reaches, whatever its standard streams are: `get`, `store`
 * and `forget` with no options reach the store the installed block names (or the default),
 * with stdin, stdout and stderr each a terminal, a pipe, a file, a null device or closed.
 * Before this rule, a call with the streams Terraform gives a helper (stdin /dev/null,
 * stdout and stderr pipes: how CI runners and IDE tasks run commands too) ignored the block.
 *
 * Each layout is built by bash redirections; a terminal is a pty from `script`; the null
 * device is made with mknod in the test's own directory (never the machine's /dev/null).
 * The layouts form a Latin square over the five kinds, so every kind of each stream and
 * every pair of kinds of two streams occurs, plus the exact layouts Terraform gives.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { requireBuiltHelper, runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { startKeyringSession, type KeyringSession } from "../support/keyring-session.ts";
import { startPassSession, type PassSession } from "../support/pass-session.ts";

const KINDS = ["terminal", "pipe", "file", "null device", "closed"] as const;
type Kind = (typeof KINDS)[number];
type Layout = readonly [stdin: Kind, stdout: Kind, stderr: Kind];

const LAYOUTS: readonly Layout[] = [
  // A Latin square: each kind on each stream, each pair of kinds on each pair of streams.
  ...KINDS.flatMap((stdin, i) =>
    KINDS.map((stdout, j): Layout => [stdin, stdout, KINDS[(i + j) % KINDS.length]!]),
  ),
  // What Terraform gives get, store and forget.
  ["null device", "pipe", "pipe"],
  ["pipe", "null device", "pipe"],
  ["null device", "null device", "pipe"],
];

const HOST = "layouts.example.com";
const token = (value: string) => `{"token":"${value}"}`;

/** The three installed blocks, and the store each makes a call with no options reach. */
const BLOCKS = [
  {
    name: "a --backend pass block",
    block: 'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}\n',
    store: ["--backend", "pass"],
    seed: "pass-token",
  },
  {
    name: "a --service block",
    block: 'credentials_helper "keychain" {\n  args = ["--service", "work"]\n}\n',
    store: ["--backend", "keychain", "--service", "work"],
    seed: "work-token",
  },
  {
    name: "no block",
    block: undefined,
    store: ["--backend", "keychain"],
    seed: "default-token",
  },
] as const;

interface Answer {
  readonly code: number | null;
  /** What the call wrote to stdout, where a layout lets it be read. */
  readonly stdout: string | undefined;
}

const ONLY_ON_LINUX = linuxOnly("stream layouts over gnome-keyring and pass");

describe(
  "get, store and forget with no options: the same store in every stream layout",
  { skip: ONLY_ON_LINUX },
  () => {
    let keyring: KeyringSession;
    let pass: PassSession;
    let dir: string;
    let nullDevice: string;
    const envFor = (configFile: string): Record<string, string> => ({
      ...keyring.env,
      GNUPGHOME: pass.env.GNUPGHOME!,
      PASSWORD_STORE_DIR: pass.env.PASSWORD_STORE_DIR!,
      TF_CLI_CONFIG_FILE: configFile,
      SHELL: "/bin/bash",
    });

    before(async () => {
      requireBuiltHelper();
      [keyring, pass] = await Promise.all([startKeyringSession(), startPassSession()]);
      dir = mkdtempSync(path.join(os.tmpdir(), "tfck-layouts-"));
      nullDevice = path.join(dir, "null");
      // The null device's numbers (1, 3), in a directory of our own.
      execFileSync("mknod", [nullDevice, "c", "1", "3"]);
      chmodSync(nullDevice, 0o666);
    });
    after(async () => {
      await Promise.all([keyring.close(), pass.close()]);
      rmSync(dir, { recursive: true, force: true });
    });

    /** Runs the helper with `args` in `layout`; `input` is what stdin carries when it can. */
    async function runIn(
      layout: Layout,
      args: readonly string[],
      env: Record<string, string>,
      input: string,
    ): Promise<Answer> {
      const [stdin, stdout, stderr] = layout;
      const run = mkdtempSync(path.join(dir, "run-"));
      const at = (name: string) => path.join(run, name);
      writeFileSync(at("in"), input);
      const q = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
      const redirect = {
        stdin: {
          terminal: "",
          pipe: "",
          file: `<${q(at("in"))}`,
          "null device": `<${q(nullDevice)}`,
          closed: "<&-",
        },
        stdout: {
          terminal: "",
          pipe: "",
          file: `>${q(at("out"))}`,
          "null device": `>${q(nullDevice)}`,
          closed: ">&-",
        },
        stderr: {
          terminal: "",
          pipe: `2> >(cat >${q(at("err"))})`,
          file: `2>${q(at("err"))}`,
          "null device": `2>${q(nullDevice)}`,
          closed: "2>&-",
        },
      };
      const call = [requireBuiltHelper(), ...args].map(q).join(" ");
      const script = [
        stdin === "pipe" ? `cat ${q(at("in"))} | ` : "",
        `{ ${call} ${redirect.stdin[stdin]} ${redirect.stdout[stdout]} ${redirect.stderr[stderr]}; echo $? >${q(at("code"))}; }`,
        stdout === "pipe" ? ` | cat >${q(at("out"))}` : "",
      ].join("");
      // A terminal stdin takes what is typed raw from the start, as a quick paste would be
      // once the helper has turned echo off; the test types once bash says it may.
      const typing = stdin === "terminal" ? "stty raw -echo && echo READY-TO-TYPE\n" : "";
      writeFileSync(at("run.sh"), `${typing}${script}\nwait\n`);
      const onTerminal = layout.includes("terminal");
      const child = onTerminal
        ? spawn("script", ["-qefc", `bash ${q(at("run.sh"))}`, at("typescript")], {
            env,
            stdio: "pipe",
          })
        : spawn("bash", [at("run.sh")], { env, stdio: "pipe" });
      let screen = "";
      let typed = false;
      child.stdout.on("data", (chunk: Buffer) => {
        screen += chunk.toString();
        if (!typed && stdin === "terminal" && screen.includes("READY-TO-TYPE")) {
          typed = true;
          child.stdin.write(`${input}\x04`);
        }
      });
      child.stderr.resume();
      await new Promise((resolve) => child.on("close", resolve));
      child.stdin.destroy();
      const read = (name: string) => {
        try {
          return readFileSync(at(name), "utf8");
        } catch {
          return undefined;
        }
      };
      const code = Number(read("code")?.trim());
      const shown =
        stdout === "terminal"
          ? screen
              .replace(/\r\n/g, "\n")
              .split("\n")
              .filter((line) => line.startsWith("{"))
              .map((line) => `${line}\n`)
              .join("")
          : stdout === "pipe" || stdout === "file"
            ? read("out")
            : undefined;
      return { code: Number.isNaN(code) ? null : code, stdout: shown };
    }

    for (const { name, block, store, seed } of BLOCKS) {
      describe(`with ${name}`, () => {
        let env: Record<string, string>;
        const explicit = (verb: string, stdin?: string) =>
          runHelper([...store, verb, HOST], { env, ...(stdin === undefined ? {} : { stdin }) });
        const seedStores = async () => {
          // Each store holds its own token for the host, so that an answer names its store.
          for (const other of BLOCKS) {
            const stored = await runHelper([...other.store, "store", HOST], {
              env,
              stdin: token(other.seed),
            });
            assert.equal(stored.code, 0, stored.stderr);
          }
        };
        before(async () => {
          const configFile = path.join(dir, `${seed}.tfrc`);
          if (block !== undefined) writeFileSync(configFile, block);
          env = envFor(configFile);
          await seedStores();
        });

        test("get answers with that store's token in every layout", async () => {
          const wrong: string[] = [];
          for (const layout of LAYOUTS) {
            const answer = await runIn(layout, ["get", HOST], env, "");
            // A null or closed stdout (the runtime opens the null device for a closed one)
            // shows no answer: the exit code is all there is, 0 as everywhere.
            const expected =
              answer.code === 0 &&
              (answer.stdout === undefined || answer.stdout === `${token(seed)}\n`);
            if (!expected) wrong.push(`${layout.join(", ")}: ${JSON.stringify(answer)}`);
          }
          assert.deepEqual(wrong, [], `layouts (stdin, stdout, stderr) with another answer`);
        });

        test("store stores into that store in every layout that can carry the object", async () => {
          const wrong: string[] = [];
          for (const [index, layout] of LAYOUTS.entries()) {
            const [stdin] = layout;
            const value = `stored-${index}`;
            const answer = await runIn(layout, ["store", HOST], env, token(value));
            const carried = stdin === "pipe" || stdin === "file" || stdin === "terminal";
            const now = (await explicit("get")).stdout;
            const expected = carried
              ? answer.code === 0 && now === `${token(value)}\n`
              : answer.code !== 0 && now === `${token(seed)}\n`;
            if (!expected)
              wrong.push(`${layout.join(", ")}: ${JSON.stringify(answer)}, then ${now}`);
            const restored = await explicit("store", token(seed));
            assert.equal(restored.code, 0, restored.stderr);
          }
          assert.deepEqual(wrong, [], `layouts (stdin, stdout, stderr) with another answer`);
        });

        test("forget forgets from that store in every layout", async () => {
          const wrong: string[] = [];
          for (const layout of LAYOUTS) {
            const answer = await runIn(layout, ["forget", HOST], env, "");
            const now = (await explicit("get")).stdout;
            if (!(answer.code === 0 && now === "{}\n"))
              wrong.push(`${layout.join(", ")}: ${JSON.stringify(answer)}, then ${now}`);
            const restored = await explicit("store", token(seed));
            assert.equal(restored.code, 0, restored.stderr);
          }
          assert.deepEqual(wrong, [], `layouts (stdin, stdout, stderr) with another answer`);
        });
      });
    }
  },
);
