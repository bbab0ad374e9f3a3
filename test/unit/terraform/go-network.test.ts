import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { certificateSources, proxyFor } from "../../../src/terraform/go-network.ts";

const PROXY = "http://proxy.corp:3128/";

describe("proxyFor: the proxy Go's net/http picks for an HTTPS request", () => {
  // [url, environment, expected proxy or undefined for direct]
  const cases: [string, Record<string, string>, string | undefined][] = [
    ["https://app.example.com/", {}, undefined],
    ["https://app.example.com/", { HTTPS_PROXY: PROXY }, PROXY],
    ["https://app.example.com/", { https_proxy: PROXY }, PROXY],
    ["https://app.example.com/", { HTTPS_PROXY: PROXY, https_proxy: "http://other:1/" }, PROXY],
    ["https://app.example.com/", { HTTPS_PROXY: "", https_proxy: PROXY }, PROXY],
    // HTTP_PROXY is for http: requests only.
    ["https://app.example.com/", { HTTP_PROXY: PROXY, http_proxy: PROXY }, undefined],
    // Without a scheme, http:// is assumed.
    ["https://app.example.com/", { HTTPS_PROXY: "proxy.corp:3128" }, PROXY],
    ["https://app.example.com/", { HTTPS_PROXY: "https://proxy.corp/" }, "https://proxy.corp/"],
    // localhost and loopback addresses never go through a proxy.
    ["https://localhost:8443/", { HTTPS_PROXY: PROXY }, undefined],
    ["https://127.0.0.1:8443/", { HTTPS_PROXY: PROXY }, undefined],
    ["https://127.9.9.9/", { HTTPS_PROXY: PROXY }, undefined],
    ["https://[::1]/", { HTTPS_PROXY: PROXY }, undefined],
    ["https://10.0.0.1/", { HTTPS_PROXY: PROXY }, PROXY],
    // NO_PROXY: a domain covers itself and its subdomains.
    ["https://example.com/", { HTTPS_PROXY: PROXY, NO_PROXY: "example.com" }, undefined],
    ["https://app.example.com/", { HTTPS_PROXY: PROXY, NO_PROXY: "example.com" }, undefined],
    ["https://notexample.com/", { HTTPS_PROXY: PROXY, NO_PROXY: "example.com" }, PROXY],
    // A leading dot or "*." covers only subdomains.
    ["https://example.com/", { HTTPS_PROXY: PROXY, NO_PROXY: ".example.com" }, PROXY],
    ["https://app.example.com/", { HTTPS_PROXY: PROXY, NO_PROXY: ".example.com" }, undefined],
    ["https://example.com/", { HTTPS_PROXY: PROXY, NO_PROXY: "*.example.com" }, PROXY],
    ["https://app.example.com/", { HTTPS_PROXY: PROXY, NO_PROXY: "*.example.com" }, undefined],
    // Lists, spaces, case, no_proxy, "*".
    [
      "https://app.example.com/",
      { HTTPS_PROXY: PROXY, NO_PROXY: "a.org, APP.Example.com" },
      undefined,
    ],
    ["https://app.example.com/", { HTTPS_PROXY: PROXY, no_proxy: "example.com" }, undefined],
    ["https://app.example.com/", { HTTPS_PROXY: PROXY, NO_PROXY: "*" }, undefined],
    // A port in an entry must match the request's (443 when the URL has none).
    [
      "https://app.example.com/",
      { HTTPS_PROXY: PROXY, NO_PROXY: "app.example.com:443" },
      undefined,
    ],
    ["https://app.example.com/", { HTTPS_PROXY: PROXY, NO_PROXY: "app.example.com:8443" }, PROXY],
    [
      "https://app.example.com:8443/",
      { HTTPS_PROXY: PROXY, NO_PROXY: "app.example.com:8443" },
      undefined,
    ],
    // IP addresses and CIDR ranges match IP hosts only.
    ["https://10.1.2.3/", { HTTPS_PROXY: PROXY, NO_PROXY: "10.0.0.0/8" }, undefined],
    ["https://11.1.2.3/", { HTTPS_PROXY: PROXY, NO_PROXY: "10.0.0.0/8" }, PROXY],
    ["https://10.1.2.3/", { HTTPS_PROXY: PROXY, NO_PROXY: "10.1.2.3" }, undefined],
    ["https://10.1.2.3/", { HTTPS_PROXY: PROXY, NO_PROXY: "10.1.2.3:8443" }, PROXY],
    ["https://[fd00::5]/", { HTTPS_PROXY: PROXY, NO_PROXY: "fd00::/8" }, undefined],
    ["https://[fd00::5]/", { HTTPS_PROXY: PROXY, NO_PROXY: "fd00::5" }, undefined],
    ["https://[fd00::5]/", { HTTPS_PROXY: PROXY, NO_PROXY: "[fd00::5]:443" }, undefined],
    // Internationalized names compare in punycode.
    ["https://xn--mnchen-3ya.de/", { HTTPS_PROXY: PROXY, NO_PROXY: "münchen.de" }, undefined],
  ];
  for (const [url, env, expected] of cases)
    test(`${url} with ${JSON.stringify(env)}: ${expected ?? "direct"}`, () => {
      assert.equal(proxyFor(new URL(url), env)?.href, expected);
    });
});

describe("certificateSources: where Go reads its trusted roots", () => {
  test("Linux: the distributions' bundle files and directories", () => {
    const sources = certificateSources({}, "linux");
    assert.ok(sources !== undefined);
    assert.equal(sources.files[0], "/etc/ssl/certs/ca-certificates.crt");
    assert.ok(sources.files.includes("/etc/pki/tls/certs/ca-bundle.crt"));
    assert.deepEqual(sources.dirs, ["/etc/ssl/certs", "/etc/pki/tls/certs"]);
  });
  test("SSL_CERT_FILE replaces the files, SSL_CERT_DIR (a colon list) the directories", () => {
    assert.deepEqual(
      certificateSources({ SSL_CERT_FILE: "/ca.pem", SSL_CERT_DIR: "/a:/b" }, "linux"),
      {
        files: ["/ca.pem"],
        dirs: ["/a", "/b"],
      },
    );
    assert.deepEqual(certificateSources({ SSL_CERT_DIR: "/a" }, "freebsd")?.dirs, ["/a"]);
  });
  test("empty values count as unset", () => {
    assert.deepEqual(
      certificateSources({ SSL_CERT_FILE: "", SSL_CERT_DIR: "" }, "linux"),
      certificateSources({}, "linux"),
    );
  });
  test("macOS and Windows: the system's verifier, which ignores both", () => {
    for (const platform of ["darwin", "win32"] as const)
      assert.equal(certificateSources({ SSL_CERT_FILE: "/ca.pem" }, platform), undefined);
  });
});
