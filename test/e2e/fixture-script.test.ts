import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { Agent, get } from "node:https";
import { test } from "node:test";

// `npm run fixture` for developers: it must print a host that answers discovery over HTTPS
// with the CA it names, and stop cleanly on SIGTERM.
const noSigterm =
  process.platform === "win32" &&
  "SKIP: Windows has no SIGTERM: kill() ends the child without running its handler";
test(
  "npm run fixture prints a host, a CLI config and a CA that work, and stops on SIGTERM",
  { skip: noSigterm },
  async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/fixture.ts"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      let out = "";
      child.stdout.setEncoding("utf8");
      for await (const chunk of child.stdout) {
        out += chunk as string;
        if (out.includes("serving until Ctrl-C")) break;
      }
      const host = /^host: +(\S+)$/m.exec(out)?.[1];
      const ca = /^CA: +(\S+)/m.exec(out)?.[1];
      assert.ok(host && ca, out);
      assert.match(out, /^credentials_helper "keychain" \{\}$/m);
      assert.match(out, /network_mirror \{ url = "https:\/\/127\.0\.0\.1:\d+\/providers\/" \}/);
      const agent = new Agent({ ca: await readFile(ca) });
      const status = await new Promise<number | undefined>((resolve, reject) => {
        get(`https://${host}/.well-known/terraform.json`, { agent }, (response) => {
          response.resume();
          resolve(response.statusCode);
        }).on("error", reject);
      });
      assert.equal(status, 200);
    } finally {
      child.kill("SIGTERM");
    }
    const [code] = (await once(child, "exit")) as [number | null];
    assert.equal(code, 0);
  },
);
