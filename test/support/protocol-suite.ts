import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runHelper, type HelperResult } from "./helper-process.ts";

/** A running backend that the built helper can store into. */
export interface ProtocolBackend {
  /** Environment for the helper (private HOME, bus address, store directory, ...). */
  readonly env: Record<string, string>;
  /** Options that select the backend, placed before the verb as Terraform does. */
  readonly args: readonly string[];
  /** The command line that runs the helper, when not the host's build (Wine, qemu). */
  readonly command?: readonly [string, ...string[]];
  close(): Promise<void>;
}

export interface ProtocolSuiteOptions {
  /** How many hosts the parallel case uses (each has a store, a shared store and a get). */
  readonly parallel?: number;
  /** How long one call of the helper may take before it is killed (default 20 s). */
  readonly timeoutMs?: number;
}

/**
 * What the helper adds to the credentials helper protocol, checked against the built
 * executable and a real backend: its own hostname normalisation, the objects and the calls it
 * refuses, --service, list, and many calls at once. One suite, run once per store, so every
 * store keeps the same promises. The protocol's own rules are the conformance table's
 * (test/conformance/rules.ts).
 */
export function describeProtocol(
  name: string,
  start: () => Promise<ProtocolBackend>,
  options: ProtocolSuiteOptions = {},
): void {
  const parallel = options.parallel ?? 20;
  describe(`credentials helper protocol over ${name}`, () => {
    let backend: ProtocolBackend;
    before(async () => {
      backend = await start();
    });
    after(async () => {
      await backend.close();
    });

    const helper = (args: readonly string[], stdin?: string | Uint8Array) =>
      runHelper([...backend.args, ...args], {
        env: backend.env,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(backend.command === undefined ? {} : { command: backend.command }),
        ...(stdin === undefined ? {} : { stdin }),
      });
    const storeOk = async (host: string, object: string, extra: readonly string[] = []) => {
      assertSilentSuccess(await helper([...extra, "store", host], object));
    };
    const getText = async (host: string, extra: readonly string[] = []) => {
      const result = await helper([...extra, "get", host]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, "");
      return result.stdout;
    };

    test("an object without a token and an empty token are kept as they are", async () => {
      await storeOk("no-token.example.com", '{"other":"value"}');
      assert.equal(await getText("no-token.example.com"), '{"other":"value"}\n');
      await storeOk("empty-token.example.com", '{"token":""}');
      assert.equal(await getText("empty-token.example.com"), '{"token":""}\n');
    });

    test("hostname spellings that Terraform treats as one host reach one entry", async () => {
      await storeOk("App.Example.COM", '{"token":"case"}');
      assert.equal(await getText("app.example.com"), '{"token":"case"}\n');
      assert.equal(await getText("app.example.com:443"), '{"token":"case"}\n');
      await storeOk("münchen.de", '{"token":"idn"}');
      assert.equal(await getText("xn--mnchen-3ya.de"), '{"token":"idn"}\n');
      assert.equal(await getText("app.example.com:8443"), "{}\n");
      await storeOk("app.example.com:08443", '{"token":"port"}');
      assert.equal(await getText("app.example.com:8443"), '{"token":"port"}\n');
      assert.equal(await getText("app.example.com"), '{"token":"case"}\n');
    });

    test("--service keeps separate sets of entries", async () => {
      await storeOk("profiles.example.com", '{"token":"work"}', ["--service", "work"]);
      await storeOk("profiles.example.com", '{"token":"home"}', ["--service", "home"]);
      assert.equal(
        await getText("profiles.example.com", ["--service", "work"]),
        '{"token":"work"}\n',
      );
      assert.equal(
        await getText("profiles.example.com", ["--service", "home"]),
        '{"token":"home"}\n',
      );
      assert.equal(await getText("profiles.example.com"), "{}\n");
    });

    // keyring-node's Windows findCredentials decoded every blob as UTF-16, which an object
    // of odd byte length (raw UTF-8, as the helper stores it) is not: list must still name it.
    test("list names every host, whatever the byte length of its object", async () => {
      const objects = {
        "odd-length.example.com": '{"token":"odd"}',
        "even-length.example.com": '{"token":"even"}',
      };
      for (const [host, object] of Object.entries(objects)) {
        assert.equal(Buffer.byteLength(object) % 2, host.startsWith("odd") ? 1 : 0);
        await storeOk(host, object);
      }
      const listed = await helper(["list", "--json"]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stderr, "");
      const hosts = JSON.parse(listed.stdout) as string[];
      for (const host of Object.keys(objects)) assert.ok(hosts.includes(host), listed.stdout);
    });

    const badInputs: Array<[string, string | Uint8Array]> = [
      ["not JSON", "token=SECRET-bad-1"],
      ["an array", '["SECRET-bad-2"]'],
      ["a string", '"SECRET-bad-3"'],
      ["a number", "42"],
      ["null", "null"],
      ["a token that is a number", '{"token":12345}'],
      ["a token that is an object", '{"token":{"value":"SECRET-bad-4"}}'],
      ["empty input", ""],
      ["white space only", " \n\t "],
      ["something after the object", '{"token":"SECRET-bad-5"} {"token":"x"}'],
      [
        "invalid UTF-8",
        Buffer.concat([
          Buffer.from('{"token":"SECRET-bad-6'),
          Buffer.from([0xff, 0xfe]),
          Buffer.from('"}'),
        ]),
      ],
    ];
    for (const [what, input] of badInputs) {
      test(`store refuses ${what}, drains stdin and keeps what was stored`, async () => {
        const host = "bad-input.example.com";
        await storeOk(host, '{"token":"keep-me"}');
        const result = await helper(["store", host], input);
        assertOneLineFailure(result);
        assert.ok(result.stdinDrained, "stdin was not read to EOF");
        assert.doesNotMatch(result.stderr, /SECRET-bad/);
        assert.equal(await getText(host), '{"token":"keep-me"}\n');
      });
    }

    const invalidHosts = [
      "a..b",
      "https://example.com",
      "example.com/path",
      "exa mple.com",
      "example.com:99999",
      "[::1]",
      "",
    ];
    for (const host of invalidHosts) {
      test(`store refuses the invalid host ${JSON.stringify(host)} and stores nothing`, async () => {
        const result = await helper(["store", host], '{"token":"SECRET-host"}');
        assertOneLineFailure(result);
        assert.ok(result.stdinDrained, "stdin was not read to EOF");
        assert.doesNotMatch(result.stderr, /SECRET-host/);
        assertOneLineFailure(await helper(["get", host]));
      });
    }

    const badCalls: Array<[string, string[]]> = [
      ["a missing hostname", ["get"]],
      ["an extra argument", ["get", "example.com", "extra"]],
      ["no verb at all", []],
    ];
    for (const [what, args] of badCalls) {
      test(`${what} is refused with one line on stderr and nothing on stdout`, async () => {
        assertOneLineFailure(await helper(args));
      });
    }

    test(`${parallel} parallel stores and gets for different hosts and for one host stay whole`, async () => {
      const hosts = Array.from({ length: parallel }, (_, i) => `parallel-${i}.example.com`);
      const objects = hosts.map((host, i) => JSON.stringify({ token: `token-${i}`, host }));
      const stores = hosts.map((host, i) => helper(["store", host], objects[i]));
      const sharedStores = objects.map((object) => helper(["store", "shared.example.com"], object));
      const sharedGets = hosts.map(() => helper(["get", "shared.example.com"]));
      const results = await Promise.all([...stores, ...sharedStores]);
      for (const result of results) assertSilentSuccess(result);
      for (const result of await Promise.all(sharedGets)) {
        assert.equal(result.code, 0, result.stderr);
        assert.ok(
          result.stdout === "{}\n" || objects.includes(result.stdout.trim()),
          result.stdout,
        );
      }
      const read = await Promise.all(hosts.map((host) => getText(host)));
      assert.deepEqual(
        read,
        objects.map((object) => `${object}\n`),
      );
      assert.ok(objects.includes((await getText("shared.example.com")).trim()));
    });
  });
}

/** Exit 0 with nothing at all on stdout or stderr, as store and forget must. */
export function assertSilentSuccess(result: HelperResult): void {
  // The whole run in one diff: a bare "1 !== 0" from a rare failure says nothing of it.
  assert.deepEqual(
    { code: result.code, stdout: result.stdout, stderr: result.stderr },
    { code: 0, stdout: "", stderr: "" },
  );
}

/** A non-zero exit with exactly one line on stderr and nothing on stdout. */
export function assertOneLineFailure(result: HelperResult): void {
  assert.notEqual(result.code, 0);
  assert.equal(result.stdout, "");
  assert.match(
    result.stderr,
    /^[^\n]+\n$/,
    `expected one line on stderr, got ${JSON.stringify(result.stderr)}`,
  );
}
