import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import type { Hostname } from "../../../src/protocol/hostname.ts";
import {
  execEnvironment,
  hostOfTokenVariable,
  tokenVariableName,
} from "../../../src/terraform/token-variables.ts";

const host = (text: string): Hostname => normalizeHostname(text);

describe("tokenVariableName", () => {
  const cases: readonly (readonly [string, string])[] = [
    ["app.terraform.io", "TF_TOKEN_app_terraform_io"],
    ["my-registry.example.com", "TF_TOKEN_my__registry_example_com"],
    ["a-b-c.x-y.example", "TF_TOKEN_a__b__c_x__y_example"],
    ["REG.Example.COM", "TF_TOKEN_reg_example_com"],
    ["münchen.example", "TF_TOKEN_xn____mnchen__3ya_example"],
    ["café.fr", "TF_TOKEN_xn____caf__dma_fr"],
    // A deviation character: the name keeps it in punycode, which Terraform's transitional
    // ForDisplay decodes and does not map again, so the name still comes back to this host.
    ["straße.de", "TF_TOKEN_xn____strae__oqa_de"],
    // A port keeps its colon: Terraform decodes only underscores (see tokenVariableName).
    ["localhost:8443", "TF_TOKEN_localhost:8443"],
    ["127.0.0.1:8443", "TF_TOKEN_127_0_0_1:8443"],
    ["my-host.example:8443", "TF_TOKEN_my__host_example:8443"],
    ["localhost:443", "TF_TOKEN_localhost"],
  ];
  for (const [input, expected] of cases) {
    test(`${input} → ${expected}`, () => {
      assert.equal(tokenVariableName(host(input)), expected);
    });
  }

  test("decoding the name as Terraform does gives the host back", () => {
    for (const [input, name] of cases) assert.equal(hostOfTokenVariable(name), host(input));
  });
});

describe("hostOfTokenVariable", () => {
  const cases: readonly (readonly [string, string | undefined])[] = [
    // The spellings Terraform's own doc comment lists for café.fr.
    ["TF_TOKEN_xn____caf__dma_fr", "xn--caf-dma.fr"],
    ["TF_TOKEN_xn--caf-dma_fr", "xn--caf-dma.fr"],
    ["TF_TOKEN_xn--caf-dma.fr", "xn--caf-dma.fr"],
    ["TF_TOKEN_café_fr", "xn--caf-dma.fr"],
    ["TF_TOKEN_APP_Terraform_IO", "app.terraform.io"],
    ["TF_TOKEN_localhost:8443", "localhost:8443"],
    ["TF_TOKEN_localhost_8443", "localhost.8443"],
    // collectCredentialsFromEnv: svchost ForDisplay (transitional IDNA), then ForComparison.
    // Rows marked e2e are checked against terraform 1.11.4 (test/e2e/terraform-svchost.test.ts).
    ["TF_TOKEN_straße_de", "strasse.de"], // e2e: not xn--strae-oqa.de
    ["TF_TOKEN_STRASSE_de", "strasse.de"],
    ["TF_TOKEN_xn____strae__oqa_de", "xn--strae-oqa.de"], // punycode keeps its ß
    ["TF_TOKEN_ς_com", "xn--4xa.com"], // final sigma read as σ
    ["TF_TOKEN_xn--mnchen-3ya_de", "xn--mnchen-3ya.de"], // punycode is read here
    ["TF_TOKEN_example_com:+443", "example.com"], // e2e
    ["TF_TOKEN_example_com:+8443", "example.com:8443"],
    ["TF_TOKEN_xn--a_com", undefined], // bad punycode: ForDisplay keeps it, ForComparison refuses
    ["TF_TOKEN_", undefined],
    ["TF_TOKEN_bad!host", undefined],
    ["TFE_TOKEN", undefined],
    ["tf_token_app_terraform_io", undefined],
    ["PATH", undefined],
  ];
  for (const [name, expected] of cases) {
    test(`${name} → ${expected ?? "not a token variable"}`, () => {
      assert.equal(hostOfTokenVariable(name), expected);
    });
  }
});

describe("execEnvironment", () => {
  const tokens = new Map<Hostname, string>([
    [host("app.terraform.io"), "t-app"],
    [host("my-registry.example.com"), "t-hyphen"],
    [host("localhost:8443"), "t-port"],
  ]);

  test("keeps the base environment and adds one variable per host", () => {
    const env = execEnvironment({ PATH: "/bin", UNSET: undefined }, tokens);
    assert.deepEqual(env, {
      PATH: "/bin",
      TF_TOKEN_app_terraform_io: "t-app",
      TF_TOKEN_my__registry_example_com: "t-hyphen",
      "TF_TOKEN_localhost:8443": "t-port",
    });
  });

  test("a caller's variable for a host, in any spelling, wins and is kept as it is", () => {
    const env = execEnvironment(
      { "TF_TOKEN_APP.terraform.io": "mine", "TF_TOKEN_my-registry_example_com": "mine too" },
      tokens,
    );
    assert.deepEqual(env, {
      "TF_TOKEN_APP.terraform.io": "mine",
      "TF_TOKEN_my-registry_example_com": "mine too",
      "TF_TOKEN_localhost:8443": "t-port",
    });
  });

  test("a caller's variable that names the host only through transitional IDNA wins too", () => {
    // Terraform reads TF_TOKEN_straße_de as strasse.de: a second variable for that host
    // would leave Terraform to pick by the order of the environment.
    const env = execEnvironment(
      { TF_TOKEN_straße_de: "mine" },
      new Map([[host("strasse.de"), "helper's"]]),
    );
    assert.deepEqual(env, { TF_TOKEN_straße_de: "mine" });
  });

  test("--tfe sets TFE_TOKEN and TFE_HOSTNAME, even for a host with a port", () => {
    const env = execEnvironment({}, tokens, host("localhost:8443"));
    assert.equal(env.TFE_TOKEN, "t-port");
    assert.equal(env.TFE_HOSTNAME, "localhost:8443");
  });

  test("a caller's TFE_TOKEN wins, and TFE_HOSTNAME is then left alone", () => {
    const env = execEnvironment(
      { TFE_TOKEN: "mine", TFE_HOSTNAME: "other.example" },
      tokens,
      host("app.terraform.io"),
    );
    assert.equal(env.TFE_TOKEN, "mine");
    assert.equal(env.TFE_HOSTNAME, "other.example");
  });

  test("does not change the base it was given", () => {
    const base = { PATH: "/bin" };
    execEnvironment(base, tokens, host("app.terraform.io"));
    assert.deepEqual(base, { PATH: "/bin" });
  });
});
