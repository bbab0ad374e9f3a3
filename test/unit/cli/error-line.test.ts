/**
 * Every error with a fix reads the same way: its cause, short, then one fix with this call's
 * options, as data rendered by cli/ (error-line.ts). The situations themselves are walked
 * too: each one in src/fixes.ts is used by some error or probe, and each used one exists.
 * That each command runs as printed is shown where a test can build the situation
 * (test/integration/printed-fixes.test.ts and pass-fixes.test.ts).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { errorLine } from "../../../src/cli/error-line.ts";
import { install } from "../../../src/commands/install.ts";
import { CliError } from "../../../src/errors.ts";
import { FIXES } from "../../../src/fixes.ts";
import {
  ERROR_NO_SUCH_LOGON_SESSION,
  Win32Error,
} from "../../../src/stores/credential-manager/api.ts";
import { credentialManagerError } from "../../../src/stores/credential-manager/store.ts";
import { BusUnavailable, DbusErrorReply } from "../../../src/stores/secret-service/connection.ts";
import { keychainFailure } from "../../../src/stores/secret-service/failures.ts";
import {
  KeyringLocked,
  NoDefaultCollection,
} from "../../../src/stores/secret-service/secret-service.ts";
import { addCredentialsHelper } from "../../../src/terraform/cli-config.ts";
import { callKeychain } from "../../../src/stores/macos-keychain/keychain-calls.ts";
import { createKeychainStore } from "../../../src/stores/macos-keychain/keychain-store.ts";
import type { KeyringBinding } from "../../../src/stores/macos-keychain/load-keyring.ts";
import { deadlineIn } from "../../../src/system/deadline.ts";
import type { Hostname } from "../../../src/protocol/hostname.ts";
import { get } from "../../../src/protocol/verbs.ts";
import { storedTokens } from "../../../src/commands/exec.ts";
import { severalItems } from "../../../src/stores/secret-service/store.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import { createFakeIo } from "../../support/fake-io.ts";

/** At most this many characters before the command (issue 36). */
const CAUSE_MAX = 200;

const thrown = (run: () => unknown): CliError => {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error("nothing thrown");
};

const reply = (name: string) => new DbusErrorReply(name, "text");

/** Each error the helper can print with a fix that a unit test can build. */
const ERRORS: readonly (readonly [string, CliError])[] = [
  [
    "no D-Bus session bus",
    keychainFailure("read from", new BusUnavailable("DBUS_SESSION_BUS_ADDRESS is not set"), 30),
  ],
  [
    "no Secret Service",
    keychainFailure("read from", reply("org.freedesktop.DBus.Error.ServiceUnknown"), 30),
  ],
  [
    "no Secret Service can be started",
    keychainFailure("read from", reply("org.freedesktop.DBus.Error.Spawn.ChildExited"), 30),
  ],
  ["locked, no prompt", keychainFailure("read from", new KeyringLocked("no-prompt"), 30)],
  [
    "locked (IsLocked)",
    keychainFailure("write to", reply("org.freedesktop.Secret.Error.IsLocked"), 30),
  ],
  [
    "locked under a gnome-keyring started with --unlock",
    keychainFailure("read from", new KeyringLocked("no-prompt"), 30, { startedWithUnlock: true }),
  ],
  ["prompt dismissed", keychainFailure("read from", new KeyringLocked("dismissed"), 30)],
  ["no default collection", keychainFailure("write to", new NoDefaultCollection(), 30)],
  [
    "Credential Manager without a profile",
    credentialManagerError("read from", new Win32Error("CredReadW", ERROR_NO_SUCH_LOGON_SESSION)),
  ],
  [
    "install over another helper",
    thrown(() =>
      addCredentialsHelper('credentials_helper "other" {}\n', "keychain", [], {
        file: "/home/u/.terraformrc",
      }),
    ),
  ],
];

/** The error of a call that rejects with a CliError. */
async function rejected(call: () => Promise<unknown>): Promise<CliError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error("nothing thrown");
}

/**
 * The errors with a fix that take a call to build: a store's entry, exec, and the macOS
 * keychain with a binding that fails as the Security framework does.
 */
async function storeErrors(): Promise<(readonly [string, CliError])[]> {
  const locked = {
    AsyncEntry: class {
      getSecret(): Promise<never> {
        return Promise.reject(
          new Error("Platform secure storage failure: User interaction is not allowed."),
        );
      }
    },
  } as unknown as KeyringBinding;
  const store = createKeychainStore(locked, "terraform-credentials", deadlineIn(30));
  const host = "h.example.com" as Hostname;
  return [
    [
      "a stored entry that is not a credentials object",
      await rejected(() => get(createMemoryStore({ [host]: "not json" }), host)),
    ],
    ["exec: no token stored", await rejected(() => storedTokens(createMemoryStore(), [host]))],
    ["several keychain items for a host", severalItems(host, 2)],
    ["macOS keychain locked", await rejected(() => store.get(host))],
    [
      "macOS keychain not answering",
      await rejected(() =>
        callKeychain(
          () => new Promise<never>(() => {}),
          deadlineIn(0.01),
          () => new CliError(""),
        ),
      ),
    ],
  ];
}

