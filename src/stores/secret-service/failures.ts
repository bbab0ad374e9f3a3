import { CliError } from "../../errors.ts";
import type { FixNeeded, Situation } from "../../fixes.ts";
import { oneLine, quote } from "../../system/quote.ts";
import type { LockedKeyring } from "./locked-keyrings.ts";
import { BUS, BusUnavailable, DbusErrorReply, DeadlineExpired, TURN } from "./connection.ts";
import {
  ItemGone,
  KeyringLocked,
  NoDefaultCollection,
  PromptDismissed,
  UnexpectedReply,
} from "./secret-service.ts";
import { SessionError } from "./session.ts";
import { WireError } from "./wire.ts";

/**
 * What is wrong with the Secret Service, said once for every command: `get`, `store`,
 * `forget`, `list` and `doctor` say the same thing for the same state.
 */
interface Diagnosis {
  /** One line for the person: what is wrong (and, without a `fix`, what to do). */
  readonly summary: string;
  /** The one fix that applies, rendered by whoever prints it (cli/, doctor). */
  readonly fix?: FixNeeded;
  /** True when a later attempt may get past it (a busy bus, a restarted service, a bad session). */
  readonly transient: boolean;
}

/** What else the store knows of a failure than the error itself. */
interface Circumstances {
  /**
   * The Secret Service was started with `--unlock` (gnome-keyring-daemon, given a password
   * on stdin): a login keyring locked now may have been given the wrong one.
   */
  readonly startedWithUnlock?: boolean;
  /** The keyrings that are locked (locked-keyrings.ts): a message names them by label. */
  readonly lockedKeyrings?: readonly LockedKeyring[];
}

const LIMIT = "(--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT sets the limit)";

/**
 * Names the cause of a failure from what the client knows about it: the D-Bus error name
 * of a reply (its text is only shown, folded and cut, for refusals and names we do not
 * know, and no service puts a secret there); the kind of a connection failure; the deadline.
 */
export function diagnose(
  error: unknown,
  timeoutSeconds: number,
  circumstances: Circumstances = {},
): Diagnosis {
  const result = (summary: string, transient = false, situation?: Situation): Diagnosis => ({
    summary,
    ...(situation === undefined ? {} : { fix: { situation } }),
    transient,
  });
  const locked = (summary: string): Diagnosis => lockedDiagnosis(summary, circumstances, result);
  if (error instanceof BusUnavailable && error.code === "EAGAIN") {
    // The kernel refused the connect for the moment: the bus is there, and busy. Retried
    // until the deadline; this is said only after it.
    return result(
      `the D-Bus session bus is overloaded (${oneLine(error.message, 200)}); try again ${LIMIT}`,
      true,
    );
  }
  if (error instanceof BusUnavailable) {
    return result(
      `no D-Bus session bus (${oneLine(error.message, 120)}), so no keychain here`,
      false,
      "session-bus-missing",
    );
  }
  if (error instanceof DeadlineExpired) {
    if (error.call === TURN) {
      return result(
        `another helper has been storing or forgetting this host for ${timeoutSeconds} s and has not finished; find and end it, or try again ${LIMIT}`,
      );
    }
    // Who hung is the call's destination: the Secret Service answers
    // org.freedesktop.DBus.Properties too.
    const who =
      error.destination === BUS.destination ? "the D-Bus session bus" : "the Secret Service";
    return result(
      `${who} did not answer ${error.call} within ${timeoutSeconds} s: it hangs or is overloaded; restart it (for example "gnome-keyring-daemon --replace") and try again ${LIMIT}`,
    );
  }
  if (error instanceof KeyringLocked) {
    return error.reason === "no-prompt"
      ? locked("the keyring is locked, and no unlock prompt can be shown here (no desktop session)")
      : result(
          "the keyring is locked, and its unlock prompt was dismissed",
          false,
          "unlock-prompt-dismissed",
        );
  }
  if (error instanceof ItemGone) {
    // Searched again and again, and each time an item went before the next call: another
    // attempt, on a fresh connection after a pause, searches once more.
    return result(
      "the keyring's items kept disappearing while in use (another program is deleting them); try again",
      true,
    );
  }
  if (error instanceof PromptDismissed) {
    return result(`${error.message}: someone declined the request`);
  }
  if (error instanceof NoDefaultCollection) {
    return result(
      "the keyring has no default collection to store in",
      false,
      "no-default-collection",
    );
  }
  if (error instanceof SessionError) {
    // Only an unlucky exchange is worth another; a service whose secrets do not decrypt
    // would fail the same way until the deadline.
    return result(`the Secret Service's encrypted session failed: ${error.message}`, error.retry);
  }
  if (error instanceof UnexpectedReply || error instanceof WireError) {
    return result(`the Secret Service sent a malformed reply: ${oneLine(error.message, 200)}`);
  }
  if (error instanceof DbusErrorReply) return diagnoseReply(error, result, locked);
  throw error;
}

