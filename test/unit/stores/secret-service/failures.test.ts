import assert from "node:assert/strict";
import type { Situation } from "../../../../src/fixes.ts";
import { describe, test } from "node:test";
import { CliError, ExitCode } from "../../../../src/errors.ts";
import {
  BusUnavailable,
  DbusErrorReply,
  DeadlineExpired,
  TURN,
} from "../../../../src/stores/secret-service/connection.ts";
import { diagnose, keychainFailure } from "../../../../src/stores/secret-service/failures.ts";
import {
  KeyringLocked,
  NoDefaultCollection,
  PromptDismissed,
  UnexpectedReply,
} from "../../../../src/stores/secret-service/secret-service.ts";
import { SessionError, startKeyExchange } from "../../../../src/stores/secret-service/session.ts";
import { WireError } from "../../../../src/stores/secret-service/wire.ts";

/** What a service could put in an error's text: never to be shown by the names that hide it. */
const SECRET_TEXT = "SECRET-xyz";
const TIMEOUT_SECONDS = 7;

interface Row {
  readonly name: string;
  readonly error: unknown;
  readonly transient: boolean;
  /** Text the summary must hold. */
  readonly says: RegExp;
  /** The situation of the one fix it carries, when it carries one. */
  readonly fix?: Situation;
}

/** An error reply whose text is SECRET_TEXT. */
const reply = (errorName: string) => new DbusErrorReply(errorName, SECRET_TEXT);

/** Names whose summaries say only what the name means: the reply's text is not shown. */
const REPLIES_THAT_HIDE_THEIR_TEXT: readonly Row[] = [
  {
    name: "ServiceUnknown",
    error: reply("org.freedesktop.DBus.Error.ServiceUnknown"),
    transient: false,
    says: /^no Secret Service on the D-Bus session bus$/,
    fix: "secret-service-missing",
  },
  {
    name: "NameHasNoOwner",
    error: reply("org.freedesktop.DBus.Error.NameHasNoOwner"),
    transient: false,
    says: /^no Secret Service on the D-Bus session bus/,
  },
  {
    name: "Spawn.ChildExited",
    error: reply("org.freedesktop.DBus.Error.Spawn.ChildExited"),
    transient: false,
    says: /could not start a Secret Service \(org\.freedesktop\.DBus\.Error\.Spawn\.ChildExited\)/,
  },
  {
    name: "Spawn.ExecFailed",
    error: reply("org.freedesktop.DBus.Error.Spawn.ExecFailed"),
    transient: false,
    says: /could not start a Secret Service \(org\.freedesktop\.DBus\.Error\.Spawn\.ExecFailed\)/,
  },
  {
    name: "IsLocked",
    error: reply("org.freedesktop.Secret.Error.IsLocked"),
    transient: false,
    says: /^the keyring is locked$/,
    fix: "keyring-locked",
  },
  {
    name: "NoSuchObject",
    error: reply("org.freedesktop.Secret.Error.NoSuchObject"),
    transient: true,
    says: /disappeared while in use; try again$/,
  },
  {
    name: "UnknownObject",
    error: reply("org.freedesktop.DBus.Error.UnknownObject"),
    transient: true,
    says: /disappeared while in use; try again$/,
  },
  {
    name: "NoReply",
    error: reply("org.freedesktop.DBus.Error.NoReply"),
    transient: true,
    says: /overloaded or stopped without answering \(org\.freedesktop\.DBus\.Error\.NoReply\); try again$/,
  },
  {
    name: "LimitsExceeded",
    error: reply("org.freedesktop.DBus.Error.LimitsExceeded"),
    transient: true,
    says: /\(org\.freedesktop\.DBus\.Error\.LimitsExceeded\); try again$/,
  },
  {
    name: "NoMemory",
    error: reply("org.freedesktop.DBus.Error.NoMemory"),
    transient: true,
    says: /\(org\.freedesktop\.DBus\.Error\.NoMemory\); try again$/,
  },
];

/**
 * Names whose summaries echo the reply's text, folded and cut to 160 characters: the bus's
 * explanation of a policy refusal, or the only thing known about an unknown error.
 */
