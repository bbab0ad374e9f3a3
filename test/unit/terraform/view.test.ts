// terraform/view.ts against Terraform's rules (internal/command/cliconfig: LoadConfig,
// loadConfigDir, Config.Merge, credentialsSource, collectCredentialsFromEnv, ForHost; the HCL 1
// decoder's decodeMap), with files in a map: env and existing files in, the view out. The
// real terraform referees the same rules in test/e2e/terraform-view.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import {
  describeSends,
  helperInEffect,
  hostIn,
  sends,
  shadowsOf,
  terraformViews,
  type Sends,
} from "../../../src/terraform/view.ts";

const HOME = "/home/me";
const RC = `${HOME}/.terraformrc`;
const DIR = `${HOME}/.terraform.d`;
const JSON_FILE = `${DIR}/credentials.tfrc.json`;

function views(files: Record<string, string>, env: Record<string, string> = {}) {
  const dirs = new Set(Object.keys(files).map((file) => file.slice(0, file.lastIndexOf("/"))));
  return terraformViews({
    env,
    platform: "linux",
    arch: "x64",
    homedir: HOME,
    files: {
      exists: (file) => file in files || dirs.has(file),
      list: (dir) =>
        dirs.has(dir)
          ? Object.keys(files)
              .filter((file) => file.slice(0, file.lastIndexOf("/")) === dir)
              .map((file) => file.slice(dir.length + 1))
          : undefined,
      read: (file) => files[file],
    },
  });
}

/** What Terraform sends `host`: its token, "helper", "nothing" or "unknown". */
function sent(files: Record<string, string>, host: string, env: Record<string, string> = {}) {
  const result: Sends = sends(hostIn(views(files, env).Terraform, normalizeHostname(host)));
  return "token" in result ? result.token : result.from;
}

const block = (host: string, body: string) => `credentials "${host}" {\n  ${body}\n}\n`;
const json = (entries: Record<string, unknown>) => JSON.stringify({ credentials: entries });

