/**
 * The win-x64 build, run under Wine against Wine's Credential Manager (CredWriteW and
 * CredReadW, kept in the prefix's registry): the protocol suite, plus what only Windows
 * has: the 2560-byte limit of an entry, the object kept as raw UTF-8 with the metadata the
 * landed version (the @napi-rs/keyring addon) wrote, its entries read, listed and
 * forgotten, list, doctor and exec, and install into %APPDATA%; all in a prefix without the
 * Visual C++ runtime. Skipped, with one line naming the package, where Wine or MinGW is
 * missing.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startConnectProxy } from "../e2e/support/connect-proxy.ts";
import { startFixtureServer } from "../e2e/support/fixture-server.ts";
import { runHelper, type HelperResult } from "../support/helper-process.ts";
import {
  assertOneLineFailure,
  assertSilentSuccess,
  describeProtocol,
} from "../support/protocol-suite.ts";
import {
  buildWindowsHelper,
  startWinePrefix,
  VC_RUNTIME_DLLS,
  wineMissing,
  type WinePrefix,
} from "../support/wine-prefix.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const WINDOWS_BUILD = path.join(ROOT, "dist/win-x64/terraform-credentials-keychain.exe");
/** CRED_MAX_CREDENTIAL_BLOB_SIZE: what one Credential Manager entry holds. */
const ENTRY_LIMIT = 2560;
const SERVICE = "terraform-credentials";

