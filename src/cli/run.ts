import { CliError, DEBUG_VARIABLE, debugging, ExitCode, systemErrorMessage } from "../errors.ts";
import { MAX_CREDENTIALS_BYTES } from "../protocol/credentials-object.ts";
import * as verbs from "../protocol/verbs.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import type { Io } from "../system/io.ts";
import type { GlobalOptions } from "../commands/options.ts";
import {
  deadlineIn,
  DEFAULT_TIMEOUT_SECONDS,
  timeoutSeconds,
  type Deadline,
} from "../system/deadline.ts";
import type { VerbHandlers } from "./program.ts";
import { followedOptions } from "./followed-options.ts";
import { isStoreCall, protocolCall } from "./protocol-call.ts";
import { normalizeHostname } from "../protocol/hostname.ts";
import { drainInput, readInput, timedOutMessage, type InputLimits } from "./read-input.ts";
import { oneLine } from "../system/quote.ts";
import type { CommandRunner } from "../commands/exec.ts";
import type { HttpsGet } from "../system/https-get.ts";

/** What `run` needs from outside the process's own streams. */
export interface Dependencies {
  readonly version: string;
  /**
   * Opens the store the options select; called only by verbs that use it. The store calls
   * `beforeSecret` once a secret is about to be read.
   */
  openStore(
    options: GlobalOptions,
    io: Io,
    beforeSecret: () => Promise<void>,
    deadline?: Deadline,
  ): CredentialStore | Promise<CredentialStore>;
  /**
   * Makes the process fit to hold a token (no core dumps: system/core-dumps.ts). Called at
   * most once, before stdin is read or a secret fetched, and never by a call that holds no
   * token (`forget`, a `get` that finds nothing).
   */
  protectSecrets(): Promise<void>;
  /** Sends doctor's HTTPS requests; absent where no request may leave (tests in-process). */
  readonly httpsGet?: HttpsGet;
  /** Runs `exec`'s command; absent where no child process may be started. */
  readonly runCommand?: CommandRunner;
}

/**
 * Runs one invocation and returns its exit code. Everything the user reads goes through
 * `io`: stdout carries only protocol JSON (or help and version text when asked), and every
 * non-zero exit comes with one message on stderr.
 */
export async function run(argv: readonly string[], io: Io, deps: Dependencies): Promise<number> {
  // `exec` ends with its command's exit code, which can be any number.
  const ended: { code?: number } = {};
  const stdin = { read: false };
  let protecting: Promise<void> | undefined;
  const beforeSecret = () => (protecting ??= deps.protectSecrets());
  const openStore = (options: GlobalOptions, deadline?: Deadline) =>
    deps.openStore(options, io, beforeSecret, deadline);
  /**
   * The object on stdin, and the deadline its reading started: from a pipe, the store call
   * that follows takes what is left of it, so that the whole call ends within --timeout.
   * What a person types at a terminal does not count against the store's time.
   */
  const readStdin = async (options: Pick<GlobalOptions, "timeout">) => {
    const limits = await stdinLimits(io, timeoutSeconds(options, io.env));
    await beforeSecret();
    stdin.read = true;
    const input = await readInput(io.stdin, limits);
    return { input, deadline: (await io.stdinIsTTY()) ? undefined : limits.deadline };
  };

  // One rule for every call, Terraform's, a script's and a person's: the store its line
  // names, else the installed block's, else the defaults (followed-options.ts).
  const withStore = async <T>(
    given: Partial<GlobalOptions>,
    use: (store: CredentialStore) => Promise<T>,
    deadline?: Deadline,
  ): Promise<T> => {
    return use(await openStore(await followedOptions(io, given), deadline));
  };
  const verbHandlers: VerbHandlers = {
    async get(given, host) {
      const found = await withStore(given, (store) => verbs.get(store, host));
      io.stdout.write(`${found}\n`);
    },
    async store(given, host) {
      // Read to EOF before anything can fail, as the protocol asks.
      const { input, deadline } = await readStdin(given);
      await withStore(given, (store) => verbs.store(store, host, input), deadline);
    },
    async forget(given, host) {
      await withStore(given, (store) => verbs.forget(store, host));
    },
  };

  // Set once commander is loaded: only its errors are of its kind.
  let isCommanderError = (_error: unknown): _error is { code: string } => false;
  try {
    const call = protocolCall(argv);
    if (call !== undefined) {
      // What Terraform runs, every time: no commander, no commands for people.
      await verbHandlers[call.verb](call.given, normalizeHostname(call.hostname));
      return ExitCode.Ok;
    }
    const [{ CommanderError }, { runProgram }] = await Promise.all([
      import("commander"),
      import("./program.ts"),
    ]);
    isCommanderError = (error): error is { code: string } => error instanceof CommanderError;
    // The commands for people read tokens in many ways (import, exec, doctor's files):
    // protected from the start.
    await beforeSecret();
    const { version, httpsGet, runCommand } = deps;
    await runProgram(
      io,
      {
        version,
        openStore,
        ended,
        ...(httpsGet && { httpsGet }),
        ...(runCommand && { runCommand }),
      },
      verbHandlers,
      argv,
    );
    return ended.code ?? ExitCode.Ok;
  } catch (error) {
    // A store call that failed before reading (bad hostname, bad option) still drains
    // stdin, so that Terraform's write does not fail on a closed pipe.
    if (!stdin.read && isStoreCall(argv) && !(await io.stdinIsTTY())) {
      await drainStoreInput(argv, io, beforeSecret);
    }
    return await report(error, io, argv, isCommanderError);
  }
}

