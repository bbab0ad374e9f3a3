import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import type { HttpsAnswer } from "../../../src/system/https-get.ts";
import {
  accountDetailsTarget,
  discoveryUrl,
  readAccountDetails,
  readDiscoveryAnswer,
} from "../../../src/terraform/service-discovery.ts";

const answer = (status: number, fields: Partial<HttpsAnswer> = {}): HttpsAnswer => ({
  status,
  contentType: undefined,
  location: undefined,
  body: "",
  ...fields,
});
const json = (body: unknown, contentType = "application/json") =>
  answer(200, { contentType, body: JSON.stringify(body) });
const AT = new URL("https://app.example.com/.well-known/terraform.json");

describe("discoveryUrl", () => {
  for (const [host, url] of [
    ["app.example.com", "https://app.example.com/.well-known/terraform.json"],
    ["localhost:8443", "https://localhost:8443/.well-known/terraform.json"],
    ["münchen.example", "https://xn--mnchen-3ya.example/.well-known/terraform.json"],
  ] as const)
    test(`${host}: ${url}`, () => {
      assert.equal(discoveryUrl(normalizeHostname(host)).href, url);
    });
});

describe("readDiscoveryAnswer", () => {
  const cases: [string, HttpsAnswer, unknown][] = [
    [
      "a JSON object: its services",
      json({ "tfe.v2": "/api/v2/" }),
      { kind: "services", services: { "tfe.v2": "/api/v2/" } },
    ],
    [
      "a media type with parameters counts",
      json({}, "Application/JSON; charset=utf-8"),
      { kind: "services", services: {} },
    ],
    [
      "404: a host without services, not a failure",
      answer(404),
      { kind: "services", services: {} },
    ],
    ["another status fails", answer(500), { kind: "failed", reason: "HTTP 500" }],
    [
      "401 fails too: discovery carries no token",
      answer(401),
      { kind: "failed", reason: "HTTP 401" },
    ],
    [
      "another media type fails",
      json({}, "text/html"),
      {
        kind: "failed",
        reason: 'the document\'s Content-Type is "text/html", not application/json',
      },
    ],
    [
      "a media type with C1 controls is quoted: none reaches the terminal raw",
      json({}, "text/html\u009b2J\u0085"),
      {
        kind: "failed",
        reason: 'the document\'s Content-Type is "text/html\\u009b2J\\u0085", not application/json',
      },
    ],
    [
      "no media type fails",
      answer(200, { body: "{}" }),
      { kind: "failed", reason: 'the document\'s Content-Type is "", not application/json' },
    ],
    [
      "a JSON array fails",
      json([]),
      { kind: "failed", reason: "the document is not a JSON object" },
    ],
    [
      "JSON null fails",
      json(null),
      { kind: "failed", reason: "the document is not a JSON object" },
    ],
    [
      "text that is no JSON fails",
      answer(200, { contentType: "application/json", body: "{" }),
      { kind: "failed", reason: "the document is not JSON" },
    ],
    [
      "a redirect without Location fails",
      answer(302),
      { kind: "failed", reason: "HTTP 302 without a Location" },
    ],
    [
      "a redirect to plain HTTP fails",
      answer(301, { location: "http://app.example.com/x.json" }),
      { kind: "failed", reason: "redirected to http: (only HTTPS is used)" },
    ],
  ];
  for (const [name, given, expected] of cases)
    test(name, () => {
      assert.deepEqual(readDiscoveryAnswer(AT, given), expected);
    });

  test("a relative redirect resolves against the URL that answered", () => {
    for (const status of [301, 302, 303, 307, 308]) {
      const step = readDiscoveryAnswer(AT, answer(status, { location: "/v2/terraform.json" }));
      assert.deepEqual(step, {
        kind: "redirect",
        to: new URL("https://app.example.com/v2/terraform.json"),
      });
    }
  });
});

describe("accountDetailsTarget", () => {
  const host = normalizeHostname("app.example.com");
  const target = (value: unknown, at = AT, on = host) =>
    accountDetailsTarget(on, { "tfe.v2": value }, at);

  test("a relative tfe.v2 URL resolves against the discovery URL, with a trailing slash", () => {
    assert.deepEqual(target("/api/v2"), {
      kind: "url",
      url: new URL("https://app.example.com/api/v2/account/details"),
    });
    assert.deepEqual(target("api/v2/"), {
      kind: "url",
      url: new URL("https://app.example.com/.well-known/api/v2/account/details"),
    });
  });

  test("after a redirect, against the final discovery URL", () => {
    const final = new URL("https://app.example.com/tfe/terraform.json");
    assert.deepEqual(target("v2/", final), {
      kind: "url",
      url: new URL("https://app.example.com/tfe/v2/account/details"),
    });
  });

  test("an absolute URL on the same host, any spelling, without query or fragment", () => {
    assert.deepEqual(target("https://APP.example.com:443/api/v2/?x=1#y"), {
      kind: "url",
      url: new URL("https://app.example.com/api/v2/account/details"),
    });
    const withPort = normalizeHostname("localhost:8443");
    assert.deepEqual(
      target("/api/v2/", new URL("https://localhost:8443/.well-known/terraform.json"), withPort),
      { kind: "url", url: new URL("https://localhost:8443/api/v2/account/details") },
    );
  });

  test("another host, or the same name on another port, is not where the token goes", () => {
    for (const url of [
      "https://api.example.com/api/v2/",
      "https://app.example.com:8443/api/v2/",
      "https://example.com/",
    ])
      assert.deepEqual(target(url), { kind: "other-host", url: new URL(url) });
    const redirected = new URL("https://other.example.com/.well-known/terraform.json");
    assert.equal(target("/api/v2/", redirected).kind, "other-host");
  });

  test("plain HTTP, user information or a broken URL: refused", () => {
    assert.deepEqual(target("http://app.example.com/api/v2/"), {
      kind: "refused",
      reason: "its tfe.v2 URL is not HTTPS",
    });
    assert.deepEqual(target("https://u:p@app.example.com/api/v2/"), {
      kind: "refused",
      reason: "its tfe.v2 URL carries user information",
    });
    assert.deepEqual(target("https://[bad/"), {
      kind: "refused",
      reason: "its tfe.v2 URL is invalid",
    });
  });

  test("no tfe.v2, or not a string: no API to check with", () => {
    assert.deepEqual(accountDetailsTarget(host, { "modules.v1": "/v1/modules/" }, AT), {
      kind: "no-tfe",
    });
    assert.deepEqual(target({ url: "/api/v2/" }), { kind: "no-tfe" });
  });
});

describe("readAccountDetails", () => {
  const user = { data: { type: "users", attributes: { username: "tester" } } };
  test("200: accepted, with the username", () => {
    assert.deepEqual(readAccountDetails(answer(200, { body: JSON.stringify(user) })), {
      kind: "accepted",
      username: "tester",
    });
  });
  test("200 without a username, or not JSON: accepted, no name", () => {
    for (const body of [
      "{}",
      "null",
      "<html>",
      JSON.stringify({ data: { attributes: { username: 7 } } }),
    ])
      assert.deepEqual(readAccountDetails(answer(200, { body })), {
        kind: "accepted",
        username: undefined,
      });
  });
  test("401 and 403: rejected", () => {
    for (const status of [401, 403])
      assert.deepEqual(readAccountDetails(answer(status)), { kind: "rejected", status });
  });
  test("anything else says nothing about the token", () => {
    for (const status of [302, 404, 429, 500])
      assert.deepEqual(readAccountDetails(answer(status)), { kind: "unexpected", status });
  });
});