const missing = wineMissing();
if (missing !== undefined) {
  test("the win-x64 build under Wine", { skip: missing }, () => {});
} else {
  // One prefix for the whole file: setting one up takes seconds.
  let prefix: Promise<WinePrefix> | undefined;
  const openPrefix = () => {
    if (prefix === undefined) {
      buildWindowsHelper();
      prefix = startWinePrefix();
    }
    return prefix;
  };
  after(async () => {
    await (await prefix)?.close();
  });

  describeProtocol(
    "Windows Credential Manager (win-x64 under Wine)",
    async () => {
      const wine = await openPrefix();
      return {
        env: wine.env,
        args: [],
        command: wine.command(WINDOWS_BUILD),
        close: async () => {},
      };
    },
    {
      // 8 hosts, 24 processes at once, not 20 and 60: with the machine loaded, one of 60
      // Wine processes once died with "wine client error" from wineserver, which is Wine's
      // limit, not the helper's. The full load is proven natively on Linux.
      parallel: 8,
    },
  );

  describe("the win-x64 build under Wine", () => {
    let wine: WinePrefix;
    before(async () => {
      wine = await openPrefix();
    });
    const helper = (args: readonly string[], stdin?: string) =>
      runHelper(args, {
        env: wine.env,
        command: wine.command(WINDOWS_BUILD),
        ...(stdin === undefined ? {} : { stdin }),
      });
    // With both cores busy, Wine once failed to create the child process itself: the helper
    // said `exec: could not start "cmd" (EUNKNOWN)`, as it should. That is Wine's limit, not
    // the helper's, so such a run is made again, up to twice; every exec here may run twice.
    const execUnderWine = async (args: readonly string[]) => {
      for (let attempt = 0; ; attempt++) {
        const result = await helper(args);
        if (attempt >= 2 || !/^exec: could not start "cmd" \(EUNKNOWN\)\n$/.test(result.stderr)) {
          return result;
        }
      }
    };
    const getOk = async (host: string) => {
      const result = await helper(["get", host]);
      assert.equal(result.stderr, "");
      assert.equal(result.code, 0);
      return result.stdout;
    };

    test("a Unicode object is stored as raw UTF-8 and read back byte for byte", async () => {
      const host = "unicode.example.com";
      const object = '{"token":"tök-😀-中文-ß","note":"Ünïcödé \\u00e9 é"}';
      assertSilentSuccess(await helper(["store", host], object));
      const stored = await wine.readCredential(`${SERVICE}/${host}`);
      // UTF-16, which the binding used for a password, would be other bytes and twice as many.
      assert.deepEqual(stored?.blob, Buffer.from(object, "utf8"));
      // The rest as the landed version wrote it: the host as user name, nothing else set.
      assert.deepEqual(
        { ...stored, lastWritten: undefined, blob: undefined },
        {
          lastWritten: undefined,
          blob: undefined,
          persist: 3,
          flags: 0,
          attributeCount: 0,
          userName: host,
          comment: "",
          targetAlias: "",
        },
      );
      const result = await helper(["get", host]);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(Buffer.from(result.stdout, "utf8"), Buffer.from(`${object}\n`, "utf8"));
    });

    // Wine keeps credentials as registry keys (names of at most 255 characters, with its own
    // prefix), so there a host of 226 characters or more cannot be stored; Windows takes
    // names of up to 32767. What must hold under Wine: one line naming the likely cause, and
    // nothing stored that a get would later miss.
    test("a host too long for Wine's Credential Manager: one line that says why, and nothing stored", async () => {
      const label = "a".repeat(63);
      const host = `${label}.${label}.${label}.${"b".repeat(61)}`;
      assert.equal(host.length, 253);
      const result = await helper(["store", host], '{"token":"SECRET-long-host"}');
      assertOneLineFailure(result);
      assert.match(result.stderr, /the entry's name, 275 characters, may be longer than/);
      assert.doesNotMatch(result.stderr, /SECRET/);
      assert.equal(await getOk(host), "{}\n");
    });

    test(`an object of exactly ${ENTRY_LIMIT} bytes is kept whole`, async () => {
      const host = "at-limit.example.com";
      const object = objectOfBytes(ENTRY_LIMIT, "é");
      assertSilentSuccess(await helper(["store", host], object));
      assert.equal((await wine.readCredential(`${SERVICE}/${host}`))?.blob.byteLength, ENTRY_LIMIT);
      assert.equal(await getOk(host), `${object}\n`);
    });

    test(`an object over ${ENTRY_LIMIT} bytes is refused with the limit in the message, and the entry is unchanged`, async () => {
      const host = "over-limit.example.com";
      assertSilentSuccess(await helper(["store", host], '{"token":"keep-me"}'));
      const before = await wine.readCredential(`${SERVICE}/${host}`);
      assert.ok(before !== undefined);

      const result = await helper(["store", host], objectOfBytes(ENTRY_LIMIT + 1, "x"));
      assertOneLineFailure(result);
      assert.ok(result.stdinDrained, "stdin was not read to EOF");
      assert.match(result.stderr, new RegExp(`\\b${ENTRY_LIMIT}\\b`));
      assert.doesNotMatch(result.stderr, /SECRET-over/);
      // Same bytes and same LastWritten: nothing was written, not even the same object again.
      assert.deepEqual(await wine.readCredential(`${SERVICE}/${host}`), before);
      assert.equal(await getOk(host), '{"token":"keep-me"}\n');
    });

    test("the prefix has no Visual C++ runtime, which the helper does not need", async () => {
      for (const dll of VC_RUNTIME_DLLS) {
        assert.equal(await wine.canLoadLibrary(`${dll}.dll`), false, `${dll}.dll loads`);
      }
      // The check itself finds what is there.
      assert.equal(await wine.canLoadLibrary("advapi32.dll"), true);
    });

    test("list of a service with no entry prints nothing, and --json an empty array", async () => {
      const service = ["--service", "list-none"];
      // An entry of another service beside it is not listed.
      assertSilentSuccess(
        await helper(
          ["--service", "list-none-other", "store", "x.example.com"],
          '{"token":"SECRET-x"}',
        ),
      );
      const listed = await helper([...service, "list"]);
      assertCleanSuccess(listed);
      assert.equal(listed.stdout, "");
      const json = await helper([...service, "list", "--json"]);
      assertCleanSuccess(json);
      assert.equal(json.stdout, "[]\n");
    });

    test("list of one entry of odd byte length prints its host", async () => {
      const service = ["--service", "list-one"];
      const object = '{"token":"SECRET-one1"}';
      assert.equal(Buffer.byteLength(object) % 2, 1);
      assertSilentSuccess(await helper([...service, "store", "one.example.com"], object));
      const listed = await helper([...service, "list"]);
      assertCleanSuccess(listed);
      assert.equal(listed.stdout, "one.example.com\n");
    });

    test("list prints many hosts of odd and even byte lengths, sorted, and no token or other service", async () => {
      const service = ["--service", "listed"];
      const hosts: string[] = [];
      for (let index = 0; index < 12; index++) {
        const host = `h${String(index).padStart(2, "0")}.example.com`;
        hosts.push(host);
        // Objects of 19 + index bytes: odd and even lengths alternate.
        const object = `{"token":"SECRET-${"x".repeat(index)}"}`;
        assertSilentSuccess(await helper([...service, "store", host], object));
      }
      assertSilentSuccess(
        await helper([...service, "store", "A.Example.com:443"], '{"token":"SECRET-a"}'),
      );
      assertSilentSuccess(
        await helper(
          ["--service", "listed-other", "store", "other.example.com"],
          '{"token":"SECRET-o"}',
        ),
      );
      assertSilentSuccess(
        await helper(
          ["--service", "other-listed", "store", "h99.example.com"],
          '{"token":"SECRET-h"}',
        ),
      );
      const expected = ["a.example.com", ...hosts];
      const listed = await helper([...service, "list"]);
      assertCleanSuccess(listed);
      assert.equal(listed.stdout, expected.map((host) => `${host}\n`).join(""));
      assert.doesNotMatch(listed.stdout, /SECRET/);
      const json = await helper([...service, "list", "--json"]);
      assertCleanSuccess(json);
      assert.equal(json.stdout, `${JSON.stringify(expected)}\n`);
    });

    test("entries written as the landed version wrote them are read, listed and forgotten", async () => {
      const service = "landed";
      const objects = {
        "odd.example.com": '{"token":"SECRET-odd"}',
        "even.example.com": '{"token":"SECRET-even1"}',
      };
      for (const [host, object] of Object.entries(objects)) {
        await wine.writeLandedCredential(`${host}.${service}`, host, Buffer.from(object, "utf8"));
      }
      for (const [host, object] of Object.entries(objects)) {
        assert.equal(await runOk(helper(["--service", service, "get", host])), `${object}\n`);
      }
      assert.equal(
        await runOk(helper(["--service", service, "list"])),
        "even.example.com\nodd.example.com\n",
      );
      assertSilentSuccess(await helper(["--service", service, "forget", "odd.example.com"]));
      assert.equal(await wine.readCredential(`odd.example.com.${service}`), undefined);
      assert.equal(await runOk(helper(["--service", service, "list"])), "even.example.com\n");
    });

    // (a.example, --service prod.dots) and (a.example.prod, --service dots): earlier versions
    // named both entries "a.example.prod.dots".
    test("profiles whose host and service share dots never read or delete each other's tokens", async () => {
      const a = ["--service", "prod.dots"];
      const b = ["--service", "dots"];
      // An entry as earlier versions stored it for b's host.
      await wine.writeLandedCredential(
        "a.example.prod.dots",
        "a.example.prod",
        Buffer.from('{"token":"SECRET-b"}', "utf8"),
      );
      assert.equal(await runOk(helper([...a, "get", "a.example"])), "{}\n");
      assert.equal(await runOk(helper([...a, "list"])), "");
      assertSilentSuccess(await helper([...a, "forget", "a.example"]));
      assertSilentSuccess(await helper([...a, "store", "a.example"], '{"token":"SECRET-a"}'));
      assert.equal(await runOk(helper([...b, "get", "a.example.prod"])), '{"token":"SECRET-b"}\n');
      assert.equal(await runOk(helper([...a, "get", "a.example"])), '{"token":"SECRET-a"}\n');
      // b's store moves its entry to the new name; a's forget still leaves it alone.
      assertSilentSuccess(await helper([...b, "store", "a.example.prod"], '{"token":"SECRET-b2"}'));
      assert.equal(await wine.readCredential("a.example.prod.dots"), undefined);
      assertSilentSuccess(await helper([...a, "forget", "a.example"]));
      assert.equal(await runOk(helper([...a, "get", "a.example"])), "{}\n");
      assert.equal(await runOk(helper([...b, "get", "a.example.prod"])), '{"token":"SECRET-b2"}\n');
      assert.equal(await runOk(helper([...b, "list"])), "a.example.prod\n");
    });

    test("an entry stored now carries what the landed version wrote: the same reader sees no difference", async () => {
      const host = "same-as-landed.example.com";
      const object = '{"token":"SECRET-same"}';
      assertSilentSuccess(await helper(["store", host], object));
      const ours = await wine.readCredential(`${SERVICE}/${host}`);
      await wine.writeLandedCredential(`landed-${host}.${SERVICE}`, host, Buffer.from(object));
      const landed = await wine.readCredential(`landed-${host}.${SERVICE}`);
      assert.ok(ours !== undefined && landed !== undefined);
      const { lastWritten: _ours, ...ourFields } = ours;
      const { lastWritten: _landed, ...landedFields } = landed;
      assert.deepEqual(ourFields, landedFields);
      assert.equal(ours.persist, 3, "CRED_PERSIST_ENTERPRISE");
    });

    test("doctor reports Credential Manager, the 2560-byte limit and the service's hosts, and no token", async () => {
      const service = ["--service", "doctored"];
      assertSilentSuccess(
        await helper([...service, "store", "d1.example.com"], '{"token":"SECRET-d1"}'),
      );
      assertSilentSuccess(
        await helper([...service, "store", "d2.example.com"], '{"token":"SECRET-d2xyz"}'),
      );
      // --offline: this test is about Credential Manager; d1/d2.example.com are not real hosts.
      const result = await helper([...service, "doctor", "--offline"]);
      // Not installed in this prefix: doctor fails for that, not for the store.
      assert.match(
        result.stdout,
        /^ok {4}store --backend keychain \(service "doctored"\): reachable, 2 hosts stored\n {6}Windows Credential Manager answers \(an entry holds at most 2560 bytes; the largest of service "doctored" has 24\)\n {6}has credentials for d1\.example\.com\n {6}has credentials for d2\.example\.com$/m,
      );
      assert.doesNotMatch(result.stdout + result.stderr, /SECRET/);
    });

    test("doctor sends no token to a host whose certificate Windows does not trust, whatever Bun's variables say", async () => {
      const host = "impostor.example.com";
      const token = "tok-for-the-impostor";
      await using impostor = await startFixtureServer({
        token: "tok-unused",
        tokensByHost: { [host]: token },
      });
      await using proxy = await startConnectProxy(impostor.port);
      const service = ["--service", "impostor"];
      assertSilentSuccess(await helper([...service, "store", host], JSON.stringify({ token })));
      // Go on Windows reads none of these: it asks the system's certificate store.
      const impostorCa = `Z:${impostor.caFile.replace(/\//g, "\\")}`;
      const seen = [];
      for (const variables of [
        { NODE_TLS_REJECT_UNAUTHORIZED: "0" },
        { NODE_EXTRA_CA_CERTS: impostorCa },
        { SSL_CERT_FILE: impostorCa },
      ]) {
        impostor.clearRequests();
        const result = await runHelper([...service, "doctor"], {
          env: { ...wine.env, HTTPS_PROXY: proxy.url, ...variables },
          command: wine.command(WINDOWS_BUILD),
        });
        const line = result.stdout
          .split(/\r?\n/)
          .find((text) => text.includes(`token for ${host}`));
        seen.push({ variables, requests: impostor.requests.map((request) => request.kind), line });
      }
      const refused =
        "warn  token for impostor.example.com: not checked: discovery failed: TLS: the certificate is not signed by a trusted CA (UNABLE_TO_VERIFY_LEAF_SIGNATURE)";
      assert.deepEqual(
        seen,
        seen.map(({ variables }) => ({ variables, requests: [], line: refused })),
      );
    });

    test("exec gives its command the tokens as TF_TOKEN_ variables", async () => {
      const service = ["--service", "exec"];
      assertSilentSuccess(
        await helper([...service, "store", "app.example.com"], '{"token":"tok-app"}'),
      );
      const result = await execUnderWine([
        ...service,
        "exec",
        "--",
        "cmd",
        "/c",
        "set",
        "TF_TOKEN_",
      ]);
      assert.equal(result.stderr, "");
      assert.equal(result.code, 0);
      assert.equal(result.stdout.replace(/\r\n/g, "\n"), "TF_TOKEN_app_example_com=tok-app\n");
      const failing = await execUnderWine([...service, "exec", "--", "cmd", "/c", "exit", "7"]);
      assert.equal(failing.code, 7);
    });

    test("install puts the .exe and the block under %APPDATA%; uninstall takes both away", async () => {
      const plugin = path.join(
        wine.appData,
        "terraform.d",
        "plugins",
        "terraform-credentials-keychain.exe",
      );
      const terraformRc = path.join(wine.appData, "terraform.rc");
      assert.equal(existsSync(plugin), false);

      const installed = await helper(["--service", "work", "install"]);
      assertCleanSuccess(installed);
      assert.equal(sha256(plugin), sha256(WINDOWS_BUILD));
      const config = readFileSync(terraformRc, "utf8");
      assert.match(config, /credentials_helper "keychain" \{/);
      // Both options, always: Terraform's calls then name their store on their line.
      assert.match(config, /args\s*=\s*\["--backend", "keychain", "--service", "work"\]/);

      // The installed copy is the one Terraform will start: it answers from the same store.
      assertSilentSuccess(
        await helper(["--service", "work", "store", "installed.example.com"], '{"token":"t"}'),
      );
      const fromCopy = await runHelper(["--service", "work", "get", "installed.example.com"], {
        env: wine.env,
        command: wine.command(plugin),
      });
      assert.equal(fromCopy.stderr, "");
      assert.equal(fromCopy.stdout, '{"token":"t"}\n');

      const again = await helper(["--service", "work", "install"]);
      assertCleanSuccess(again);
      assert.equal(readFileSync(terraformRc, "utf8"), config, "a second install changed the file");

      // uninstall follows the installed block's --service, and says so on stderr.
      const uninstall = await helper(["uninstall"]);
      assert.equal(uninstall.code, 0, uninstall.stderr);
      assert.match(
        uninstall.stderr,
        /^following the credentials_helper block in [^\n]*terraform\.rc: --backend keychain --service work\n$/,
      );
      assert.equal(existsSync(plugin), false);
      // terraform.rc held only the block install wrote: uninstall removes it rather than leave
      // an empty file that would still decide which file OpenTofu reads.
      assert.equal(existsSync(terraformRc), false);
    });
  });
}

/** A credentials object of exactly `bytes` UTF-8 bytes, padded with `pad` (1 or 2 bytes). */
function objectOfBytes(bytes: number, pad: "x" | "é"): string {
  const shell = '{"token":"SECRET-over","pad":""}';
  const room = bytes - Buffer.byteLength(shell);
  const padBytes = Buffer.byteLength(pad);
  const text = pad.repeat(Math.floor(room / padBytes)) + "x".repeat(room % padBytes);
  const object = `{"token":"SECRET-over","pad":"${text}"}`;
  assert.equal(Buffer.byteLength(object), bytes);
  return object;
}

/** The stdout of a run that must exit 0 with nothing on stderr. */
async function runOk(running: Promise<HelperResult>): Promise<string> {
  const result = await running;
  assertCleanSuccess(result);
  return result.stdout;
}

/** Exit 0 and nothing on stderr (human commands print on stdout). */
function assertCleanSuccess(result: HelperResult): void {
  assert.equal(result.stderr, "");
  assert.equal(result.code, 0);
}

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}
