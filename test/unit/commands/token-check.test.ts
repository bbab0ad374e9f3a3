import { deadlineIn } from "../../../src/system/deadline.ts";
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { run } from "../../../src/cli/run.ts";
import { createFakeIo } from "../../support/fake-io.ts";
import { createTempHome } from "./temp-home.ts";
import { checkStoredTokens } from "../../../src/commands/token-check.ts";
import type { TokenCheckContext } from "../../../src/commands/token-check.ts";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import type { HttpsAnswer, HttpsGet, HttpsRequest } from "../../../src/system/https-get.ts";
import { CliError } from "../../../src/errors.ts";
import { createMemoryStore } from "../../support/memory-store.ts";

type Reply = HttpsAnswer | Error | "never";

/** A network of fake hosts: each URL's reply, and every request made, in order. */
function fakeNetwork(replies: Record<string, Reply>) {
  const requests: HttpsRequest[] = [];
  const get: HttpsGet = async (request) => {
    requests.push(request);
    const reply = replies[request.url.href] ?? {
      status: 404,
      contentType: undefined,
      location: undefined,
      body: "",
    };
    if (reply === "never")
      return new Promise((_resolve, reject) => {
        request.signal.addEventListener("abort", () => reject(request.signal.reason as Error));
      });
    if (reply instanceof Error) throw reply;
    return reply;
  };
  return { get, requests };
}

const discovery = (services: Record<string, string>): HttpsAnswer => ({
  status: 200,
  contentType: "application/json",
  location: undefined,
  body: JSON.stringify(services),
});
const status = (code: number, body = ""): HttpsAnswer => ({
  status: code,
  contentType: undefined,
  location: undefined,
  body,
});
const redirect = (location: string): HttpsAnswer => ({
  status: 302,
  contentType: undefined,
  location,
  body: "",
});
const ACCOUNT = status(200, JSON.stringify({ data: { attributes: { username: "alice" } } }));
const well = (host: string) => `https://${host}/.well-known/terraform.json`;

const CONTEXT: TokenCheckContext = {
  env: {},
  platform: "darwin",
  shadows: new Map(),
  storeName: "the keychain",
  inProfile: (words) => words.join(" "),
};

function check(
  stored: Record<string, string>,
  replies: Record<string, Reply>,
  { offline = false, timeoutSeconds = 5, context = CONTEXT } = {},
) {
  const network = fakeNetwork(replies);
  const store = createMemoryStore(
    Object.fromEntries(
      Object.entries(stored).map(([host, token]) => [host, JSON.stringify({ token })]),
    ),
  );
  const found = checkStoredTokens(Promise.resolve(store), context, {
    offline,
    deadline: deadlineIn(timeoutSeconds),
    get: network.get,
  });
  return { found, requests: network.requests };
}

