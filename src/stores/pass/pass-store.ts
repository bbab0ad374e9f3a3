import { spawn } from "node:child_process";
import { unlinkSync } from "node:fs";
import { lstat, readdir, readlink, rmdir, symlink, unlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CliError } from "../../errors.ts";
import { oneLine } from "../../system/quote.ts";
import type { Hostname } from "../../protocol/hostname.ts";
import type { CredentialStore } from "../../protocol/credential-store.ts";
import { registerCleanup } from "../../system/exit-cleanups.ts";
import type { Deadline } from "../../system/deadline.ts";
import {
  decodeHostFromPath,
  encodeHostForPath,
  ENTRY_SUFFIX,
  passStoreDir,
  serviceFolder,
} from "./entry-names.ts";
import { gpgDecrypts, HUNG_AGENT_FIX, recipientOptions, storeRecipients } from "./gpg-probe.ts";
import { fixFor, renderFix } from "../../fixes.ts";

/** What `createPassStore` needs; everything comes in as values, nothing is read globally. */
export interface PassStoreOptions {
  /** Keeps separate sets of entries apart: the middle folder of each entry's name. */
  readonly service: string;
  /** The environment that `pass` (and through it gpg, gpg-agent and git) runs with. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where `~/.password-store` is when PASSWORD_STORE_DIR is not set. */
  readonly homedir: string;
  /** The `pass` executable, looked up on the PATH in `env`; "pass" unless given. */
  readonly passCommand?: string;
  /**
   * When every call must be done: waiting for another process to release the store's lock,
   * gpg's probe and `pass` share it, and whatever runs at its end is killed.
   */
  readonly deadline: Deadline;
  /**
   * This process, recorded in the store's lock, and a way to tell whether another is still
   * running: a lock whose holder has died is then taken over at once. Without it, only a
   * lock older than the stale age is.
   */
  readonly processes?: LockProcesses;
}

export interface LockProcesses {
  readonly pid: number;
  isAlive(pid: number): boolean;
}

/**
 * The standard Unix password store (`pass`), for machines without a Secret Service: build
 * machines, SSH sessions, containers, WSL. Each credentials object is one gpg-encrypted entry
 * named `terraform-credentials/<service>/<host>`, service and host made safe as file names
 * as `encodeHostForPath` describes. Secrets reach `pass` through its stdin only, never argv or environment.
 *
 * The environment goes to `pass` as it is (PASSWORD_STORE_DIR, PASSWORD_STORE_KEY, GNUPGHOME,
 * the store's git repository all work as usual), except that gpg is told `--batch`; see
 * `passEnvironment`. Operations on one store are serialised across processes by a lock
 * directory, because gpg rewrites an entry in place. Failures are `CliError`s saying what to do.
 * `get` and `forget` on a store that was never initialised find nothing, as `pass` itself does.
 */
