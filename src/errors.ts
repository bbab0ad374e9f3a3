/** Exit codes. Terraform only tells zero from non-zero; `Usage` marks a malformed call. */
export const ExitCode = { Ok: 0, Failure: 1, Usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An error meant for the person (or Terraform) that ran us. `message` is what they read on
 * stderr: what failed and what to do about it. It never contains a secret.
 */
export class CliError extends Error {
  readonly exitCode: ExitCode;

  constructor(
    message: string,
    exitCode: ExitCode = ExitCode.Failure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

/** The environment variable that makes errors print their cause and stack. */
export const DEBUG_VARIABLE = "TF_CREDENTIALS_KEYCHAIN_DEBUG";

/** True when the user asked for details with `TF_CREDENTIALS_KEYCHAIN_DEBUG=1`. */
export function debugging(env: Readonly<Record<string, string | undefined>>): boolean {
  return ["1", "true", "yes"].includes((env[DEBUG_VARIABLE] ?? "").toLowerCase());
}