describe("checkStoredTokens", () => {
  test("accepted: the account's name; the token goes only to account/details on its host", async () => {
    const { found, requests } = check(
      { "app.example.com": "tok-1" },
      {
        [well("app.example.com")]: discovery({ "tfe.v2": "/api/v2/" }),
        "https://app.example.com/api/v2/account/details": ACCOUNT,
      },
    );
    assert.deepEqual(await found, [
      { status: "ok", title: "token for app.example.com: accepted, account alice", details: [] },
    ]);
    assert.deepEqual(
      requests.map((request) => [request.url.href, request.authorization]),
      [
        [well("app.example.com"), undefined],
        ["https://app.example.com/api/v2/account/details", "Bearer tok-1"],
      ],
    );
  });

  test("rejected (401, 403): a failure whose fix is a login in the profile", async () => {
    for (const code of [401, 403]) {
      const { found } = check(
        { "app.example.com": "tok-1" },
        {
          [well("app.example.com")]: discovery({ "tfe.v2": "/api/v2/" }),
          "https://app.example.com/api/v2/account/details": status(code),
        },
        {
          context: {
            ...CONTEXT,
            inProfile: (words) =>
              `TF_CLI_CONFIG_FILE=/home/me/.terraformrc-work ${words.join(" ")}`,
          },
        },
      );
      assert.deepEqual(await found, [
        {
          status: "fail",
          title: `token for app.example.com: rejected by app.example.com (HTTP ${code})`,
          details: [],
          fix: 'run "TF_CLI_CONFIG_FILE=/home/me/.terraformrc-work terraform login app.example.com" (or "TF_CLI_CONFIG_FILE=/home/me/.terraformrc-work tofu login app.example.com") to store a new one',
        },
      ]);
    }
  });

  test("no tfe.v2 (a registry or mirror), or no services at all: not checked, and no token sent", async () => {
    const { found, requests } = check(
      { "mirror.example.com": "tok-1", "bare.example.com": "tok-2" },
      { [well("mirror.example.com")]: discovery({ "modules.v1": "/v1/modules/" }) },
    );
    const why =
      "not checked: the host offers no tfe.v2 API to check it with (a module or provider registry)";
    assert.deepEqual(await found, [
      { status: "ok", title: `token for bare.example.com: ${why}`, details: [] },
      { status: "ok", title: `token for mirror.example.com: ${why}`, details: [] },
    ]);
    assert.ok(requests.every((request) => request.authorization === undefined));
  });

  test("tfe.v2 on another host, or reached by a redirect to one: not checked, no request there", async () => {
    const { found, requests } = check(
      { "a.example.com": "tok-a", "b.example.com": "tok-b" },
      {
        [well("a.example.com")]: discovery({ "tfe.v2": "https://api.example.net/api/v2/" }),
        [well("b.example.com")]: redirect("https://c.example.org/.well-known/terraform.json"),
        [well("c.example.org")]: discovery({ "tfe.v2": "/api/v2/" }),
      },
    );
    assert.deepEqual(
      (await found).map(({ status, title }) => [status, title]),
      [
        [
          "warn",
          "token for a.example.com: not checked: its tfe.v2 API is on another host, api.example.net, and the token goes only to a.example.com",
        ],
        [
          "warn",
          "token for b.example.com: not checked: its tfe.v2 API is on another host, c.example.org, and the token goes only to b.example.com",
        ],
      ],
    );
    assert.deepEqual(
      requests.flatMap((request) => request.authorization ?? []),
      [],
    );
  });

  test("redirects are followed as Terraform does: at most 3, relative URLs resolve after them", async () => {
    const hops = {
      [well("app.example.com")]: redirect("/one.json"),
      "https://app.example.com/one.json": redirect("/dir/two.json"),
      "https://app.example.com/dir/two.json": redirect("three.json"),
      "https://app.example.com/dir/three.json": discovery({ "tfe.v2": "v2" }),
      "https://app.example.com/dir/v2/account/details": ACCOUNT,
    };
    assert.equal(
      (await check({ "app.example.com": "t" }, hops).found)[0]?.title,
      "token for app.example.com: accepted, account alice",
    );
    const loop = { [well("app.example.com")]: redirect(well("app.example.com")) };
    const { found, requests } = check({ "app.example.com": "t" }, loop);
    assert.equal(
      (await found)[0]?.title,
      "token for app.example.com: not checked: discovery failed: too many redirects",
    );
    assert.equal(requests.length, 4);
  });

  test("discovery that fails (DNS, TLS, a status) is named, is a warning, and sends no token", async () => {
    const { found, requests } = check(
      { "dns.example.com": "t1", "tls.example.com": "t2", "down.example.com": "t3" },
      {
        [well("dns.example.com")]: new Error("DNS: dns.example.com not found (ENOTFOUND)"),
        [well("tls.example.com")]: new Error("TLS: the certificate has expired (CERT_HAS_EXPIRED)"),
        [well("down.example.com")]: status(503),
      },
    );
    assert.deepEqual(
      (await found).map(({ status, title }) => [status, title]),
      [
        [
          "warn",
          "token for dns.example.com: not checked: discovery failed: DNS: dns.example.com not found (ENOTFOUND)",
        ],
        ["warn", "token for down.example.com: not checked: discovery failed: HTTP 503"],
        [
          "warn",
          "token for tls.example.com: not checked: discovery failed: TLS: the certificate has expired (CERT_HAS_EXPIRED)",
        ],
      ],
    );
    assert.ok(requests.every((request) => request.authorization === undefined));
  });

  test("all hosts at once, within the deadline for the whole check", async () => {
    const started = performance.now();
    const { found } = check(
      {
        "slow1.example.com": "t1",
        "slow2.example.com": "t2",
        "late.example.com": "t3",
        "fast.example.com": "t4",
      },
      {
        [well("slow1.example.com")]: "never",
        [well("slow2.example.com")]: "never",
        [well("late.example.com")]: discovery({ "tfe.v2": "/api/v2/" }),
        "https://late.example.com/api/v2/account/details": "never",
        [well("fast.example.com")]: discovery({ "tfe.v2": "/api/v2/" }),
        "https://fast.example.com/api/v2/account/details": ACCOUNT,
      },
      { timeoutSeconds: 3 },
    );
    assert.deepEqual(
      (await found).map(({ status, title }) => [status, title]),
      [
        ["ok", "token for fast.example.com: accepted, account alice"],
        [
          "warn",
          "token for late.example.com: not checked: account/details failed: no answer within 3 s",
        ],
        [
          "warn",
          "token for slow1.example.com: not checked: discovery failed: no answer within 3 s",
        ],
        [
          "warn",
          "token for slow2.example.com: not checked: discovery failed: no answer within 3 s",
        ],
      ],
    );
    // Serially, three hosts that never answer would take three deadlines; at once, one. The
    // deadline is long enough that the one answer comes within it on a loaded machine too.
    assert.ok(performance.now() - started < 2 * 3000, `${performance.now() - started} ms`);
  });

  test("--offline: one line, and not a single request", async () => {
    const { found, requests } = check({ "app.example.com": "t" }, {}, { offline: true });
    assert.deepEqual(await found, [
      { status: "ok", title: "stored tokens not checked: --offline", details: [] },
    ]);
    assert.deepEqual(requests, []);
  });

  test("a shadowed host: said so, and which token was checked", async () => {
    const host = normalizeHostname("app.example.com");
    const { found } = check(
      { "app.example.com": "t" },
      {
        [well("app.example.com")]: discovery({ "tfe.v2": "/api/v2/" }),
        "https://app.example.com/api/v2/account/details": ACCOUNT,
      },
      {
        context: {
          ...CONTEXT,
          shadows: new Map([[host, "the variable TF_TOKEN_app_example_com"]]),
        },
      },
    );
    assert.deepEqual((await found)[0]?.details, [
      "Terraform uses the variable TF_TOKEN_app_example_com for app.example.com, not the helper: the token checked is the one in the keychain",
    ]);
  });

  test("an object without a token, or a store that fails to read one: not checked", async () => {
    const store = createMemoryStore({
      "a.example.com": '{"token":"t"}',
      "b.example.com": '{"org":"x"}',
    });
    store.failNext(new CliError("the keychain is locked"), "get");
    const network = fakeNetwork({});
    const found = await checkStoredTokens(Promise.resolve(store), CONTEXT, {
      offline: false,
      deadline: deadlineIn(5),
      get: network.get,
    });
    assert.deepEqual(
      found.map(({ status, title }) => [status, title]).sort(),
      [
        ["ok", "token for b.example.com: not checked: the stored object has no token"],
        ["warn", "token for a.example.com: not checked: reading it failed: the keychain is locked"],
      ].sort(),
    );
  });

  test("no store, a store that failed to open, or none stored: nothing to say", async () => {
    const { get } = fakeNetwork({});
    const options = { offline: false, deadline: deadlineIn(5), get };
    assert.deepEqual(await checkStoredTokens(undefined, CONTEXT, options), []);
    assert.deepEqual(
      await checkStoredTokens(Promise.reject(new Error("locked")), CONTEXT, options),
      [],
    );
    assert.deepEqual(
      await checkStoredTokens(Promise.resolve(createMemoryStore()), CONTEXT, options),
      [],
    );
  });

  test("the proxy and roots are chosen as Go would, per request", async () => {
    const { found, requests } = check(
      { "app.example.com": "t", "localhost:8443": "u" },
      {},
      { context: { ...CONTEXT, env: { HTTPS_PROXY: "http://proxy:3128" }, platform: "darwin" } },
    );
    await found;
    assert.deepEqual(
      requests.map((request) => [request.url.host, request.proxy?.href, request.trusted]),
      [
        ["app.example.com", "http://proxy:3128/", undefined],
        ["localhost:8443", undefined, undefined],
      ],
    );
  });
});