describe("terraformViews: which token Terraform sends", () => {
  test("no entry: the helper", () => {
    assert.equal(sent({ [RC]: "" }, "a.example.com"), "helper");
  });

  test("a TF_TOKEN_ variable wins over every file, under any spelling of the host", () => {
    const files = { [RC]: block("a.example.com", 'token = "file"') };
    assert.equal(sent(files, "a.example.com", { TF_TOKEN_A_Example_COM: "variable" }), "variable");
    assert.equal(sent(files, "my-host.example", { TF_TOKEN_my__host_example: "v" }), "v");
  });

  test("the config directory is merged after ~/.terraformrc: its token wins (finding 2)", () => {
    const files = {
      [RC]: block("a.example.com", 'token = "old"'),
      [JSON_FILE]: json({ "a.example.com": { token: "new" } }),
    };
    assert.equal(sent(files, "a.example.com"), "new");
  });

  test("drop-ins merge in Go's sorted name order: the last file's object replaces the earlier whole", () => {
    const files = {
      [`${DIR}/b.tfrc`]: block("a.example.com", 'token = "b"'),
      [`${DIR}/a.tfrc`]: block("a.example.com", 'token = "a"'),
      [`${DIR}/c.tfrc.json`]: json({ "x.example.com": { token: "x" } }),
      [`${DIR}/notes.txt`]: block("a.example.com", 'token = "never"'),
    };
    assert.equal(sent(files, "a.example.com"), "b");
    // A tokenless object in a later file replaces the token: nothing is sent.
    assert.equal(
      sent(
        { ...files, [`${DIR}/z.tfrc`]: block("a.example.com", 'organization = "acme"') },
        "a.example.com",
      ),
      "nothing",
    );
  });

  test("within one file, blocks of one label merge attribute by attribute (finding 2)", () => {
    const tokenFirst =
      block("a.example.com", 'token = "t1"') + block("a.example.com", 'organization = "acme"');
    const tokenLast =
      block("a.example.com", 'organization = "acme"') + block("a.example.com", 'token = "t1"');
    assert.equal(sent({ [RC]: tokenFirst }, "a.example.com"), "t1");
    assert.equal(sent({ [RC]: tokenLast }, "a.example.com"), "t1");
    const twice = block("a.example.com", 'token = "t1"') + block("a.example.com", 'token = "t2"');
    assert.equal(sent({ [RC]: twice }, "a.example.com"), "t2");
  });

  test("only `token`, so spelled, is a token: TOKEN and Token send nothing (finding 6)", () => {
    for (const name of ["TOKEN", "Token"]) {
      const view = views({ [RC]: block("a.example.com", `${name} = "x"`) }).Terraform;
      const result = sends(hostIn(view, normalizeHostname("a.example.com")));
      assert.equal(result.from, "nothing", name);
      assert.match(describeSends(result), new RegExp(`it spells "${name}"`));
    }
  });

  test("the block type matches in any case, as HCL 1's decoder does", () => {
    assert.equal(
      sent({ [RC]: 'CREDENTIALS "a.example.com" { token = "t" }\n' }, "a.example.com"),
      "t",
    );
  });

  test("labels are compared as svchost.ForComparison does: case, :443 and punycode", () => {
    assert.equal(sent({ [RC]: block("A.Example.COM:443", 'token = "t"') }, "a.example.com"), "t");
    assert.equal(
      sent({ [RC]: block("münchen.example", 'token = "m"') }, "xn--mnchen-3ya.example"),
      "m",
    );
  });

  test("two spellings of a host with different tokens: Terraform picks at random, the view says unknown", () => {
    const files = {
      [RC]: block("A.example.com", 'token = "one"'),
      [JSON_FILE]: json({ "a.example.com:443": { token: "two" } }),
    };
    assert.equal(sent(files, "a.example.com"), "unknown");
    const same = {
      [RC]: block("A.example.com", 'token = "one"'),
      [JSON_FILE]: json({ "a.example.com": { token: "one" } }),
    };
    assert.equal(sent(same, "a.example.com"), "one");
  });

  test("CRLF line breaks and comments change nothing", () => {
    const text = `# a comment\r\n// another\r\n/* credentials "a.example.com" { token = "no" } */\r\n${block("a.example.com", 'token = "yes"').replaceAll("\n", "\r\n")}`;
    assert.equal(sent({ [RC]: text }, "a.example.com"), "yes");
  });
});

