import { spawn, type ChildProcess } from "node:child_process";
import { dbusSend, type PrivateBus } from "./keyring-session.ts";
import { PATIENCE_MS } from "./timing.ts";

/** A Secret Service daemon started by a session, with the tail of its output for errors. */
export interface Daemon {
  readonly name: string;
  readonly child: ChildProcess;
  /** Why it cannot serve: it failed to start or has exited; undefined while it runs. */
  failure(): string | undefined;
  /** The last few KB of its stdout and stderr. */
  output(): string;
}

const OUTPUT_TAIL = 4000;

/**
 * Spawns `file` as one of the session's children (so the session's close() stops it), with
 * `input` on its stdin. Its stdout and stderr are kept (the last few KB) for error messages
 * only: nothing is printed.
 */
export function spawnDaemon(
  session: PrivateBus,
  file: string,
  args: readonly string[],
  options: { env: Record<string, string>; packages: string; input?: string },
): Daemon {
  const child = spawn(file, args, { env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  session.children.push(child);
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_TAIL);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let failure: string | undefined;
  child.once("error", (error) => {
    failure = `${file} could not start (apt-get install ${options.packages}): ${error.message}`;
  });
  child.once("exit", (code, signal) => {
    failure ??= `${file} exited early (${signal ?? `code ${code}`})`;
  });
  // A daemon that exits before reading its input must not crash the tests with EPIPE.
  child.stdin.on("error", () => undefined);
  child.stdin.end(options.input ?? "");
  return {
    name: file,
    child,
    failure: () => failure,
    output: () => output,
  };
}

/**
 * Polls `condition` every 50 ms until it holds, failing at once if the daemon dies and after
 * `timeoutMs` otherwise. Errors carry the daemon's output.
 */
export async function waitForDaemon(
  daemon: Daemon,
  condition: () => Promise<boolean>,
  what: string,
  timeoutMs = PATIENCE_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failure = daemon.failure();
    if (failure !== undefined) {
      throw new Error(`while waiting for ${what}: ${failure}${outputOf(daemon)}`);
    }
    if (await condition()) return;
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${outputOf(daemon)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function outputOf(daemon: Daemon): string {
  const output = daemon.output().trim();
  return output === "" ? "" : `; ${daemon.name} printed:\n${output}`;
}

/**
 * Whether the daemon's own process owns `name`. Asks the bus for the owner's process id
 * (never the service, so nothing is activated): the daemon just started, not a predecessor
 * whose disconnection the bus has not yet noticed.
 */
export async function ownsName(
  daemon: Daemon,
  env: Record<string, string>,
  name: string,
): Promise<boolean> {
  if (daemon.child.pid === undefined) return false;
  const reply = await dbusSend(env, [
    "--dest=org.freedesktop.DBus",
    "/org/freedesktop/DBus",
    "org.freedesktop.DBus.GetConnectionUnixProcessID",
    `string:${name}`,
  ]).catch(() => "");
  return /uint32 (\d+)/.exec(reply)?.[1] === String(daemon.child.pid);
}

/** The object path the "default" alias names, or "/" for none (or no answer). */
export async function defaultCollection(env: Record<string, string>): Promise<string> {
  return lastObjectPath(await serviceCall(env, "ReadAlias", "string:default")) ?? "/";
}

/**
 * Whether the service answers a search (for an attribute no item has): a service that owns
 * its name may still be setting up, and KeePassXC 2.7.4 crashed on a call made then.
 */
export async function answersSearch(env: Record<string, string>): Promise<boolean> {
  const reply = await serviceCall(env, "SearchItems", "dict:string:string:tfck-probe,1");
  return /^method return/m.test(reply);
}

/** dbus-send's output for a call of org.freedesktop.Secret.Service; "" for no answer. */
function serviceCall(env: Record<string, string>, member: string, argument: string) {
  return dbusSend(env, [
    "--dest=org.freedesktop.secrets",
    "/org/freedesktop/secrets",
    `org.freedesktop.Secret.Service.${member}`,
    argument,
  ]).catch(() => "");
}

/** The collection's Locked property: undefined if it cannot be read. */
export async function collectionLocked(
  env: Record<string, string>,
  collection: string,
): Promise<boolean | undefined> {
  const reply = await dbusSend(env, [
    "--dest=org.freedesktop.secrets",
    collection,
    "org.freedesktop.DBus.Properties.Get",
    "string:org.freedesktop.Secret.Collection",
    "string:Locked",
  ]).catch(() => "");
  if (reply.includes("boolean true")) return true;
  if (reply.includes("boolean false")) return false;
  return undefined;
}

/**
 * Locks or unlocks a collection as a client would: Service.Lock or Service.Unlock, then, if
 * the service answers with a prompt, Prompt.Prompt on it (the service does the work when the
 * prompt runs, and reports with a Completed signal that dbus-send cannot wait for). Polls the
 * Locked property until it has changed, and asks again every few seconds, as a prompt can be
 * dropped when its caller (a short-lived dbus-send) has already disconnected.
 */
export async function setCollectionLocked(
  daemon: Daemon,
  env: Record<string, string>,
  collection: string,
  locked: boolean,
  timeoutMs = PATIENCE_MS,
): Promise<void> {
  const method = locked ? "Lock" : "Unlock";
  const deadline = Date.now() + timeoutMs;
  let askedAt = 0;
  await waitForDaemon(
    daemon,
    async () => {
      if ((await collectionLocked(env, collection)) === locked) return true;
      if (Date.now() - askedAt >= 3000) {
        askedAt = Date.now();
        const reply = await dbusSend(env, [
          "--dest=org.freedesktop.secrets",
          "/org/freedesktop/secrets",
          `org.freedesktop.Secret.Service.${method}`,
          `array:objpath:${collection}`,
        ]);
        const prompt = lastObjectPath(reply);
        if (prompt !== undefined && prompt !== "/") {
          await dbusSend(env, [
            "--dest=org.freedesktop.secrets",
            prompt,
            "org.freedesktop.Secret.Prompt.Prompt",
            "string:",
          ]);
        }
      }
      return false;
    },
    `${collection} to be ${locked ? "locked" : "unlocked"}`,
    Math.max(0, deadline - Date.now()),
  );
}

/** The last `object path "…"` in dbus-send's output: a method's last return value. */
function lastObjectPath(reply: string): string | undefined {
  const paths = [...reply.matchAll(/object path "([^"]*)"/g)].map((match) => match[1]!);
  return paths.at(-1);
}
