import os from "node:os";
import process from "node:process";
import { VERSION } from "./build-info.ts";
import { run } from "./cli/run.ts";
import { openStore } from "./stores/open-store.ts";
import { isSea } from "./native/load-keyring.ts";

// Streams are created on first use: a get that succeeds never builds stderr or stdin.
const text = (stream: () => NodeJS.WriteStream) => ({
  write: (chunk: string) => void stream().write(chunk),
});

void run(
  process.argv.slice(2),
  {
    stdin: { [Symbol.asyncIterator]: () => process.stdin[Symbol.asyncIterator]() },
    get stdinIsTTY() {
      return process.stdin.isTTY;
    },
    stdout: text(() => process.stdout),
    stderr: text(() => process.stderr),
    env: process.env,
    platform: process.platform,
    arch: process.arch,
    homedir: os.homedir(),
    execPath: process.execPath,
    isSea: isSea(),
  },
  { version: VERSION, openStore },
).then((code) => {
  process.exitCode = code;
});