const REPLIES_THAT_ECHO_THEIR_TEXT: readonly Row[] = [
  ...[
    "org.freedesktop.DBus.Error.AccessDenied",
    "org.freedesktop.DBus.Error.NotSupported",
    "org.freedesktop.DBus.Error.UnknownMethod",
    "org.freedesktop.DBus.Error.UnknownInterface",
  ].map((errorName) => ({
    name: errorName.slice(errorName.lastIndexOf(".") + 1),
    error: reply(errorName),
    transient: false,
    says: new RegExp(
      `^the Secret Service refused the call \\(${escape(errorName)}: ${SECRET_TEXT}\\)$`,
    ),
  })),
  {
    name: "a name and a text with a line break, ESC and a bidi override (a bus that checks nothing)",
    error: new DbusErrorReply(
      "org.example.Error.Evil\n\u001b[2J\u202eX",
      "line\n\u001b]0;title\u0007\u202eY",
    ),
    transient: false,
    says: /^the Secret Service failed: org\.example\.Error\.Evil \[2J\\u202eX: line \]0;title \\u202eY$/,
  },
  {
    name: "an unknown name",
    error: reply("org.example.Error.Strange"),
    transient: false,
    says: new RegExp(
      `^the Secret Service failed: org\\.example\\.Error\\.Strange: ${SECRET_TEXT}$`,
    ),
  },
];

const CLIENT_ERRORS: readonly Row[] = [
  {
    name: "BusUnavailable",
    error: new BusUnavailable(
      "could not connect to the D-Bus session bus: connect ENOENT /x/bus",
      "ENOENT",
    ),
    transient: false,
    says: /^no D-Bus session bus \(could not connect to the D-Bus session bus: connect ENOENT \/x\/bus\), so no keychain here$/,
    fix: "session-bus-missing",
  },
  {
    name: "BusUnavailable with code EAGAIN (a busy bus)",
    error: new BusUnavailable(
      "could not connect to the D-Bus session bus at unix:path=/x/bus: EAGAIN, it accepts no more connections for the moment",
      "EAGAIN",
    ),
    transient: true,
    says: /^the D-Bus session bus is overloaded \(could not connect to the D-Bus session bus at unix:path=\/x\/bus: EAGAIN, .*\); try again/,
  },
  {
    name: "DeadlineExpired of a Secret Service call",
    error: new DeadlineExpired("org.freedesktop.Secret.Service.SearchItems"),
    transient: false,
    says: /^the Secret Service did not answer org\.freedesktop\.Secret\.Service\.SearchItems within 7 s: .*--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT/,
  },
  {
    name: "DeadlineExpired of a call to the bus itself",
    error: new DeadlineExpired("org.freedesktop.DBus.Hello", "org.freedesktop.DBus"),
    transient: false,
    says: /^the D-Bus session bus did not answer org\.freedesktop\.DBus\.Hello within 7 s/,
  },
  {
    name: "DeadlineExpired of Properties.Get sent to the Secret Service",
    error: new DeadlineExpired("org.freedesktop.DBus.Properties.Get", "org.freedesktop.secrets"),
    transient: false,
    says: /^the Secret Service did not answer org\.freedesktop\.DBus\.Properties\.Get within 7 s/,
  },
  {
    name: "DeadlineExpired while waiting for another helper's turn",
    error: new DeadlineExpired(TURN),
    transient: false,
    says: /^another helper has been storing or forgetting this host for 7 s and has not finished/,
  },
  {
    name: "KeyringLocked, no prompt possible",
    error: new KeyringLocked("no-prompt"),
    transient: false,
    says: /^the keyring is locked, and no unlock prompt can be shown here \(no desktop session\)$/,
    fix: "keyring-locked",
  },
  {
    name: "KeyringLocked, prompt dismissed",
    error: new KeyringLocked("dismissed"),
    transient: false,
    says: /^the keyring is locked, and its unlock prompt was dismissed$/,
    fix: "unlock-prompt-dismissed",
  },
  {
    name: "NoDefaultCollection",
    error: new NoDefaultCollection(),
    transient: false,
    says: /^the keyring has no default collection to store in$/,
    fix: "no-default-collection",
  },
  {
    name: "PromptDismissed",
    error: new PromptDismissed("CreateItem"),
    transient: false,
    says: /^the Secret Service's prompt for CreateItem was dismissed: someone declined the request$/,
  },
  {
    name: "SessionError",
    error: new SessionError("the secret did not decrypt with the session key"),
    transient: false,
    says: /^the Secret Service's encrypted session failed: the secret did not decrypt with the session key$/,
  },
  {
    name: "SessionError worth another exchange",
    error: new SessionError(
      "the shared secret begins with a zero byte; opening another session",
      true,
    ),
    transient: true,
    says: /^the Secret Service's encrypted session failed: the shared secret begins with a zero byte/,
  },
  {
    name: "NoSession (the provider changed mid-call and forgot our session)",
    error: reply("org.freedesktop.Secret.Error.NoSession"),
    transient: true,
    says: /^the Secret Service no longer knows the encrypted session \(it was restarted\); try again$/,
  },
  {
    name: "UnexpectedReply",
    error: new UnexpectedReply("GetSecrets"),
    transient: false,
    says: /^the Secret Service sent a malformed reply: the Secret Service answered GetSecrets with an unexpected reply$/,
  },
  {
    name: "WireError",
    error: new WireError("bad endianness byte 0x58"),
    transient: false,
    says: /^the Secret Service sent a malformed reply: bad endianness byte 0x58$/,
  },
];

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function assertOneLineSummary(summary: string): void {
  assert.doesNotMatch(summary, /[\p{Cc}\p{Zl}\p{Zp}]/u, "a control or line-separator character");
  // "..." where oneLine() cut a text short is no full stop.
  assert.doesNotMatch(summary, /(?<!\.\.)\.$/, "a trailing period");
  assert.equal(summary, summary.trim());
  assert.notEqual(summary, "");
}