export function createPassStore(options: PassStoreOptions): CredentialStore {
  const command = options.passCommand ?? "pass";
  const { deadline } = options;
  const storeDir = passStoreDir(options.env, options.homedir);
  const folder = serviceFolder(options.service);
  const entryName = (host: Hostname) => `${folder}/${encodeHostForPath(host)}`;
  const env = passEnvironment(options.env);
  const context: FailureContext = { command, storeDir, seconds: deadline.seconds };

  const pass = (args: readonly string[]) => {
    return withStoreLock(storeDir, deadline, options.processes, () =>
      runPass(args, env, undefined, context, deadline),
    );
  };
  // What doctor finds, store says: a key that is here but cannot decrypt without a
  // passphrase would let login succeed and every later get fail. Other failures (no such
  // key, no store) are left to pass, which names them. Run under the lock, as gpg is. A
  // gpg-agent that does not answer has used up the call's time: that is said, not guessed at.
  const refuseLockedKey = async () => {
    const recipients = storeRecipients(storeDir, folder);
    if (recipients.length === 0) return;
    const verdict = await gpgDecrypts(env, recipients, deadline);
    if (!verdict.ok && verdict.kind === "no answer") {
      throw new CliError(`nothing was stored in pass: ${verdict.reason}; ${HUNG_AGENT_FIX}`);
    }
    if (!verdict.ok && verdict.kind === "locked") {
      throw new CliError(
        `nothing was stored in pass: ${verdict.reason}; ${renderFix(fixFor("gpg-key-locked", { RECIPIENTS: recipientOptions(recipients) }))}`,
      );
    }
  };

  return {
    async get(host) {
      const name = entryName(host);
      const result = await pass(["show", name]);
      if (result.code === 0) return withoutFinalNewline(result.stdout);
      if (NOT_IN_STORE.test(result.stderr)) return undefined;
      throw passFailure("read from", name, result, context);
    },
    async store(host, secret) {
      const name = entryName(host);
      // Written with a final newline, as `pass insert` without --multiline would (`echo`), so
      // the entry looks like any other to `pass show`; `get` takes it off again.
      const args = ["insert", "--multiline", "--force", name];
      const result = await withStoreLock(storeDir, deadline, options.processes, async () => {
        await refuseLockedKey();
        return runPass(args, env, `${secret}\n`, context, deadline);
      });
      // pass exits 0 even when its git commit fails (no `set -e`, and it ends in `exit 0`): the
      // entry is written and encrypted by then, so that is success, as it is for pass.
      if (result.code !== 0) throw passFailure("write to", name, result, context);
    },
    async forget(host) {
      const name = entryName(host);
      const result = await pass(["rm", "--force", name]);
      if (result.code !== 0 && !NOT_IN_STORE.test(result.stderr)) {
        throw passFailure("delete from", name, result, context);
      }
    },
    async list() {
      // A person asked (list, exec, doctor): an empty answer from a store that was never set
      // up would look like "nothing stored". (get keeps pass's own answer: nothing found.)
      if (storeRecipients(storeDir, folder).length === 0) throw notInitialised(storeDir);
      // `pass ls` draws a tree for people; the directory itself is the index (as docker's
      // pass.go does too). Reading it needs neither gpg nor the lock.
      const dir = path.join(storeDir, ...folder.split("/"));
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (isErrnoException(error) && (error.code === "ENOENT" || error.code === "ENOTDIR"))
          return [];
        throw new CliError(
          `could not list the password store folder ${dir}: ${errorCode(error)}; check that it is readable`,
          undefined,
          { cause: error },
        );
      }
      const hosts = new Set<Hostname>();
      for (const name of names) {
        if (!name.endsWith(ENTRY_SUFFIX)) continue;
        // Anything that is not the canonical encoding of a hostname is not ours.
        const host = decodeHostFromPath(name.slice(0, -ENTRY_SUFFIX.length));
        if (host !== undefined) hosts.add(host);
      }
      return [...hosts].sort();
    },
  } satisfies CredentialStore;
}

// What pass prints (then exits 1) for `show` and `rm` of an entry that does not exist.
const NOT_IN_STORE = /is not in the password store\./;

/**
 * The child's environment: the caller's, unchanged, except that `--batch` is put in front
 * of PASSWORD_STORE_GPG_OPTS.
 *
 * `--batch` stops gpg from asking its own questions on the terminal ("Use this key anyway?"
 * for a key without full validity), which would wait forever when Terraform runs in a
 * terminal. pass adds `--batch` itself whenever the binary is called gpg2 or GPG_AGENT_INFO
 * is set, so pass is made to work with it; Debian has no gpg2, so there it is missing. It
 * goes first, so that anything the user wrote still wins (gpg takes the last of competing
 * options, `--no-batch` included).
 *
 * `--pinentry-mode=error` is deliberately not added. It would override a `pinentry-mode
 * loopback` + `passphrase-file` setup in gpg.conf (a common CI recipe), and it would refuse
 * the passphrase dialog that a desktop user, or a terminal with GPG_TTY set, can answer.
 * Where no dialog can be shown (no display, no terminal: CI, containers), the pinentry fails
 * at once and we say to unlock the key first; where one might be shown that nobody sees (an
 * agent started from another session), the timeout ends the wait and says the same.
 */
function passEnvironment(
  source: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined) env[name] = value;
  }
  const userOptions = env.PASSWORD_STORE_GPG_OPTS?.trim() ?? "";
  env.PASSWORD_STORE_GPG_OPTS = userOptions === "" ? "--batch" : `--batch ${userOptions}`;
  return env;
}