describe("terraformViews: the files in effect", () => {
  for (const variable of ["TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG"]) {
    test(`${variable}: that file alone; the drop-ins and credentials.tfrc.json are unread (finding 5)`, () => {
      const files = {
        [`${HOME}/profile.tfrc`]: block("a.example.com", 'token = "profile"'),
        [RC]: block("b.example.com", 'token = "rc"'),
        [JSON_FILE]: json({ "a.example.com": { token: "json" } }),
      };
      const view = views(files, { [variable]: `${HOME}/profile.tfrc` }).Terraform;
      assert.equal(view.override, variable);
      assert.deepEqual(
        view.files.map(({ file }) => file),
        [`${HOME}/profile.tfrc`],
      );
      assert.deepEqual(view.unread, [RC, JSON_FILE]);
      assert.equal(sends(hostIn(view, normalizeHostname("a.example.com"))).from, "file");
      assert.equal(hostIn(view, normalizeHostname("b.example.com")), undefined);
    });
  }

  test("TF_CLI_CONFIG_FILE wins over TERRAFORM_CONFIG; an empty one counts as unset", () => {
    const both = views(
      {},
      { TF_CLI_CONFIG_FILE: "/a.tfrc", TERRAFORM_CONFIG: "/b.tfrc" },
    ).Terraform;
    assert.equal(both.mainFile, "/a.tfrc");
    const empty = views({}, { TF_CLI_CONFIG_FILE: "", TERRAFORM_CONFIG: "/b.tfrc" }).Terraform;
    assert.equal(empty.mainFile, "/b.tfrc");
  });

  test("the credentials_helper in effect: a drop-in's block is merged after ~/.terraformrc's (finding 4)", () => {
    const files = {
      [RC]: 'credentials_helper "keychain" {}\n',
      [`${DIR}/keychain.tfrc`]:
        'credentials_helper "keychain" {\n  args = ["--service", "other"]\n}\n',
    };
    assert.deepEqual(helperInEffect(views(files), "keychain"), {
      name: "keychain",
      args: ["--service", "other"],
      file: `${DIR}/keychain.tfrc`,
      line: 1,
    });
    const onlyDropIn = { [`${DIR}/keychain.tfrc`]: files[`${DIR}/keychain.tfrc`] };
    assert.equal(helperInEffect(views(onlyDropIn), "keychain")?.file, `${DIR}/keychain.tfrc`);
    // Unless a variable chose the main file: then no drop-in is read.
    assert.equal(
      helperInEffect(views(onlyDropIn, { TF_CLI_CONFIG_FILE: "/cli.tfrc" }), "keychain"),
      undefined,
    );
  });

  test("a JSON drop-in's credentials_helper counts too", () => {
    const files = {
      [`${DIR}/k.tfrc.json`]: JSON.stringify({
        credentials_helper: { keychain: { args: ["--backend", "pass"] } },
      }),
    };
    assert.deepEqual(helperInEffect(views(files), "keychain")?.args, ["--backend", "pass"]);
  });

  test("OpenTofu reads ~/.tofurc when it exists, and $XDG_CONFIG_HOME/opentofu only without ~/.terraform.d", () => {
    const xdg = { XDG_CONFIG_HOME: `${HOME}/.config` };
    const tofu = views({ [`${HOME}/.tofurc`]: "", [RC]: "" }, xdg).OpenTofu;
    assert.equal(tofu.mainFile, `${HOME}/.tofurc`);
    const xdgOnly = views(
      {
        [`${HOME}/.config/opentofu/credentials.tfrc.json`]: json({
          "a.example.com": { token: "x" },
        }),
      },
      xdg,
    );
    assert.equal(xdgOnly.OpenTofu.configDir, `${HOME}/.config/opentofu`);
    assert.equal(sends(hostIn(xdgOnly.OpenTofu, normalizeHostname("a.example.com"))).from, "file");
    assert.equal(hostIn(xdgOnly.Terraform, normalizeHostname("a.example.com")), undefined);
    const withDir = views(
      { [JSON_FILE]: "{}", [`${HOME}/.config/opentofu/credentials.tfrc.json`]: "{}" },
      xdg,
    );
    assert.equal(withDir.OpenTofu.configDir, DIR);
  });

  test("a file Terraform cannot parse is dropped with its diagnostic, and gives nothing", () => {
    const view = views({ [JSON_FILE]: "{not json" }).Terraform;
    assert.match(view.files[0]?.dropped ?? "", /^Error parsing .*credentials\.tfrc\.json: /);
    assert.deepEqual(view.hosts, []);
  });
});

describe("shadowsOf: one account of what shadows the helper", () => {
  test("every host not asked of the helper, once, with every other entry naming it", () => {
    const files = {
      [RC]: block("a.example.com", 'token = "old"') + block("b.example.com", 'organization = "x"'),
      [JSON_FILE]: json({ "a.example.com": { token: "new" } }),
    };
    const shadows = shadowsOf(views(files, { TF_TOKEN_c_example_com: "v" }));
    assert.deepEqual(
      shadows.map(({ host, sends: from, tools, entries }) => [
        host,
        from.from,
        tools,
        entries.length,
      ]),
      [
        ["c.example.com", "variable", ["Terraform", "OpenTofu"], 0],
        ["a.example.com", "file", ["Terraform", "OpenTofu"], 2],
        ["b.example.com", "nothing", ["Terraform", "OpenTofu"], 1],
      ],
    );
    assert.equal(
      describeSends(shadows[1]?.sends ?? { from: "helper" }),
      `the token in ${JSON_FILE}:1`,
    );
  });
});