describe("diagnose", () => {
  for (const row of [
    ...REPLIES_THAT_HIDE_THEIR_TEXT,
    ...REPLIES_THAT_ECHO_THEIR_TEXT,
    ...CLIENT_ERRORS,
  ]) {
    test(`${row.name}: ${row.transient ? "transient" : "lasting"}, one line`, () => {
      const diagnosis = diagnose(row.error, TIMEOUT_SECONDS);
      assert.equal(diagnosis.transient, row.transient);
      assert.match(diagnosis.summary, row.says);
      if (row.fix !== undefined) assert.deepEqual(diagnosis.fix, { situation: row.fix });
      assertOneLineSummary(diagnosis.summary);
    });
  }

  for (const row of REPLIES_THAT_HIDE_THEIR_TEXT) {
    test(`${row.name}: the reply's text is not shown`, () => {
      assert.doesNotMatch(diagnose(row.error, TIMEOUT_SECONDS).summary, /SECRET/);
    });
  }

  test("an echoed reply text is folded onto one line and cut to 160 characters", () => {
    const text = `line one\nline two\u001b[2J\u2028${"x".repeat(400)}`;
    for (const errorName of [
      "org.freedesktop.DBus.Error.AccessDenied",
      "org.example.Error.Strange",
    ]) {
      const { summary } = diagnose(new DbusErrorReply(errorName, text), TIMEOUT_SECONDS);
      assertOneLineSummary(summary);
      const echoed = /line one line two.*\.\.\./.exec(summary)?.[0] ?? "";
      assert.equal(echoed.length, 160, summary);
    }
  });

  test("an unknown error reply whose text ends in a period does not end the summary with one", () => {
    // The refusals put the text in parentheses; the fallback for other names ends with it.
    const { summary } = diagnose(
      new DbusErrorReply("org.freedesktop.DBus.Error.InternalError", "Operation failed."),
      TIMEOUT_SECONDS,
    );
    assertOneLineSummary(summary);
  });

  test("a BusUnavailable whose message holds control characters is folded onto one line", () => {
    // A path from DBUS_SESSION_BUS_ADDRESS with %0a in it, or an auth line with an escape
    // sequence: both reach the message as they are.
    for (const message of [
      "could not connect to the D-Bus session bus: connect ENOENT /tmp/a\nb",
      "the D-Bus session bus refused to authenticate us (REJECTED \u001b[2JEXTERNAL)",
    ]) {
      assertOneLineSummary(diagnose(new BusUnavailable(message), TIMEOUT_SECONDS).summary);
    }
  });

  test("the DeadlineExpired summary names the seconds it was given", () => {
    const { summary } = diagnose(new DeadlineExpired("org.freedesktop.Secret.Item.Delete"), 30);
    assert.match(summary, /did not answer org\.freedesktop\.Secret\.Item\.Delete within 30 s/);
    assert.match(diagnose(new DeadlineExpired(TURN), 30).summary, /for 30 s/);
  });

  test("an error reply with no text has an empty text, not a crash", () => {
    const { summary } = diagnose(
      new DbusErrorReply("org.freedesktop.DBus.Error.AccessDenied", ""),
      TIMEOUT_SECONDS,
    );
    assert.equal(
      summary,
      "the Secret Service refused the call (org.freedesktop.DBus.Error.AccessDenied: )",
    );
  });

  test("any other error is rethrown: it is a bug, not a state of the Secret Service", () => {
    const bug = new TypeError("x is undefined");
    assert.throws(
      () => diagnose(bug, TIMEOUT_SECONDS),
      (thrown) => thrown === bug,
    );
    assert.throws(
      () => diagnose("a string", TIMEOUT_SECONDS),
      (thrown) => thrown === "a string",
    );
  });
});

