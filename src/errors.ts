import type { FixNeeded } from "./fixes.ts";

/** Exit codes. Terraform only tells zero from non-zero; `Usage` marks a malformed call. */
export const ExitCode = { Ok: 0, Failure: 1, Usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An error meant for the person (or Terraform) that ran us. `message` is what they read on
 * stderr: what failed (and, without a `fix`, what to do about it). `fix` is the one fix that
 * applies, as data: cli/ renders it after the message, filled with this call's command and
 * options. Neither ever contains a secret.
 */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  readonly fix: FixNeeded | undefined;

  constructor(
    message: string,
    exitCode: ExitCode = ExitCode.Failure,
    options?: { cause?: unknown; fix?: FixNeeded },
  ) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = exitCode;
    this.fix = options?.fix;
  }
}

/** The environment variable that makes errors print their cause and stack. */
export const DEBUG_VARIABLE = "TF_CREDENTIALS_KEYCHAIN_DEBUG";

/** True when the user asked for details with `TF_CREDENTIALS_KEYCHAIN_DEBUG=1`. */
export function debugging(env: Readonly<Record<string, string | undefined>>): boolean {
  return ["1", "true", "yes"].includes((env[DEBUG_VARIABLE] ?? "").toLowerCase());
}

// What a person can act on, for the system errors a config file, a cache directory or a
// standard stream can give: not "this is a bug".
const SYSTEM_ERRORS: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is not a directory",
  EEXIST: "something is already there",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is used up",
  ELOOP: "too many levels of symlinks",
  EBADF: "it is not open for that (a write-only standard input?)",
  EBUSY: "it is busy",
  ETXTBSY: "it is busy",
  EIO: "an input/output error",
  EFBIG: "the file would be too large",
};

/** What an errno code means to a person ("no space left on the device (ENOSPC)"). */
export function errnoMeaning(code: string): string {
  const meaning = SYSTEM_ERRORS[code];
  return meaning === undefined ? code : `${meaning} (${code})`;
}

/**
 * One line for a failed system call on a file or stream (`could not open /x: permission
 * denied (EACCES)`), or `undefined` when `error` is no such failure.
 */
export function systemErrorMessage(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, syscall, path } = error as NodeJS.ErrnoException;
  if (code === undefined || syscall === undefined) return undefined;
  const meaning = SYSTEM_ERRORS[code];
  if (meaning === undefined) return undefined;
  // Reading a descriptor (stdin) names no path; nor does readFileSync, so files.ts adds it.
  const what = path !== undefined ? ` ${path}` : code === "EBADF" ? " standard input" : "";
  return `could not ${syscall}${what}: ${meaning} (${code})`;
}
