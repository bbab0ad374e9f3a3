import { readdir } from "node:fs/promises";
import path from "node:path";
import { CliError } from "../../errors.ts";
import type { Hostname } from "../../protocol/hostname.ts";
import type { CredentialStore } from "../../protocol/credential-store.ts";
import type { Deadline } from "../../system/deadline.ts";
import { captureCommand } from "../../system/run-command.ts";
import {
  decodeHostFromPath,
  encodeHostForPath,
  ENTRY_SUFFIX,
  serviceFolder,
} from "./entry-names.ts";
import { passStoreDir } from "./store-dir.ts";
import { gpgDecrypts, recipientOptions, storeRecipients } from "./gpg-probe.ts";
import {
  notInitialised,
  passFailure,
  startFailure,
  timeoutFailure,
  tooMuchOutput,
  type FailureContext,
  type PassResult,
} from "./pass-failures.ts";
import { withStoreLock, type LockProcesses } from "./store-lock.ts";

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
      throw new CliError(`nothing was stored in pass: ${verdict.reason}`, undefined, {
        fix: { situation: "gpg-agent-hung" },
      });
    }
    if (!verdict.ok && verdict.kind === "locked") {
      throw new CliError(`nothing was stored in pass: ${verdict.reason}`, undefined, {
        fix: { situation: "gpg-key-locked", values: { RECIPIENTS: recipientOptions(recipients) } },
      });
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

/**
 * Runs `pass` once with `stdin` as its only input. Resolves with its exit code whatever it
 * is; throws a `CliError` only if `pass` cannot be started or runs past `deadline` (then it
 * is killed).
 */
async function runPass(
  args: readonly string[],
  env: Record<string, string>,
  stdin: string | undefined,
  context: FailureContext,
  deadline: Deadline,
): Promise<PassResult> {
  const outcome = await captureCommand(context.command, args, {
    env,
    ...(stdin === undefined ? {} : { input: stdin }),
    deadline,
  });
  switch (outcome.kind) {
    case "exited":
    case "signalled":
      return { code: outcome.code, stdout: outcome.stdout, stderr: outcome.stderr, args };
    case "timed-out":
      throw timeoutFailure(args, context, outcome.running);
    case "too-much-output":
      throw tooMuchOutput(args, context, outcome);
    case "not-found":
    case "not-executable":
    case "too-big":
    case "not-started":
      throw startFailure(outcome, context);
  }
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
