// A private npm registry for the end-to-end test of the npm packages: Verdaccio (a dev
// dependency) on 127.0.0.1 with no uplinks, so nothing is fetched from or published to
// anywhere else, its storage and config in a temp dir that is removed on close.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const VERDACCIO = join(import.meta.dirname, "../../../node_modules/verdaccio/bin/verdaccio");

export interface Registry {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  /** A token of a user the registry created, which may publish. */
  readonly token: string;
  /** The line for an .npmrc that gives npm that token for this registry. */
  readonly authLine: string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startRegistry(): Promise<Registry> {
  const dir = await mkdtemp(join(tmpdir(), "verdaccio-"));
  const port = await freePort();
  const config = join(dir, "config.yaml");
  await writeFile(
    config,
    [
      `storage: ${JSON.stringify(join(dir, "storage"))}`,
      "auth:",
      "  htpasswd:",
      `    file: ${JSON.stringify(join(dir, "htpasswd"))}`,
      "uplinks: {}",
      "packages:",
      "  '**':",
      "    access: $all",
      "    publish: $authenticated",
      "max_body_size: 500mb",
      "web:",
      "  enable: false",
      "log: { type: stdout, format: json, level: error }",
      "",
    ].join("\n"),
  );
  const child = spawn(
    process.execPath,
    [VERDACCIO, "--config", config, "--listen", `127.0.0.1:${port}`],
    {
      env: { PATH: process.env["PATH"] ?? "", HOME: dir },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async () => {
    child.kill("SIGTERM");
    await exited;
    await rm(dir, { recursive: true, force: true });
  };

  const url = `http://127.0.0.1:${port}/`;
  try {
    await waitForPing(url, () => output);
    const response = await fetch(`${url}-/user/org.couchdb.user:tester`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "tester", password: "tester-password" }),
    });
    const body = (await response.json()) as { token?: string };
    if (!response.ok || body.token === undefined)
      throw new Error(`verdaccio refused the user: ${response.status} ${JSON.stringify(body)}`);
    const token = body.token;
    return { url, token, authLine: `//127.0.0.1:${port}/:_authToken=${token}`, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function waitForPing(url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}-/ping`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`verdaccio did not answer within 30 s:\n${output()}`);
}
