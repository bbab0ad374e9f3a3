// `npm run fixture` for a person trying the helper by hand: it writes a CLI config and a
// main.tf into a directory it names and prints the lines to paste in another shell. Here
// those lines are run as printed, in one shell, with the real terraform and the helper
// installed into a private HOME with --backend pass: login stores the token through the
// helper, init fetches the module with it, logout removes it; then SIGTERM stops the fixture
// and removes the directory.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { linuxOnly } from "../support/keychain-backends.ts";
import { requireBuiltHelper } from "../support/helper-process.ts";
import { startPassSession } from "../support/pass-session.ts";
import { TEST_PATIENCE_MS } from "../support/timing.ts";
import { describeRun, hermeticEnv, runProgram } from "./support/helper-harness.ts";
import { findTerraform, runTerraform, skipWithoutTerraform } from "./support/terraform.ts";

const terraform = await findTerraform();

test(
  "npm run fixture: the printed lines, pasted as printed, log in, init with the token and log out; SIGTERM removes its directory",
  { skip: linuxOnly("the pass store with a private GPG home"), timeout: TEST_PATIENCE_MS },
  async (t) => {
    if (terraform === undefined) {
      skipWithoutTerraform(t);
      return;
    }
    const session = await startPassSession();
    t.after(() => session.close());
    // The shell a person pastes into: their HOME, with the helper installed for pass. The
    // lines set SSL_CERT_FILE and TF_CLI_CONFIG_FILE themselves.
    const env = hermeticEnv(session.env, { caFile: "" });
    delete env.SSL_CERT_FILE;
    const installed = await runProgram(requireBuiltHelper(), ["--backend", "pass", "install"], {
      env,
      cwd: session.home,
    });
    assert.equal(installed.exitCode, 0, describeRun(installed));
    // Put terraform on the pasting shell's PATH, as a person has it.
    env.PATH = `${path.dirname(terraform)}:${env.PATH ?? ""}`;

    const child = spawn(
      process.execPath,
      ["--import", "tsx", "scripts/fixture.ts", "--backend", "pass"],
      { stdio: ["ignore", "pipe", "inherit"], env },
    );
    const exited = once(child, "exit") as Promise<[number | null]>;
    let out = "";
    try {
      child.stdout.setEncoding("utf8");
      for await (const chunk of child.stdout) {
        out += chunk as string;
        if (out.includes("serving until Ctrl-C")) break;
      }
      const token = /^token: (\S+)/m.exec(out)?.[1] ?? "";
      const dir = /^serving until Ctrl-C, which removes (\S+)$/m.exec(out)?.[1] ?? "";
      assert.notEqual(token, "", out);
      // What it wrote: the CLI config with the block for pass, and main.tf.
      const config = await readFile(path.join(dir, "terraformrc"), "utf8");
      assert.ok(
        config.startsWith(
          'credentials_helper "keychain" {\n  args = ["--backend", "pass", "--service", "terraform-credentials"]\n}\n',
        ),
        config,
      );
      assert.match(await readFile(path.join(dir, "main.tf"), "utf8"), /module "hello"/);

      // The lines to paste: from the one after "paste these lines" to the blank line.
      const printed = out.slice(out.indexOf("\n", out.indexOf("paste these lines")) + 1);
      const pasted = printed.slice(0, printed.indexOf("\n\n")).split("\n");
      assert.equal(pasted.length, 5, pasted.join("\n"));
      assert.match(pasted[0] ?? "", /^export SSL_CERT_FILE=\S+ TF_CLI_CONFIG_FILE=\S+$/);
      assert.deepEqual(
        pasted.slice(2).map((line) => line.split(" ").slice(0, 2).join(" ")),
        ["terraform login", "terraform init", "terraform logout"],
      );
      // Run as printed, one after the other in one shell, answering login's two prompts.
      const ran = await runTerraform("sh", ["-c", pasted.join(" &&\n")], {
        cwd: session.home,
        env,
        answers: [
          { prompt: "Do you want to proceed?", answer: "yes" },
          { prompt: /Token for \S+:/, answer: token },
        ],
      });
      assert.equal(ran.exitCode, 0, describeRun(ran));
      assert.match(ran.stdout, /store the token in the configured "keychain" credentials helper/);
      assert.match(ran.stdout, /Terraform has been successfully initialized/);
      assert.match(ran.stdout, /Removing the stored credentials/);
      // No token in a file: login went to the helper, and logout left nothing in pass.
      assert.equal(
        existsSync(path.join(session.home, ".terraform.d", "credentials.tfrc.json")),
        false,
      );
      const listed = await runProgram(
        path.join(session.home, ".terraform.d", "plugins", "terraform-credentials-keychain"),
        ["list"],
        { env, cwd: session.home },
      );
      assert.equal(listed.stdout, "", describeRun(listed));

      child.kill("SIGTERM");
      const [code] = await exited;
      assert.equal(code, 0);
      assert.equal(existsSync(dir), false, `${dir} is removed`);
    } finally {
      child.kill("SIGKILL");
    }
  },
);
