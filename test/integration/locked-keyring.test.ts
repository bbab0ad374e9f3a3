/**
 * gnome-keyring loaded locked from disk, as after a reboot, in an SSH session or after the
 * daemon was restarted: it reports a locked item's attributes only hashed
 * (`gkr:compat:hashed:*`), which once made get answer {} (not logged in) and list nothing.
 * A locked keyring is unlocked the way secret-tool does (Unlock and its prompt) where a
 * prompt can be shown, and is an error where it cannot.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { runHelper } from "../support/helper-process.ts";
import { linuxOnly } from "../support/keychain-backends.ts";
import { dbusSend, startKeyringSession, type KeyringSession } from "../support/keyring-session.ts";
import { assertOneLineFailure, assertSilentSuccess } from "../support/protocol-suite.ts";
import { addItem, addKeyring, countItems } from "../support/secret-service-items.ts";
import { PATIENCE_MS } from "../support/timing.ts";

const HOST = "locked-from-disk.example.com";
const OURS = { service: "terraform-credentials", username: HOST };

describe("gnome-keyring loaded locked from disk", { skip: linuxOnly("gnome-keyring") }, () => {
  let session: KeyringSession;
  before(async () => {
    session = await startKeyringSession();
    assertSilentSuccess(
      await runHelper(["store", HOST], { env: session.env, stdin: '{"token":"SECRET-disk"}' }),
    );
    await session.restartLocked!();
  });
  after(async () => {
    await session.close();
  });

  const calls = [["get", HOST], ["list"], ["forget", HOST]];
  for (const args of calls) {
    test(`no display: ${args.join(" ")} fails in one line that says the keyring is locked`, async () => {
      const result = await runHelper(args, { env: session.env });
      assertOneLineFailure(result);
      assert.match(
        result.stderr,
        /the keyring "Login" is locked, and no unlock prompt can be shown here/,
      );
      assert.doesNotMatch(result.stderr, /SECRET/);
    });
  }

  // gnome-keyring matches a search against a locked item's hashed attributes and lists what
  // it finds as locked (HOST above is found, and refused): where it finds nothing, nothing is
  // there, locked or not, and no collection needs asking about.
  test("no display: get and forget of a host never stored answer as for an unlocked keyring", async () => {
    const got = await runHelper(["get", "never-stored.example.com"], { env: session.env });
    assert.deepEqual([got.code, got.stdout, got.stderr], [0, "{}\n", ""]);
    assertSilentSuccess(
      await runHelper(["forget", "never-stored.example.com"], { env: session.env }),
    );
  });

  test("no display: the item is still there after all of them", async () => {
    assert.equal(await countItems(session.env, OURS), 1);
  });

  test("with a display: get calls Unlock and follows its prompt, and fails when it is dismissed", async () => {
    const monitor = await monitorBus(session.env);
    try {
      // A display no one can open: gnome-keyring's prompter fails, and the prompt completes
      // as dismissed, as when the person at the desktop says no.
      const result = await runHelper(["get", HOST], {
        env: { ...session.env, DISPLAY: ":9999" },
        timeoutMs: PATIENCE_MS,
      });
      assertOneLineFailure(result);
      assert.match(result.stderr, /the keyring is locked, and its unlock prompt was dismissed/);
      const seen = await monitor.until(/member=Completed/);
      const unlock =
        /method call .* path=\/org\/freedesktop\/secrets; interface=org\.freedesktop\.Secret\.Service; member=Unlock/;
      assert.match(seen, unlock);
      const prompt =
        /^method call .* path=(\/org\/freedesktop\/secrets\/prompt\/\S+); interface=org\.freedesktop\.Secret\.Prompt; member=Prompt$/m.exec(
          seen,
        );
      assert.ok(prompt, `no Prompt call in:\n${seen}`);
      assert.match(
        seen,
        new RegExp(
          `signal .* path=${prompt[1]}; interface=org\\.freedesktop\\.Secret\\.Prompt; member=Completed`,
        ),
      );
    } finally {
      monitor.stop();
    }
  });
});

describe(
  "gnome-keyring started with --unlock and the right password",
  { skip: linuxOnly("gnome-keyring") },
  () => {
    let session: KeyringSession;
    before(async () => {
      session = await startKeyringSession();
    });
    after(async () => {
      await session.close();
    });

    test("a host in another keyring, locked: the message names that keyring, and blames no password", async () => {
      const work = await addKeyring(session.env, "Work", "work-keyring-password");
      await addItem(
        session.env,
        { service: "terraform-credentials", username: "work.example.com" },
        '{"token":"SECRET-work"}',
        "work.example.com",
        work,
      );
      await dbusSend(session.env, [
        "--dest=org.freedesktop.secrets",
        "/org/freedesktop/secrets",
        "org.freedesktop.Secret.Service.Lock",
        `array:objpath:${work}`,
      ]);
      const result = await runHelper(["get", "work.example.com"], { env: session.env });
      assertOneLineFailure(result);
      assert.match(
        result.stderr,
        /^could not read from the keychain: the keyring "Work" is locked, and no unlock prompt can be shown here \(no desktop session\); unlock the "Work" keyring where its unlock prompt can be shown/,
      );
      assert.doesNotMatch(result.stderr, /password|gnome-keyring-daemon|SECRET/);
    });

    test("the login keyring locked by a client: named, and the cause may be that lock", async () => {
      assertSilentSuccess(
        await runHelper(["store", "login.example.com"], {
          env: session.env,
          stdin: '{"token":"SECRET-login"}',
        }),
      );
      await session.lockCollection();
      const result = await runHelper(["get", "login.example.com"], { env: session.env });
      assertOneLineFailure(result);
      assert.match(
        result.stderr,
        /^could not read from the keychain: the keyring "Login" is locked, although gnome-keyring was started with --unlock: the password it was given may have been wrong, or the keyring was locked since; run "echo -n PASSWORD \| gnome-keyring-daemon --replace --unlock/,
      );
    });
  },
);

/**
 * dbus-monitor on the session's bus, watching the Secret Service's Unlock and its prompts;
 * resolves once it is listening.
 */
async function monitorBus(env: Record<string, string>) {
  const child = spawn(
    "dbus-monitor",
    [
      "--address",
      env.DBUS_SESSION_BUS_ADDRESS!,
      "type='method_call',interface='org.freedesktop.Secret.Service',member='Unlock'",
      "type='method_call',interface='org.freedesktop.Secret.Prompt'",
      "type='signal',interface='org.freedesktop.Secret.Prompt'",
    ],
    { env, stdio: ["ignore", "pipe", "ignore"] },
  );
  let text = "";
  const waiters: Array<() => void> = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  const until = async (pattern: RegExp) => {
    const deadline = Date.now() + PATIENCE_MS;
    while (!pattern.test(text)) {
      if (Date.now() > deadline) throw new Error(`dbus-monitor never saw ${pattern}:\n${text}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 1000);
      });
    }
    return text;
  };
  // It says it is listening with the bus's NameAcquired signal to it.
  await until(/member=NameAcquired/);
  return { until, stop: () => child.kill() };
}