/**
 * The limits of reading the credentials object on stdin for a call of `seconds`, the reads
 * that block (Windows) bounded by the same deadline as the reader's own timer.
 */
async function stdinLimits(io: Io, seconds: number): Promise<InputLimits> {
  const limits = {
    maxBytes: MAX_CREDENTIALS_BYTES,
    // A person at a terminal types or pastes: minutes, not the seconds a pipe gets.
    deadline: deadlineIn(Math.max(seconds, (await io.stdinIsTTY()) ? 300 : 0)),
    source: "the credentials object on stdin",
  };
  await io.boundStdin?.(limits.deadline.seconds, timedOutMessage(limits));
  return limits;
}

/** Reads a failed store call's stdin to its end, within the deadline its line gives. */
async function drainStoreInput(
  argv: readonly string[],
  io: Io,
  beforeSecret: () => Promise<void>,
): Promise<void> {
  // The deadline given on the line when it can be read, else the default's.
  let seconds;
  try {
    seconds = timeoutSeconds(protocolCall(argv)?.given ?? {}, io.env);
  } catch {
    seconds = DEFAULT_TIMEOUT_SECONDS;
  }
  const limits = await stdinLimits(io, seconds);
  await beforeSecret();
  await drainInput(io.stdin, limits);
}

async function report(
  error: unknown,
  io: Io,
  argv: readonly string[],
  isCommanderError: (error: unknown) => error is { code: string },
): Promise<ExitCode> {
  if (error instanceof CliError) {
    const { errorLine } = await import("./error-line.ts");
    io.stderr.write(`${await errorLine(error, io, argv)}\n`);
    if (debugging(io.env) && error.cause instanceof Error) {
      io.stderr.write(`cause: ${error.cause.stack ?? error.cause.message}\n`);
    }
    return error.exitCode;
  }
  if (isCommanderError(error)) {
    // Only help and version get here, once commander has written them (usage errors are
    // CliErrors: see usageError). `help` exits through "commander.help", whose exitCode
    // copies process.exitCode, which is not ours to read.
    return ExitCode.Ok;
  }
  const system = systemErrorMessage(error);
  if (system !== undefined) {
    io.stderr.write(`${oneLine(system)}\n`);
    if (debugging(io.env) && error instanceof Error && error.stack) {
      io.stderr.write(`${error.stack}\n`);
    }
    return ExitCode.Failure;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(
    `unexpected error: ${message.split("\n")[0]} (this is a bug; rerun with ${DEBUG_VARIABLE}=1 for details and report it)\n`,
  );
  if (debugging(io.env) && error instanceof Error && error.stack) {
    io.stderr.write(`${error.stack}\n`);
  }
  return ExitCode.Failure;
}