const STORE_ERRORS = await storeErrors();

/** install run from the sources: refused before anything is planned. */
async function installFromSources(): Promise<CliError> {
  const machine = {
    env: {},
    platform: "linux" as const,
    arch: "x64",
    homedir: "/nonexistent",
    execPath: "/usr/bin/node",
    isSea: false,
  };
  try {
    await install(
      machine,
      { backend: "keychain", service: "terraform-credentials" },
      { force: false, dryRun: false },
    );
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error("nothing thrown");
}

describe("error lines: the cause, then one fix with this call's options", () => {
  test("install from the sources: the build and install, as one command", async () => {
    const error = await installFromSources();
    const line = await errorLine(error, createFakeIo({ platform: "linux" }), ["install"]);
    assert.equal(
      line,
      'install copies the built executable, and this is the sources; run "npm run build && dist/terraform-credentials-keychain install" (builds the executable and installs it)',
    );
  });

  for (const [name, error] of [...ERRORS, ...STORE_ERRORS]) {
    test(`${name}: one line, a short cause, one fix`, async () => {
      assert.ok(error.fix !== undefined, "it carries its fix as data");
      // The built executable: its fixes name it.
      const io = createFakeIo({
        platform: "linux",
        isSea: true,
        execPath: "/opt/terraform-credentials-keychain",
      });
      const line = await errorLine(error, io, ["--service", "work", "get", "h.example.com"]);
      assert.doesNotMatch(line, /[\r\n]/);
      const runs = line.split('run "').length - 1;
      assert.ok(runs <= 1, `at most one command: ${line}`);
      const cause = runs === 1 ? line.slice(0, line.indexOf('run "')) : line;
      assert.ok(
        cause.length <= CAUSE_MAX,
        `${cause.length} characters before the command: ${line}`,
      );
      assert.doesNotMatch(
        line,
        /\b(HELPER|ARGS|KEY|RECIPIENTS|VARIABLES)\b/,
        "placeholders filled",
      );
      assert.doesNotMatch(
        line,
        /\badd --backend pass to the helper's args|rerun with/,
        "a command, not advice",
      );
      const command = /run "(.*)" \(/.exec(line)?.[1];
      if (command?.startsWith("/opt/terraform-credentials-keychain") === true)
        assert.match(command, /--service work/, "the call's own --service comes along");
    });
  }

  test("an error without a fix is printed as it is", async () => {
    const io = createFakeIo();
    assert.equal(await errorLine(new CliError("plain"), io, []), "plain");
  });

  test("from the sources, a fix that names the helper is left out: no command would run as printed", async () => {
    const line = await errorLine(
      keychainFailure("read from", new BusUnavailable("no bus"), 30),
      createFakeIo({ platform: "linux", isSea: false }),
      ["get", "h"],
    );
    assert.equal(
      line,
      "could not read from the keychain: no D-Bus session bus (no bus), so no keychain here",
    );
  });

  test("a fix's command sets its own options over the call's: no --backend twice", async () => {
    const io = createFakeIo({
      platform: "linux",
      isSea: true,
      execPath: "/opt/terraform-credentials-keychain",
    });
    const error = keychainFailure("read from", new BusUnavailable("no bus"), 30);
    const line = await errorLine(error, io, [
      "--backend",
      "keychain",
      "--service=work",
      "get",
      "h",
    ]);
    assert.match(
      line,
      /run "\/opt\/terraform-credentials-keychain --backend pass --service work install --force"/,
    );
  });
});

describe("the situations of src/fixes.ts", () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? sources(path.join(dir, entry.name))
        : entry.name.endsWith(".ts")
          ? [readFileSync(path.join(dir, entry.name), "utf8")]
          : [],
    );
  const text = sources(path.join(import.meta.dirname, "../../../src"))
    .filter((source) => !source.includes("export const FIXES"))
    .join("\n");
  const used = new Set(
    [...text.matchAll(/situation: "([a-z-]+)"|fixFor\(\s*"([a-z-]+)"/g)].map(
      (match) => match[1] ?? match[2] ?? "",
    ),
  );

  test("every situation an error or probe names exists", () => {
    for (const situation of used) assert.ok(situation in FIXES, situation);
  });

  test("every situation is named by some error, probe or check", () => {
    // Named as a property, in a call (a diagnosis's situation) or passed along.
    const named = new Set([...text.matchAll(/"([a-z]+(?:-[a-z]+)+)"/g)].map((match) => match[1]));
    const unused = Object.keys(FIXES).filter((situation) => !named.has(situation));
    // The alternatives doctor and docs/usage.md name, never an error's one fix.
    assert.deepEqual(unused, ["session-bus-for-a-shell"]);
  });
});