/**
 * A locked keyring, said of the keyring it is (by its label, quoted: the daemon's text) with
 * the fix that unlocks that one. gnome-keyring started with `--unlock` unlocks the login
 * keyring with the password it was given, or creates it: the login keyring locked now was
 * given the wrong one, or has been locked since; `--unlock` opens no other keyring, so
 * another locked one is said as such, whatever the daemon was started with.
 */
function lockedDiagnosis(
  summary: string,
  { startedWithUnlock, lockedKeyrings = [] }: Circumstances,
  result: (summary: string, transient?: boolean, situation?: Situation) => Diagnosis,
): Diagnosis {
  const login = lockedKeyrings.filter((keyring) => keyring.login);
  const others = lockedKeyrings.filter((keyring) => !keyring.login);
  // The login keyring first: its fix is the one that opens it, after which others are seen.
  const named = login.length > 0 ? login : others;
  const said =
    named.length === 0
      ? summary
      : summary.replace(
          /^the keyring is/,
          `the keyring${named.length > 1 ? "s" : ""} ${named.map((keyring) => quote(keyring.label)).join(", ")} ${named.length > 1 ? "are" : "is"}`,
        );
  if (login.length === 0 && others.length > 0) {
    const first = others[0]?.label ?? "";
    return {
      ...result(said, false),
      fix: { situation: "other-keyring-locked", values: { KEYRING: quote(first) } },
    };
  }
  if (startedWithUnlock === true) {
    // Said in its place, not after it: the line stays short.
    return result(
      `${said.replace(/, and no unlock prompt.*$/, "")}, although gnome-keyring was started with --unlock: the password it was given may have been wrong, or the keyring was locked since`,
      false,
      "keyring-password-wrong",
    );
  }
  return result(said, false, "keyring-locked");
}

function diagnoseReply(
  error: DbusErrorReply,
  result: (summary: string, transient?: boolean, situation?: Situation) => Diagnosis,
  locked: (summary: string) => Diagnosis,
): Diagnosis {
  const name = error.errorName;
  // The name is the peer's data too: a bus that does not check names could send any text.
  const shownName = oneLine(name, 120);
  const text = oneLine(error.message.slice(name.length + 2), 160);
  switch (name) {
    case "org.freedesktop.DBus.Error.ServiceUnknown":
    case "org.freedesktop.DBus.Error.NameHasNoOwner":
      return result("no Secret Service on the D-Bus session bus", false, "secret-service-missing");
    case "org.freedesktop.Secret.Error.IsLocked":
      return locked("the keyring is locked");
    case "org.freedesktop.Secret.Error.NoSuchObject":
    case "org.freedesktop.DBus.Error.UnknownObject":
      // An item deleted meanwhile, or a collection that is gone: another attempt searches again.
      return result("the keyring's collection or item disappeared while in use; try again", true);
    case "org.freedesktop.Secret.Error.NoSession":
      // A provider stopped and started anew between our OpenSession and this call: a fresh
      // connection opens a session with the new one.
      return result(
        "the Secret Service no longer knows the encrypted session (it was restarted); try again",
        true,
      );
    case "org.freedesktop.DBus.Error.NoReply":
    case "org.freedesktop.DBus.Error.LimitsExceeded":
    case "org.freedesktop.DBus.Error.NoMemory":
      return result(
        `the Secret Service is overloaded or stopped without answering (${name}); try again`,
        true,
      );
    case "org.freedesktop.DBus.Error.AccessDenied":
    case "org.freedesktop.DBus.Error.NotSupported":
    case "org.freedesktop.DBus.Error.UnknownMethod":
    case "org.freedesktop.DBus.Error.UnknownInterface":
      return result(`the Secret Service refused the call (${name}: ${text})`);
  }
  if (name.startsWith("org.freedesktop.DBus.Error.Spawn.")) {
    return result(
      `the D-Bus session bus could not start a Secret Service (${shownName})`,
      false,
      "session-bus-missing",
    );
  }
  return result(`the Secret Service failed: ${shownName}: ${text.replace(/(?<!\.)\.$/, "")}`);
}

/**
 * The `CliError` for a failed keychain action: `could not read from the keychain: <cause>`,
 * with the diagnosis's fix as data.
 */
export function keychainFailure(
  action: string,
  error: unknown,
  timeoutSeconds: number,
  circumstances: Circumstances = {},
): CliError {
  if (error instanceof CliError) return error;
  const { summary, fix } = diagnose(error, timeoutSeconds, circumstances);
  return new CliError(`could not ${action} the keychain: ${summary}`, undefined, {
    cause: error,
    ...(fix === undefined ? {} : { fix }),
  });
}

/** Whether `error` says the keyring is locked (the one failure `Circumstances` can refine). */
export function isLockedFailure(error: unknown): boolean {
  return (
    (error instanceof KeyringLocked && error.reason === "no-prompt") ||
    (error instanceof DbusErrorReply && error.errorName === "org.freedesktop.Secret.Error.IsLocked")
  );
}