describe(
  "doctor runs the token check",
  { skip: process.platform === "win32" && "runs a shell script" },
  () => {
    const SECRET = "SECRET-tttt.atlasv1.5555";
    async function doctor(
      t: TestContext,
      args: readonly string[],
      env: Record<string, string> = {},
    ) {
      const box = createTempHome(t, "tfck-token-doctor-");
      box.write(
        box.inHome(".terraform.d", "plugins", "terraform-credentials-keychain"),
        "#!/bin/sh\necho 0.0.0-test\n",
        0o755,
      );
      box.write(box.inHome(".terraformrc"), 'credentials_helper "keychain" {}\n', 0o600);
      const store = createMemoryStore({ "app.example.com": JSON.stringify({ token: SECRET }) });
      const network = fakeNetwork({
        [well("app.example.com")]: discovery({ "tfe.v2": "/api/v2/" }),
        "https://app.example.com/api/v2/account/details": status(401),
      });
      let opened = 0;
      const io = createFakeIo({
        env,
        platform: "darwin",
        arch: "arm64",
        homedir: box.home,
        execPath: "/opt/tfck",
        isSea: true,
      });
      const code = await run(args, io, {
        version: "0.0.0-test",
        protectSecrets: async () => {},
        openStore: () => {
          opened += 1;
          return store;
        },
        httpsGet: network.get,
      });
      return {
        code,
        stdout: io.stdout.text,
        stderr: io.stderr.text,
        requests: network.requests,
        opened,
        box,
      };
    }

    test("a rejected token: the last line, a FAIL with the login fix; exit 1; the store opened once", async (t) => {
      const profile = "/home/me/.terraformrc-work";
      const result = await doctor(t, ["doctor"], { TF_CLI_CONFIG_FILE: profile });
      const lines = result.stdout.trimEnd().split("\n");
      assert.deepEqual(lines.slice(-2), [
        "FAIL  token for app.example.com: rejected by app.example.com (HTTP 401)",
        `      fix: run "TF_CLI_CONFIG_FILE=${profile} terraform login app.example.com" (or "TF_CLI_CONFIG_FILE=${profile} tofu login app.example.com") to store a new one`,
      ]);
      assert.equal(result.code, 1);
      assert.equal(result.opened, 1);
      assert.ok(!`${result.stdout}${result.stderr}`.includes(SECRET));
    });

    test("list never uses the network", async () => {
      const network = fakeNetwork({});
      const io = createFakeIo({ env: {}, platform: "darwin" });
      const store = createMemoryStore({ "app.example.com": JSON.stringify({ token: SECRET }) });
      const code = await run(["list"], io, {
        version: "0.0.0-test",
        protectSecrets: async () => {},
        openStore: () => store,
        httpsGet: network.get,
      });
      assert.deepEqual([code, io.stdout.text, network.requests], [0, "app.example.com\n", []]);
    });

    test("doctor --offline (either side of the command): no request", async (t) => {
      for (const args of [
        ["doctor", "--offline"],
        ["--offline", "doctor"],
      ]) {
        const result = await doctor(t, args);
        assert.ok(
          result.stdout.endsWith("ok    stored tokens not checked: --offline\n"),
          result.stdout,
        );
        assert.deepEqual(result.requests, []);
      }
    });
  },
);