interface PassResult {
  /** Exit code; null only if `pass` was killed by a signal that was not ours. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly args: readonly string[];
}

interface FailureContext {
  readonly command: string;
  readonly storeDir: string;
  /** The deadline's length, for messages. */
  readonly seconds: number;
}

// More than pass and gpg ever say; a bound so that a confused child cannot fill memory.
const MAX_STDERR_BYTES = 64 * 1024;
// After `pass` exits, how long to wait for its pipes to close: a process it left behind
// (an agent started without closing its stderr) must not keep us waiting.
const CLOSE_GRACE_MS = 1000;

/**
 * Runs `pass` once with `stdin` as its only input and collects its output. Resolves with the
 * exit code whatever it is; throws a `CliError` only if `pass` cannot be started or runs out
 * of time, what is left of `deadline` (then it is killed).
 */
function runPass(
  args: readonly string[],
  env: Record<string, string>,
  stdin: string | undefined,
  context: FailureContext,
  deadline: Deadline,
): Promise<PassResult> {
  const { command } = context;
  const timeoutMs = deadline.remainingMs();
  if (timeoutMs <= 0) return Promise.reject(timeoutFailure(args, context));
  return new Promise((resolve, reject) => {
    // Not detached: a Ctrl-C in Terraform's terminal must reach pass and gpg as well.
    const child = spawn(command, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    let stderr = "";
    let exitCode: number | null | undefined;
    let settled = false;

    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      outcome();
    };
    const done = () => {
      finish(() => {
        resolve({
          code: exitCode ?? null,
          stdout: Buffer.concat(stdout).toString("utf8"),
          stderr,
          args,
        });
      });
    };

    const timer = setTimeout(() => {
      finish(() => {
        // Only pass itself can be killed from here; a gpg it started and that still waits on
        // the agent gets EPIPE once it writes to the pipes we close now.
        child.kill("SIGKILL");
        child.stdout.destroy();
        child.stderr.destroy();
        child.unref();
        reject(timeoutFailure(args, context));
      });
    }, timeoutMs);
    let grace: NodeJS.Timeout | undefined;

    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk;
    });
    // Always a pipe, ended at once when there is nothing to give: nothing we run may read
    // the terminal Terraform was started from. pass may exit before reading (store not
    // initialised); the exit code says why, so a broken pipe is no error of its own.
    child.stdin.on("error", () => undefined);
    child.stdin.end(stdin);
    child.once("error", (error) => {
      finish(() => {
        reject(spawnFailure(error, context));
      });
    });
    child.once("exit", (code) => {
      if (settled) return;
      exitCode = code;
      grace = setTimeout(
        () => {
          child.stdout.destroy();
          child.stderr.destroy();
          done();
        },
        Math.min(CLOSE_GRACE_MS, deadline.remainingMs()),
      );
    });
    child.once("close", done);
  });
}

// The lock is a symlink (creating one is atomic) at the top of the store whose target names
// its holder, "<host>:<pid>", so that a waiter can see the holder has died. Hidden, so
// `pass ls` does not show it. Older versions made it a directory: either kind refuses the
// other (EEXIST), so they still exclude each other.
const LOCK_NAME = ".terraform-credentials.lock";
const LOCK_POLL_MS = 25;

/**
 * Runs `operation` while holding the store's lock. gpg writes an entry in place (truncate,
 * then write), so without it two `store`s at once leave a damaged entry and a `get` during a
 * `store` reads half a file (seen with 20 parallel `pass insert`s: "invalid packet",
 * "encrypted message has been manipulated"). In a git store, two commits at once would also
 * collide on git's index.lock. Terraform does start several helpers at once.
 *
 * The lock is released when the operation ends, and also when the process is interrupted
 * (exit-cleanups.ts). A lock whose holder on this machine is no longer running (killed with
 * SIGKILL) is taken over at once; any other lock older than the timeout plus a margin is too.
 * When the lock cannot be created at all (no store directory yet, a read-only store),
 * `operation` runs without it: pass then reports what is wrong, and nothing can write anyway.
 */