// Issue 42, causes 1-3: what a file contributes is what cliconfig.go loadConfigFile decodes
// with HCL 1, and nothing at all when it cannot (each case judged by the real terraform in
// test/e2e/terraform-reading.test.ts).
describe("terraformViews: a file contributes what Terraform decodes from it", () => {
  const keychain = (files: Record<string, string>) =>
    helperInEffect(views(files), "keychain")?.args;
  const OURS = 'credentials_helper "keychain" {\n  args = ["--backend", "pass"]\n}\n';
  const TOKEN = block("a.example.com", 'token = "file"');

  // Cause 1: a file Terraform drops gives neither its helper block nor its credentials.
  for (const [name, broken] of [
    ['a quoted boolean (disable_checkpoint = "true")', 'disable_checkpoint = "true"\n'],
    ["a bare word as a value (x = yes)", "x = yes\n"],
    ["a NUL in a comment", "# a \0 b\n"],
    ["U+E123 in a comment", "# a \ue123 b\n"],
    ["a string where a credentials object belongs", 'credentials = { "b.example.com" = "x" }\n'],
  ] as const) {
    test(`${name}: Terraform drops the whole file, helper block and credentials included`, () => {
      const files = { [RC]: broken + OURS + TOKEN };
      assert.equal(keychain(files), undefined);
      assert.equal(sent(files, "a.example.com"), "helper");
      assert.match(views(files).Terraform.files[0]?.dropped ?? "", /^Error parsing /);
    });
  }

  test('"\\/" in a JSON file: HCL\'s JSON scanner has no such escape, so the file is dropped', () => {
    const files = {
      [RC]: OURS,
      [JSON_FILE]: '{"credentials": {"a.example.com": {"token": "a\\/b"}}}',
    };
    assert.equal(sent(files, "a.example.com"), "helper");
    assert.match(views(files).Terraform.files[1]?.dropped ?? "", /illegal char escape$/);
  });

  // Cause 2: JSON syntax is read by HCL's rules.
  test("a JSON list of objects is read as blocks: the helper keychain with its args", () => {
    const files = {
      [`${DIR}/helper.tfrc.json`]: JSON.stringify({
        credentials_helper: [{ keychain: { args: ["--backend", "pass"] } }],
      }),
    };
    assert.deepEqual(keychain(files), ["--backend", "pass"]);
  });

  test("keys match in any case, in JSON and native syntax (strings.EqualFold)", () => {
    const jsonFiles = {
      [`${DIR}/helper.tfrc.json`]: JSON.stringify({
        CREDENTIALS_HELPER: { keychain: { Args: ["--service", "x"] } },
        Credentials: { "a.example.com": { token: "json" } },
      }),
    };
    assert.deepEqual(keychain(jsonFiles), ["--service", "x"]);
    assert.equal(sent(jsonFiles, "a.example.com"), "json");
    const native = {
      [RC]: 'Credentials "a.example.com" { token = "n" }\nCREDENTIALS_HELPER "keychain" { ARGS = ["a"] }\n',
    };
    assert.equal(sent(native, "a.example.com"), "n");
    assert.deepEqual(keychain(native), ["a"]);
  });

  // Cause 3: every HCL form of credentials decodes like a block; two labels or a nested block panic.
  test("credentials = { ... } and an unlabelled credentials { ... } give their hosts' tokens", () => {
    assert.equal(
      sent({ [RC]: 'credentials = { "a.example.com" = { token = "t" } }\n' }, "a.example.com"),
      "t",
    );
    assert.equal(
      sent({ [RC]: 'credentials { "a.example.com" { token = "u" } }\n' }, "a.example.com"),
      "u",
    );
  });

  test("a credentials block with two labels, or a nested block, makes Terraform panic", () => {
    for (const text of [
      'credentials "a.example.com" "b" {}\n',
      'credentials "a.example.com" {\n  x {}\n}\n',
    ]) {
      assert.match(
        views({ [RC]: text }).Terraform.panic ?? "",
        /can't convert \[\]map\[string\]interface \{\} to cty\.Value/,
      );
    }
    // Under a label svchost refuses, credentialsSource skips the object before converting it.
    assert.equal(views({ [RC]: 'credentials "not a host" "b" {}\n' }).Terraform.panic, undefined);
    assert.equal(views({ [RC]: TOKEN }).Terraform.panic, undefined);
  });
});
