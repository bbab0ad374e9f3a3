import { readFileSync } from "node:fs";
import path from "node:path";
import type { Deadline } from "../../system/deadline.ts";
import { oneLine, printable } from "../../system/quote.ts";
import { captureCommand } from "../../system/run-command.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The gpg key ids that `pass` encrypts an entry in `folder` (relative to the store) to: the
 * nearest `.gpg-id` from that folder up to the store's top, as pass finds it.
 */
export function storeRecipients(storeDir: string, folder: string): string[] {
  const parts = folder.split("/").filter((part) => part !== "");
  for (let depth = parts.length; depth >= 0; depth--) {
    try {
      const text = readFileSync(path.join(storeDir, ...parts.slice(0, depth), ".gpg-id"), "utf8");
      return text
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line !== "" && !line.startsWith("#"));
    } catch {
      // Not here: one folder up.
    }
  }
  return [];
}

/** What stands between gpg and decrypting an entry here, or nothing. */
type GpgVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /**
       * locked: the secret key is here but needs a passphrase no one can type; no answer: gpg
       * (its gpg-agent) did not answer before the deadline, so nothing is known of the key.
       */
      readonly kind: "no key" | "cannot encrypt" | "no secret key" | "locked" | "no answer";
      /** In a few words, for a message. */
      readonly reason: string;
    };

/**
 * The fingerprint of the first secret key gpg has here, or `undefined` when it has none (or
 * gpg cannot be run): what `pass init` needs.
 */
export async function firstSecretKey(env: Env, deadline: Deadline): Promise<string | undefined> {
  const listing = await runGpg(
    env,
    ["--batch", "--with-colons", "--list-secret-keys"],
    "",
    deadline,
  );
  if (listing.code !== 0) return undefined;
  return /^fpr:+([0-9A-F]{40}):/m.exec(listing.stdout)?.[1];
}

/**
 * Whether gpg can decrypt, right now and with nobody to type a passphrase, what is
 * encrypted to the store's `recipients`: a probe message is encrypted to them and decrypted
 * with `--pinentry-mode error`, so a key whose passphrase gpg-agent has not cached fails at
 * once instead of showing a pinentry.
 *
 * Every gpg run shares `deadline`: a run it cuts short means gpg-agent did not answer (with
 * `--pinentry-mode error` nothing else waits), which is said as such, never taken for a
 * missing or locked key.
 */
export async function gpgDecrypts(
  env: Env,
  recipients: readonly string[],
  deadline: Deadline,
): Promise<GpgVerdict> {
  const gpg = (args: readonly string[], input: string) => runGpg(env, args, input, deadline);
  if (recipients.length === 0) return { ok: false, kind: "no key", reason: ".gpg-id names no key" };
  const probe = "terraform-credentials-keychain doctor probe";
  const encrypted = await gpg(
    [
      "--batch",
      "--yes",
      "--trust-model",
      "always",
      "--armor",
      "--encrypt",
      ...recipients.flatMap((id) => ["-r", id]),
    ],
    probe,
  );
  if (encrypted.timedOut) return noAnswer(deadline);
  if (encrypted.code !== 0) {
    const reason = `gpg cannot encrypt to its key ${keyList(recipients)} (${errorLine(encrypted.stderr)})`;
    return { ok: false, kind: "cannot encrypt", reason };
  }
  const decrypted = await gpg(
    ["--batch", "--pinentry-mode", "error", "--decrypt"],
    encrypted.stdout,
  );
  if (decrypted.timedOut) return noAnswer(deadline);
  if (decrypted.code === 0 && decrypted.stdout === probe) return { ok: true };
  // A locked key also fails as "No secret key" when no pinentry may ask: whether the secret
  // key is there at all tells the two apart.
  const secretKeys = await gpg(["--batch", "--list-secret-keys", ...recipients], "");
  if (secretKeys.timedOut) return noAnswer(deadline);
  return secretKeys.code !== 0
    ? {
        ok: false,
        kind: "no secret key",
        reason: `no secret key for ${keyList(recipients)} is on this machine`,
      }
    : {
        ok: false,
        kind: "locked",
        reason:
          "its gpg key needs a passphrase that gpg-agent has not cached, and no one can type it here",
      };
}

/**
 * The probe's verdict when gpg did not answer in time. gpg waits for its agent without a
 * word (a stopped or hung gpg-agent), and "gpgconf --kill" asks that same agent to exit, so
 * the process itself may have to be ended.
 */
function noAnswer(deadline: Deadline): GpgVerdict {
  return {
    ok: false,
    kind: "no answer",
    reason: `gpg-agent did not answer within ${deadline.seconds} s (it is hung or stopped)`,
  };
}

/** What to do about a gpg-agent that does not answer, as printed. */

interface GpgRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Killed at the deadline (or not started, none being left). */
  readonly timedOut: boolean;
}

async function runGpg(
  env: Env,
  args: readonly string[],
  input: string,
  deadline: Deadline,
): Promise<GpgRun> {
  const outcome = await captureCommand("gpg", args, { env, input, deadline });
  switch (outcome.kind) {
    case "exited":
    case "signalled":
    case "timed-out":
      return { ...outcome, timedOut: outcome.kind === "timed-out" };
    case "too-much-output":
      return {
        code: null,
        stdout: "",
        stderr: `gpg wrote more than ${outcome.limit} to ${outcome.stream} and was ended`,
        timedOut: false,
      };
    case "not-found":
    case "not-executable":
    case "too-big":
    case "not-started":
      return {
        code: null,
        stdout: "",
        stderr: `gpg could not be run (${outcome.kind})`,
        timedOut: false,
      };
  }
}

/**
 * The line of gpg's stderr that says what went wrong: one naming a skipped key or a failure,
 * else the last one. Not its first: a fresh GNUPGHOME starts with "keybox ... created".
 */
function errorLine(text: string): string {
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  // gpg repeats a key id as given, escape sequences and all: folded, as all outside text.
  return oneLine(
    lines.find((line) => /: skipped: |failed: /.test(line)) ?? lines.at(-1) ?? "no message",
    200,
  );
}

/** Key ids as messages show them: read from .gpg-id, which a shared store's remote may write. */
function keyList(recipients: readonly string[]): string {
  return recipients.map(printable).join(", ");
}

/** gpg's `-r` options for `recipients`, as shell words (the gpg-key-locked fix's RECIPIENTS). */
export function recipientOptions(recipients: readonly string[]): string {
  // Key ids are fingerprints, e-mail addresses or "Name <address>": nothing a double-quoted
  // shell word would expand, and the first two need no quotes.
  return recipients.map((id) => (/^[\w@.:+-]+$/.test(id) ? `-r ${id}` : `-r "${id}"`)).join(" ");
}