async function withStoreLock<T>(
  storeDir: string,
  deadline: Deadline,
  processes: LockProcesses | undefined,
  operation: () => Promise<T>,
): Promise<T> {
  const lock = path.join(storeDir, LOCK_NAME);
  const staleAfterMs = deadline.seconds * 1000 + 10_000;
  const owner = `${os.hostname()}:${processes?.pid ?? 0}`;
  let release: (() => void) | undefined;
  for (;;) {
    try {
      await symlink(owner, lock);
      release = registerCleanup(() => unlinkSync(lock));
      break;
    } catch (error) {
      if (!isErrnoException(error) || error.code !== "EEXIST") break;
    }
    const holder = await lockHolder(lock);
    if (holder === "released") continue;
    // A holder on this machine is asked whether it still runs: a live one is never robbed,
    // however long it takes (gpg waiting for a passphrase). Only a lock whose holder cannot
    // be asked (another machine sharing the store, an older version's lock) goes by its age.
    const askable =
      processes !== undefined && holder.host === os.hostname() && holder.pid !== undefined;
    const deadHolder =
      askable && holder.pid !== processes.pid && !processes.isAlive(holder.pid ?? 0);
    if (deadHolder || (!askable && holder.ageMs > staleAfterMs)) {
      // A small race remains: two waiters may both see the same stale lock. It only arises
      // after a process was killed while holding it.
      await (holder.isDirectory ? rmdir(lock) : unlink(lock)).catch(() => undefined);
      continue;
    }
    // The call's own deadline: what the holder leaves of it is all the operation gets.
    if (deadline.remainingMs() <= 0) {
      throw new CliError(
        `the password store in ${storeDir} is busy: ${lock} has been held for ${seconds(holder.ageMs)} s by another process; if no terraform-credentials helper is running, remove it`,
      );
    }
    await new Promise((resolve) =>
      setTimeout(resolve, LOCK_POLL_MS + Math.random() * LOCK_POLL_MS),
    );
  }
  try {
    return await operation();
  } finally {
    if (release !== undefined) {
      release();
      await unlink(lock).catch(() => undefined);
    }
  }
}

interface LockHolder {
  readonly ageMs: number;
  readonly isDirectory: boolean;
  readonly host?: string;
  readonly pid?: number;
}

/** Who holds the lock and for how long, or "released" when it went meanwhile. */
async function lockHolder(lock: string): Promise<LockHolder | "released"> {
  try {
    const stat = await lstat(lock);
    const ageMs = Date.now() - stat.mtimeMs;
    if (!stat.isSymbolicLink()) return { ageMs, isDirectory: stat.isDirectory() };
    const match = /^(.*):([0-9]+)$/s.exec(await readlink(lock));
    if (match === null) return { ageMs, isDirectory: false };
    return { ageMs, isDirectory: false, host: match[1] ?? "", pid: Number(match[2]) };
  } catch {
    return "released";
  }
}

function notInitialised(storeDir: string): CliError {
  return new CliError(
    `the password store in ${storeDir} is not initialised; run "pass init <gpg-id>" with the id of a GPG key on this machine (see "gpg --list-secret-keys"), or set PASSWORD_STORE_DIR to an existing store`,
  );
}

function spawnFailure(error: Error, context: FailureContext): CliError {
  const shown = JSON.stringify(context.command);
  const code = errorCode(error);
  if (code === "ENOENT") {
    return new CliError(
      `could not run ${shown}: it is not installed or not on the PATH; install pass and gnupg (for example "apt-get install pass", "dnf install pass" or "brew install pass") and create a store with "pass init <gpg-id>"`,
      undefined,
      { cause: error },
    );
  }
  return new CliError(
    `could not run ${shown} (${code}); check that it is the pass executable and that it may be run`,
    undefined,
    {
      cause: error,
    },
  );
}

function timeoutFailure(args: readonly string[], context: FailureContext): CliError {
  const name = args.at(-1) ?? "";
  return new CliError(
    `"pass ${args[0] ?? ""}" did not finish within ${context.seconds} s: gpg is waiting for a passphrase that nobody can enter here, or for a gpg-agent that does not answer; unlock the key first (run "pass show ${name}" once in a terminal) or use a key without a passphrase on build machines; a hung agent: ${HUNG_AGENT_FIX}`,
  );
}

