/**
 * Runs a command inside a private D-Bus session with a real, unlocked gnome-keyring, so that
 * manual tries and benchmarks never touch your own keyring:
 *   npx tsx scripts/with-keyring.ts COMMAND [ARGS...]
 * COMMAND also gets a private HOME and XDG dirs (the session's): to try a helper installed in
 * your own HOME, with Terraform finding it there, set HOME back inside COMMAND.
 */
import { spawn } from "node:child_process";
import { startKeyringSession } from "../test/support/keyring-session.ts";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  console.error("usage: tsx scripts/with-keyring.ts COMMAND [ARGS...]");
  process.exit(2);
}
const session = await startKeyringSession();
const child = spawn(command, args, { stdio: "inherit", env: { ...process.env, ...session.env } });
const code = await new Promise<number>((resolve) =>
  child.on("exit", (status, signal) => resolve(status ?? (signal ? 1 : 0))),
);
await session.close();
process.exitCode = code;
