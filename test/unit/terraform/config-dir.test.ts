import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CliError } from "../../../src/errors.ts";
import { configDirFileNames, readConfigFile } from "../../../src/terraform/config-dir.ts";

describe("config directory files", () => {
  test("*.tfrc and *.tfrc.json are merged, in name order; nothing else", () => {
    assert.deepEqual(
      configDirFileNames([
        "z.tfrc",
        "credentials.tfrc.json",
        "plugins",
        "a.tfrc",
        "notes.tfrc.bak",
        "x.json",
      ]),
      ["a.tfrc", "credentials.tfrc.json", "z.tfrc"],
    );
  });

  test("an HCL file: its credentials_helper names and credentials hosts", () => {
    const text =
      'credentials_helper "other" {}\ncredentials "app.terraform.io" {\n  token = "x"\n}\n';
    assert.deepEqual(readConfigFile("/h/.terraform.d/extra.tfrc", text), {
      helpers: ["other"],
      credentialsHosts: ["app.terraform.io"],
    });
  });

  test("a JSON file: the same, from credentials_helper and credentials objects", () => {
    const text = JSON.stringify({
      credentials_helper: { other: { args: [] } },
      credentials: { "app.terraform.io": { token: "x" } },
    });
    assert.deepEqual(readConfigFile("/h/.terraform.d/extra.tfrc.json", text), {
      helpers: ["other"],
      credentialsHosts: ["app.terraform.io"],
    });
  });

  test("a JSON file that is not JSON names the file", () => {
    assert.throws(
      () => readConfigFile("/h/.terraform.d/bad.tfrc.json", "{"),
      new CliError("/h/.terraform.d/bad.tfrc.json is not valid JSON"),
    );
  });
});