/**
 * Says what a failed `pass` run means. pass and gpg report only in text, so the cases are
 * recognised by the messages they print (pass 1.7.4, gpg 2.2; gpg's are translated, so in
 * another language the generic message, which quotes gpg, is what the user sees).
 */
function passFailure(
  action: string,
  name: string,
  result: PassResult,
  context: FailureContext,
): CliError {
  const { stderr } = result;
  const gpgLines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("gpg: ") && !GPG_NOISE.test(line));

  // pass: "Error: You must run:\n    pass init your-gpg-id\nbefore you may use the password
  // store." followed by its whole usage text: no .gpg-id anywhere above the entry.
  if (/before you may use the password store/.test(stderr)) return notInitialised(context.storeDir);
  // gpg -e: "gpg: <id>: skipped: No public key" / "Unusable public key" (expired, revoked,
  // no encryption subkey) / "No name" (an e-mail address without a key), then
  // "gpg: [stdin]: encryption failed: ...". The entry that was there is left as it was.
  const skipped = gpgLines.find((line) => /: skipped: /.test(line));
  if (
    skipped !== undefined ||
    /encryption failed: (No public key|Unusable public key)/.test(stderr)
  ) {
    return new CliError(
      `gpg cannot encrypt to the key that the password store in ${context.storeDir} names in .gpg-id or PASSWORD_STORE_KEY (${oneLine(skipped ?? gpgLines.join("; "), DETAIL_MAX)}); import that public key or extend its expiry, or run "pass init <gpg-id>" with a usable key (see "gpg --list-secret-keys")`,
    );
  }
  // gpg -d (exit 2): the agent could not use a secret key. pass passes --quiet, so gpg says
  // only "decryption failed: No secret key", both when the key is absent (the entry was
  // encrypted to another key) and when its passphrase cannot be asked for (no pinentry, no
  // terminal: "Inappropriate ioctl for device" without --quiet).
  if (
    /decryption failed: No secret key|No pinentry|Inappropriate ioctl|Operation cancelled|Bad passphrase|problem with the agent/.test(
      stderr,
    )
  ) {
    return new CliError(
      `gpg could not decrypt ${name} (${oneLine(gpgLines.join("; ") || stderr, DETAIL_MAX)}): its secret key is missing from this keyring or locked with a passphrase that cannot be asked for here; unlock the key first (run "pass show ${name}" once in a terminal, or preset the passphrase through gpg-agent) or use a key without a passphrase on build machines`,
    );
  }
  // The first paragraph: after a blank line pass prints its usage text.
  const detail = oneLine(
    (stderr.split(/\n\s*\n/)[0] ?? "")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !GPG_NOISE.test(line))
      .join("; "),
    DETAIL_MAX,
  );
  return new CliError(
    `could not ${action} the password store in ${context.storeDir}: "pass ${result.args[0] ?? ""}" exited with ${result.code === null ? "a signal" : `code ${result.code}`}${detail === "" ? "" : ` (${detail})`}`,
  );
}

// Lines gpg prints on success too; they would only hide the line that explains a failure.
const GPG_NOISE =
  /^gpg: (Note: |WARNING: unsafe|checking the trustdb|marginals needed|depth: |next trustdb check)/;

/** How much of pass/gpg output a message quotes: pass may follow an error with its usage. */
const DETAIL_MAX = 300;

function seconds(milliseconds: number): number {
  return Number((milliseconds / 1000).toFixed(1));
}

function withoutFinalNewline(text: string): string {
  // The stored text is a JSON object without surrounding white space, so the one newline at
  // the end is ours (see `store`). pass 1.7.4 gives back the bytes stored; docker's pass.go
  // notes that some 1.7.x versions add a newline of their own: then there is still just one.
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}

function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && "code" in error;
}

function errorCode(error: unknown): string {
  if (isErrnoException(error) && typeof error.code === "string") return error.code;
  return error instanceof Error ? error.message : String(error);
}
