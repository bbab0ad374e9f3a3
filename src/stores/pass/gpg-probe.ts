import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

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
export type GpgVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** locked: the secret key is here but needs a passphrase no one can type. */
      readonly kind: "no key" | "cannot encrypt" | "no secret key" | "locked";
      /** In a few words, for a message. */
      readonly reason: string;
    };

/**
 * Whether gpg can decrypt, right now and with nobody to type a passphrase, what is
 * encrypted to the store's `recipients`: a probe message is encrypted to them and decrypted
 * with `--pinentry-mode error`, so a key whose passphrase gpg-agent has not cached fails at
 * once instead of showing a pinentry.
 */
/**
 * The fingerprint of the first secret key gpg has here, or `undefined` when it has none (or
 * gpg cannot be run): what `pass init` needs.
 */
export async function firstSecretKey(env: Env, timeoutMs: number): Promise<string | undefined> {
  const listing = await runGpg(
    env,
    ["--batch", "--with-colons", "--list-secret-keys"],
    "",
    timeoutMs,
  );
  if (listing.code !== 0) return undefined;
  return /^fpr:+([0-9A-F]{40}):/m.exec(listing.stdout)?.[1];
}

export async function gpgDecrypts(
  env: Env,
  recipients: readonly string[],
  timeoutMs: number,
): Promise<GpgVerdict> {
  const gpg = (args: readonly string[], input: string) => runGpg(env, args, input, timeoutMs);
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
  if (encrypted.code !== 0) {
    const reason = `gpg cannot encrypt to its key ${recipients.join(", ")} (${errorLine(encrypted.stderr)})`;
    return { ok: false, kind: "cannot encrypt", reason };
  }
  const decrypted = await gpg(
    ["--batch", "--pinentry-mode", "error", "--decrypt"],
    encrypted.stdout,
  );
  if (decrypted.code === 0 && decrypted.stdout === probe) return { ok: true };
  // A locked key also fails as "No secret key" when no pinentry may ask: whether the secret
  // key is there at all tells the two apart.
  const secretKeys = await gpg(["--batch", "--list-secret-keys", ...recipients], "");
  return secretKeys.code !== 0
    ? {
        ok: false,
        kind: "no secret key",
        reason: `no secret key for ${recipients.join(", ")} is on this machine`,
      }
    : {
        ok: false,
        kind: "locked",
        reason:
          "its gpg key needs a passphrase that gpg-agent has not cached, and no one can type it here",
      };
}

interface GpgRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runGpg(
  env: Env,
  args: readonly string[],
  input: string,
  timeoutMs: number,
): Promise<GpgRun> {
  return new Promise((resolve) => {
    const child = spawn("gpg", args, {
      env,
      stdio: ["pipe", "pipe", "pipe"],
      timeout: timeoutMs,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data: Buffer) => (stdout += data.toString()));
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    child.on("error", (error) => resolve({ code: null, stdout, stderr: error.message }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
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
  return lines.find((line) => /: skipped: |failed: /.test(line)) ?? lines.at(-1) ?? "no message";
}

/** gpg's `-r` options for `recipients`, as shell words (the gpg-key-locked fix's RECIPIENTS). */
export function recipientOptions(recipients: readonly string[]): string {
  // Key ids are fingerprints, e-mail addresses or "Name <address>": nothing a double-quoted
  // shell word would expand, and the first two need no quotes.
  return recipients.map((id) => (/^[\w@.:+-]+$/.test(id) ? `-r ${id}` : `-r "${id}"`)).join(" ");
}