describe("keychainFailure", () => {
  test("wraps a Secret Service failure into a CliError that keeps it as its cause", () => {
    const error = new NoDefaultCollection();
    const failure = keychainFailure("write to", error, TIMEOUT_SECONDS);
    assert.ok(failure instanceof CliError);
    assert.equal(failure.exitCode, ExitCode.Failure);
    assert.equal(failure.cause, error);
    assert.equal(
      failure.message,
      `could not write to the keychain: ${diagnose(error, TIMEOUT_SECONDS).summary}`,
    );
    assert.doesNotMatch(failure.message, /[\n.]$/);
  });

  test("an error reply is wrapped with its summary; the text it hides stays hidden", () => {
    const error = reply("org.freedesktop.Secret.Error.IsLocked");
    const failure = keychainFailure("read from", error, TIMEOUT_SECONDS);
    assert.match(failure.message, /^could not read from the keychain: the keyring is locked/);
    assert.doesNotMatch(failure.message, /SECRET/);
    assert.equal(failure.cause, error);
  });

  test("a CliError passes through as it is", () => {
    const error = new CliError("2 keychain items match example.com, so nothing was stored");
    assert.equal(keychainFailure("write to", error, TIMEOUT_SECONDS), error);
  });

  test("any other error is rethrown as it is", () => {
    const bug = new RangeError("boom");
    assert.throws(
      () => keychainFailure("read from", bug, TIMEOUT_SECONDS),
      (thrown) => thrown === bug,
    );
  });

  test("a shared secret that began with a zero byte every time: the last word promises no other session", async () => {
    // Our private value 5 against the public value 2: the shared secret is 2^5, 127 zero bytes
    // and one 0x20, which session.ts refuses (to be retried with a new exchange).
    const five = (bytes: Uint8Array) => {
      bytes.fill(0);
      bytes[bytes.length - 1] = 5;
      return bytes;
    };
    const error: unknown = await startKeyExchange(five)
      .sessionKey(new Uint8Array([2]))
      .catch((refused: unknown) => refused);
    assert.ok(error instanceof SessionError && error.retry, String(error));
    const failure = keychainFailure("read from", error, TIMEOUT_SECONDS);
    assert.match(failure.message, /zero byte/);
    assert.doesNotMatch(failure.message, /another session/);
  });
});

describe("a locked keyring under a gnome-keyring started with --unlock", () => {
  for (const error of [
    new KeyringLocked("no-prompt"),
    reply("org.freedesktop.Secret.Error.IsLocked"),
  ]) {
    test(`${error.name}: says the password may have been wrong, with its own fix`, () => {
      const diagnosis = diagnose(error, TIMEOUT_SECONDS, { startedWithUnlock: true });
      assert.match(
        diagnosis.summary,
        /^the keyring is locked, although gnome-keyring was started with --unlock: the password it was given may have been wrong, or the keyring was locked since$/,
      );
      assert.deepEqual(diagnosis.fix, { situation: "keyring-password-wrong" });
      assert.deepEqual(diagnose(error, TIMEOUT_SECONDS).fix, { situation: "keyring-locked" });
    });
  }
});

describe("a locked keyring is named by its own label", () => {
  const login = { label: "Login", login: true };
  const work = { label: "Work \u001b[31m", login: false };
  for (const startedWithUnlock of [false, true]) {
    test(`another keyring than the login one (--unlock ${startedWithUnlock ? "given" : "not given"}): its label, and the fix that unlocks it`, () => {
      const diagnosis = diagnose(new KeyringLocked("no-prompt"), TIMEOUT_SECONDS, {
        startedWithUnlock,
        lockedKeyrings: [work],
      });
      assert.equal(
        diagnosis.summary,
        'the keyring "Work \\u001b[31m" is locked, and no unlock prompt can be shown here (no desktop session)',
      );
      assert.deepEqual(diagnosis.fix, {
        situation: "other-keyring-locked",
        values: { KEYRING: '"Work \\u001b[31m"' },
      });
    });
  }

  test("the login keyring under --unlock: named, with the password or a lock since as the cause", () => {
    const diagnosis = diagnose(reply("org.freedesktop.Secret.Error.IsLocked"), TIMEOUT_SECONDS, {
      startedWithUnlock: true,
      lockedKeyrings: [work, login],
    });
    assert.equal(
      diagnosis.summary,
      'the keyring "Login" is locked, although gnome-keyring was started with --unlock: the password it was given may have been wrong, or the keyring was locked since',
    );
    assert.deepEqual(diagnosis.fix, { situation: "keyring-password-wrong" });
  });

  test("the login keyring without --unlock: named, with the fix that unlocks it", () => {
    const diagnosis = diagnose(new KeyringLocked("no-prompt"), TIMEOUT_SECONDS, {
      lockedKeyrings: [login],
    });
    assert.match(diagnosis.summary, /^the keyring "Login" is locked, and no unlock prompt/);
    assert.deepEqual(diagnosis.fix, { situation: "keyring-locked" });
  });
});
