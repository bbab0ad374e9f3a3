import { CliError } from "../../errors.ts";
import { oneLine, printable, quote } from "../../system/quote.ts";

/** What a run of `pass` gave back, for `passFailure` to read. */
export interface PassResult {
  /** Exit code; null only if `pass` was killed by a signal that was not ours. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly args: readonly string[];
}

/** What the messages name: the command, the store, the deadline's length. */
export interface FailureContext {
  readonly command: string;
  readonly storeDir: string;
  readonly seconds: number;
}

export function notInitialised(storeDir: string): CliError {
  return new CliError(`the password store in ${storeDir} is not initialised`, undefined, {
    fix: { situation: "store-needs-doctor" },
  });
}

/** What `pass` not starting means: not installed, or not the pass executable. */
export function startFailure(
  outcome: { readonly kind: string; readonly code?: string | number | null },
  context: FailureContext,
): CliError {
  const shown = JSON.stringify(context.command);
  if (outcome.kind === "not-found") {
    return new CliError(
      `could not run ${shown}: it is not installed or not on the PATH`,
      undefined,
      {
        fix: { situation: "pass-missing" },
      },
    );
  }
  return new CliError(
    `could not run ${shown} (${typeof outcome.code === "string" ? outcome.code : outcome.kind}); check that it is the pass executable and that it may be run`,
  );
}

/**
 * `pass` still running at the deadline, with `running` the names of what it had started and
 * still ran then (undefined where /proc does not tell): gpg waiting for a passphrase or an
 * agent is the common case; anything else (git, a hook's children) is named instead. pass's
 * own subshells carry its name, and are not named.
 */
export function timeoutFailure(
  args: readonly string[],
  context: FailureContext,
  running?: readonly string[],
): CliError {
  const name = args.at(-1) ?? "";
  const ours = new Set(["pass", (context.command.split("/").at(-1) ?? "").slice(0, 15)]);
  const others = [...new Set(running ?? [])].filter((program) => !ours.has(program));
  const waitingForGpg = others.length === 0 || others.some((program) => program.startsWith("gpg"));
  const why = waitingForGpg
    ? "gpg waits for a passphrase nobody can enter here, or for a gpg-agent that does not answer"
    : `it still ran ${others.map(printable).join(", ")}, ended now with it`;
  return new CliError(
    `"pass ${args[0] ?? ""} ${name}" did not finish within ${context.seconds} s: ${why}`,
    undefined,
    { fix: { situation: "store-needs-doctor" } },
  );
}

/** `pass` (or what it ran) wrote more than any answer holds, and was ended. */
export function tooMuchOutput(
  args: readonly string[],
  context: FailureContext,
  outcome: { readonly stream: string; readonly limit: string },
): CliError {
  return new CliError(
    `"pass ${args[0] ?? ""} ${args.at(-1) ?? ""}" wrote more than ${outcome.limit} to ${outcome.stream}, more than any entry holds, and was ended; check that ${quote(context.command)} is the pass executable`,
  );
}

/**
 * Says what a failed `pass` run means. pass and gpg report only in text, so the cases are
 * recognised by the messages they print (pass 1.7.4, gpg 2.2; gpg's are translated, so in
 * another language the generic message, which quotes gpg, is what the user sees).
 */
export function passFailure(
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
      `gpg cannot encrypt to the key the password store in ${context.storeDir} names (${oneLine(skipped ?? gpgLines.join("; "), DETAIL_MAX)})`,
      undefined,
      { fix: { situation: "store-needs-doctor" } },
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
      `gpg could not decrypt ${name} (${oneLine(gpgLines.join("; ") || stderr, DETAIL_MAX)}): its secret key is not here, or needs a passphrase nobody can enter here`,
      undefined,
      { fix: { situation: "store-needs-doctor" } },
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
const DETAIL_MAX = 100;
