import assert from "node:assert/strict";
import {
  existsSync,
  lstatSync,
  rmSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import type { TestContext } from "node:test";
import { importCredentials } from "../../../src/commands/import.ts";
import { CliError } from "../../../src/errors.ts";
import { normalizeHostname } from "../../../src/protocol/hostname.ts";
import type { CredentialStore } from "../../../src/protocol/credential-store.ts";
import { viewsOf } from "../../../src/commands/read-view.ts";
import type { TerraformView, Tool } from "../../../src/terraform/view.ts";
import { createMemoryStore } from "../../support/memory-store.ts";
import { smallDisk } from "../../support/small-disk.ts";
import { createTempHome } from "./temp-home.ts";
import type { TempHome } from "./temp-home.ts";

/** A hostname as the stores take it (these are normalised already). */
const host = (name: string) => normalizeHostname(name);

const SECRET_A = "SECRET-aaaa.atlasv1.1111";
const SECRET_B = "SECRET-bbbb.atlasv1.2222";
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

interface Sandbox extends TempHome {
  /** ~/.terraform.d/credentials.tfrc.json */
  readonly file: string;
  /** The OpenTofu XDG candidate. */
  readonly xdgFile: string;
  /** What Terraform and OpenTofu read in this HOME now (OpenTofu's XDG directory included). */
  views(env?: Record<string, string>): Record<Tool, TerraformView>;
}

function sandbox(t: TestContext): Sandbox {
  const temp = createTempHome(t, "tfck-import-");
  const file = temp.inHome(".terraform.d", "credentials.tfrc.json");
  const xdgFile = path.join(temp.root, "xdg-config", "opentofu", "credentials.tfrc.json");
  const views = (env: Record<string, string> = {}) =>
    viewsOf({
      env: { XDG_CONFIG_HOME: path.join(temp.root, "xdg-config"), ...env },
      platform: process.platform,
      arch: process.arch,
      homedir: temp.home,
      execPath: "",
      isSea: false,
    });
  return { ...temp, file, xdgFile, views };
}

/** A store that behaves like `inner` except as `overrides` say. */
function storeWith(inner: CredentialStore, overrides: Partial<CredentialStore>): CredentialStore {
  return {
    get: (host) => inner.get(host),
    store: (host, secret) => inner.store(host, secret),
    forget: (host) => inner.forget(host),
    list: () => inner.list(),
    ...overrides,
  };
}

/** The hosts' outcomes of an import with only `keep` set. */
async function importHosts(
  store: CredentialStore,
  views: Record<Tool, TerraformView>,
  keep: boolean,
) {
  return (await importCredentials(store, views, { keep })).hosts;
}

function assertNoSecret(value: unknown): void {
  const text = JSON.stringify(value);
  assert.ok(!text.includes(SECRET_A) && !text.includes(SECRET_B), `no token in ${text}`);
}

describe("importCredentials", { skip: process.platform === "win32" && "POSIX modes" }, () => {
  test("moves every host into the store and removes the file when nothing is left", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      json({
        credentials: {
          "app.terraform.io": { token: SECRET_A },
          "tfe.example.com": { token: SECRET_B, organization: "acme" },
        },
      }),
      0o600,
    );
    const store = createMemoryStore();
    const results = await importHosts(store, box.views(), false);
    assert.deepEqual(results, [
      { file: box.file, host: "app.terraform.io", outcome: "moved" },
      { file: box.file, host: "tfe.example.com", outcome: "moved" },
    ]);
    assert.deepEqual(
      new Map(store.entries),
      new Map([
        ["app.terraform.io", `{"token":"${SECRET_A}"}`],
        ["tfe.example.com", `{"token":"${SECRET_B}","organization":"acme"}`],
      ]),
    );
    assert.equal(existsSync(box.file), false, "the plaintext file is gone");
  });

  test("each host is stored, then read back, before the file changes", async (t) => {
    const box = sandbox(t);
    box.write(box.file, json({ credentials: { "app.terraform.io": { token: SECRET_A } } }));
    const store = createMemoryStore();
    await importHosts(store, box.views(), false);
    assert.deepEqual(store.calls, [
      ["get", "app.terraform.io"],
      ["store", "app.terraform.io"],
      ["get", "app.terraform.io"],
    ]);
  });

  test("other top-level keys are kept: the file stays with an empty credentials object", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      json({ comment: "hand-written", credentials: { "app.terraform.io": { token: SECRET_A } } }),
    );
    await importHosts(createMemoryStore(), box.views(), false);
    assert.equal(box.text(box.file), '{\n  "comment": "hand-written",\n  "credentials": {}\n}\n');
  });

  test("an invalid hostname stays in the file and is reported; the others move", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      json({
        credentials: {
          "https://bad.example.com": { token: SECRET_A },
          "good.example.com": { token: SECRET_B },
        },
      }),
      0o600,
    );
    const store = createMemoryStore();
    const results = await importHosts(store, box.views(), false);
    assert.deepEqual(results, [
      {
        file: box.file,
        host: "https://bad.example.com",
        outcome: "failed",
        reason: 'invalid hostname "https://bad.example.com": expected a hostname, not a URL',
      },
      { file: box.file, host: "good.example.com", outcome: "moved" },
    ]);
    assertNoSecret(results);
    assert.deepEqual([...store.entries.keys()], ["good.example.com"]);
    assert.equal(
      box.text(box.file),
      json({ credentials: { "https://bad.example.com": { token: SECRET_A } } }),
    );
  });

  test(
    "an invalid credentials object stays in the file and is reported; the others move",
    {},
    async (t) => {
      const box = sandbox(t);
      box.write(
        box.file,
        json({
          credentials: {
            "bad.example.com": { token: 12345 },
            "good.example.com": { token: SECRET_B },
          },
        }),
      );
      const store = createMemoryStore();
      const results = await importHosts(store, box.views(), false);
      assert.equal(results.length, 2);
      assert.deepEqual(results[0] && { ...results[0], reason: undefined }, {
        file: box.file,
        host: "bad.example.com",
        outcome: "failed",
        reason: undefined,
      });
      assert.deepEqual(results[1], { file: box.file, host: "good.example.com", outcome: "moved" });
      assert.deepEqual([...store.entries.keys()], ["good.example.com"]);
      assert.equal(
        box.text(box.file),
        json({ credentials: { "bad.example.com": { token: 12345 } } }),
      );
    },
  );

  test("a file Terraform drops moves nothing (Terraform never sends its tokens) and is left as it was", async (t) => {
    const box = sandbox(t);
    const text = `{"credentials": {"app.terraform.io": {"token": "${SECRET_A}"}}, "disable_checkpoint": "true"}`;
    box.write(box.file, text, 0o600);
    const store = createMemoryStore();
    assert.deepEqual(await importHosts(store, box.views(), false), []);
    assert.equal(box.text(box.file), text);
    assert.deepEqual(store.calls, []);
  });

  test("keep copies every host and leaves the file byte-identical", async (t) => {
    const box = sandbox(t);
    const text = `{"credentials":{"app.terraform.io":{"token":"${SECRET_A}"},  "b.example.com" : {"token":"${SECRET_B}"}}}`;
    box.write(box.file, text, 0o640);
    const store = createMemoryStore();
    const results = await importHosts(store, box.views(), true);
    assert.deepEqual(results, [
      { file: box.file, host: "app.terraform.io", outcome: "copied" },
      { file: box.file, host: "b.example.com", outcome: "copied" },
    ]);
    assert.deepEqual(box.bytes(box.file), Buffer.from(text));
    assert.equal(box.mode(box.file), 0o640);
    assert.equal(store.entries.size, 2);
  });

  test("a store that fails on its first write: the error is thrown and the file is byte-identical", async (t) => {
    const box = sandbox(t);
    const text = json({
      credentials: {
        "app.terraform.io": { token: SECRET_A },
        "b.example.com": { token: SECRET_B },
      },
    });
    box.write(box.file, text, 0o600);
    const store = createMemoryStore();
    const locked = new CliError("the keychain is locked: unlock it and try again");
    store.failNext(locked, "store");
    await assert.rejects(importHosts(store, box.views(), false), (error: unknown) => {
      assert.equal(error, locked);
      return true;
    });
    assert.deepEqual(box.bytes(box.file), Buffer.from(text));
    assert.equal(store.entries.size, 0);
    assert.deepEqual(
      store.calls,
      [
        ["get", "app.terraform.io"],
        ["store", "app.terraform.io"],
      ],
      "it stops at the first failure",
    );
  });

  test("an unexpected error on the first write is thrown too, the file untouched", async (t) => {
    const box = sandbox(t);
    const text = json({ credentials: { "app.terraform.io": { token: SECRET_A } } });
    box.write(box.file, text);
    const store = createMemoryStore();
    store.failNext(new TypeError("addon crashed"), "store");
    await assert.rejects(importHosts(store, box.views(), false), TypeError);
    assert.deepEqual(box.bytes(box.file), Buffer.from(text));
  });

  test("a host the store returns differently on read-back stays in the file", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      json({
        credentials: {
          "a.example.com": { token: SECRET_A },
          "b.example.com": { token: SECRET_B },
        },
      }),
      0o600,
    );
    const inner = createMemoryStore();
    // Absent until stored, then mangled when read back.
    const store = storeWith(inner, {
      get: async (host) =>
        host === "b.example.com" && (await inner.get(host)) !== undefined
          ? '{"token":"mangled"}'
          : inner.get(host),
    });
    const results = await importHosts(store, box.views(), false);
    assert.deepEqual(results, [
      { file: box.file, host: "a.example.com", outcome: "moved" },
      {
        file: box.file,
        host: "b.example.com",
        outcome: "failed",
        reason: "the store returned something else when read back",
      },
    ]);
    assert.equal(
      box.text(box.file),
      json({ credentials: { "b.example.com": { token: SECRET_B } } }),
    );
  });

  test("a host the store loses on read-back stays in the file", async (t) => {
    const box = sandbox(t);
    box.write(box.file, json({ credentials: { "a.example.com": { token: SECRET_A } } }));
    const inner = createMemoryStore();
    const store = storeWith(inner, { get: async () => undefined });
    const results = await importHosts(store, box.views(), false);
    assert.equal(results[0]?.outcome, "failed");
    assert.equal(results[0].reason, "the store returned something else when read back");
    assert.equal(
      box.text(box.file),
      json({ credentials: { "a.example.com": { token: SECRET_A } } }),
    );
  });

  test("a store that fails after a first success: only the failed host stays", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      json({
        credentials: {
          "a.example.com": { token: SECRET_A },
          "b.example.com": { token: SECRET_B },
        },
      }),
    );
    const inner = createMemoryStore();
    const store = storeWith(inner, {
      store: async (host, secret) => {
        if (host === "b.example.com") throw new CliError("the keychain refused the entry");
        await inner.store(host, secret);
      },
    });
    const results = await importHosts(store, box.views(), false);
    assert.deepEqual(results, [
      { file: box.file, host: "a.example.com", outcome: "moved" },
      {
        file: box.file,
        host: "b.example.com",
        outcome: "failed",
        reason: "the keychain refused the entry",
      },
    ]);
    assert.equal(
      box.text(box.file),
      json({ credentials: { "b.example.com": { token: SECRET_B } } }),
    );
  });

  test("an unexpected error after a first success is thrown, not reported as a failed host", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      json({ credentials: { "a.example.com": { token: "x" }, "b.example.com": { token: "y" } } }),
    );
    const inner = createMemoryStore();
    const store = storeWith(inner, {
      store: async (host, secret) => {
        if (host === "b.example.com") throw new RangeError("bug");
        await inner.store(host, secret);
      },
    });
    await assert.rejects(importHosts(store, box.views(), false), RangeError);
  });

  for (const mode of [0o600, 0o640, 0o644]) {
    test(`the rewritten file keeps its mode ${mode.toString(8).padStart(4, "0")}`, async (t) => {
      const box = sandbox(t);
      box.write(
        box.file,
        json({
          credentials: { "not a host": { token: SECRET_A }, "b.example.com": { token: SECRET_B } },
        }),
        mode,
      );
      await importHosts(createMemoryStore(), box.views(), false);
      assert.equal(
        box.text(box.file),
        json({ credentials: { "not a host": { token: SECRET_A } } }),
      );
      assert.equal(box.mode(box.file), mode);
    });
  }

  test("hostnames are normalised: App.Example.COM is stored as app.example.com", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      json({
        credentials: {
          "App.Example.COM": { token: SECRET_A },
          "münchen.de:443": { token: SECRET_B },
        },
      }),
    );
    const store = createMemoryStore();
    const results = await importHosts(store, box.views(), false);
    assert.deepEqual(
      results.map((result) => [result.host, result.outcome]),
      [
        ["App.Example.COM", "moved"],
        ["münchen.de:443", "moved"],
      ],
    );
    assert.deepEqual([...store.entries.keys()].sort(), ["app.example.com", "xn--mnchen-3ya.de"]);
    assert.equal(existsSync(box.file), false);
  });

  test(
    "two spellings of one host with different tokens: the token the keychain does not keep stays in the file",
    {},
    async (t) => {
      const box = sandbox(t);
      box.write(
        box.file,
        json({
          credentials: {
            "App.Example.COM": { token: SECRET_A },
            "app.example.com": { token: SECRET_B },
          },
        }),
      );
      const store = createMemoryStore();
      await importHosts(store, box.views(), false);
      const kept = store.entries.get("app.example.com") ?? "";
      const left = box.text(box.file) ?? "";
      for (const [name, secret] of [
        ["A", SECRET_A],
        ["B", SECRET_B],
      ] as const) {
        assert.ok(
          kept.includes(secret) || left.includes(secret),
          `token ${name} is kept somewhere`,
        );
      }
    },
  );

  test("OpenTofu's XDG credentials.tfrc.json is imported while ~/.terraform.d is absent, and only then", async (t) => {
    const box = sandbox(t);
    const text = json({ credentials: { "b.example.com": { token: SECRET_B }, "bad host": {} } });
    box.write(box.xdgFile, text, 0o640);
    box.write(box.inHome(".terraform.d", "other.txt"), "");
    // OpenTofu's configDir: ~/.terraform.d while it exists, so the XDG file is not read.
    assert.deepEqual(await importHosts(createMemoryStore(), box.views(), false), []);
    assert.equal(box.text(box.xdgFile), text);
    rmSync(box.inHome(".terraform.d"), { recursive: true });
    const store = createMemoryStore();
    const results = await importHosts(store, box.views(), false);
    assert.deepEqual(
      results.map(({ file, host, outcome }) => ({ file, host, outcome })),
      [
        { file: box.xdgFile, host: "b.example.com", outcome: "moved" },
        { file: box.xdgFile, host: "bad host", outcome: "failed" },
      ],
    );
    assert.equal(box.text(box.xdgFile), json({ credentials: { "bad host": {} } }));
    assert.equal(box.mode(box.xdgFile), 0o640);
  });

  test("no credentials file: nothing to import and the store is not touched", async (t) => {
    const box = sandbox(t);
    const store = createMemoryStore();
    assert.deepEqual(box.views().Terraform.files, []);
    assert.deepEqual(await importHosts(store, box.views(), false), []);
    assert.deepEqual(store.calls, []);
  });

  test("a file with no hosts is left as it is", async (t) => {
    const box = sandbox(t);
    box.write(box.file, '{"credentials": {}}', 0o600);
    assert.deepEqual(
      box.views().Terraform.files.map(({ file }) => file),
      [box.file],
    );
    assert.deepEqual(await importHosts(createMemoryStore(), box.views(), false), []);
    assert.equal(box.text(box.file), '{"credentials": {}}');
  });

  test("a file where every host fails is left byte-identical", async (t) => {
    const box = sandbox(t);
    const text = `{"credentials":{"not a host":{"token":"${SECRET_A}"}}}`;
    box.write(box.file, text, 0o600);
    const results = await importHosts(createMemoryStore(), box.views(), false);
    assert.equal(results[0]?.outcome, "failed");
    assert.equal(results[0].reason, 'invalid hostname "not a host": contains whitespace');
    assertNoSecret(results);
    assert.deepEqual(box.bytes(box.file), Buffer.from(text));
  });

  test("failure reasons never hold a token", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      json({ credentials: { [`${SECRET_A}.example.com/x`]: { token: SECRET_B } } }),
    );
    const results = await importHosts(createMemoryStore(), box.views(), false);
    assert.equal(results.length, 1);
    assert.equal(results[0]?.outcome, "failed");
    assert.ok(!(results[0].reason ?? "").includes(SECRET_B));
  });

  test("each object is stored byte for byte: numbers are not rewritten", async (t) => {
    const box = sandbox(t);
    // Numbers Terraform decodes (ParseInt and ParseFloat refuse 12345678901234567890 and 1e400).
    const object = `{"token":"${SECRET_A}","id":1234567890123456789,"ratio":1.50,"zero":-0}`;
    box.write(box.file, `{"credentials":{"app.terraform.io":${object}}}`, 0o600);
    const store = createMemoryStore();
    await importHosts(store, box.views(), false);
    assert.equal(store.entries.get("app.terraform.io"), object);
  });

  test("an entry that cannot be moved (__proto__) stays in the file and is reported", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      `{"credentials":{"__proto__":{"token":"${SECRET_B}"},"app.terraform.io":{"token":"${SECRET_A}"}}}`,
      0o600,
    );
    const store = createMemoryStore();
    const results = await importHosts(store, box.views(), false);
    assert.deepEqual(
      results.map(({ host, outcome }) => ({ host, outcome })),
      [
        { host: "__proto__", outcome: "failed" },
        { host: "app.terraform.io", outcome: "moved" },
      ],
    );
    assert.equal(
      readFileSync(box.file, "utf8"),
      `{"credentials":{"__proto__":{"token":"${SECRET_B}"}}}`,
    );
  });

  test("a symlinked file is edited in its target, and the link stays", async (t) => {
    const box = sandbox(t);
    const target = path.join(box.root, "dotfiles", "credentials.tfrc.json");
    box.write(target, json({ credentials: { "app.terraform.io": { token: SECRET_A } } }), 0o600);
    mkdirSync(path.dirname(box.file), { recursive: true });
    symlinkSync(target, box.file);
    await importHosts(createMemoryStore(), box.views(), false);
    assert.ok(lstatSync(box.file).isSymbolicLink(), "the link is still a link");
    assert.equal(readFileSync(target, "utf8"), '{\n  "credentials": {}\n}\n');
    assert.ok(!readFileSync(target, "utf8").includes(SECRET_A), "no token left in the target");
  });
  test("two top-level credentials objects: hosts of both move, as Terraform reads both", async (t) => {
    const box = sandbox(t);
    box.write(
      box.file,
      `{"credentials": {"a.example.com": {"token": "${SECRET_A}"}},\n "credentials": {"b.example.com": {"token": "${SECRET_B}"}}}\n`,
      0o600,
    );
    const store = createMemoryStore();
    const report = await importCredentials(store, box.views());
    assert.deepEqual(
      report.hosts.map((host) => [host.host, host.outcome]),
      [
        ["a.example.com", "moved"],
        ["b.example.com", "moved"],
      ],
    );
    assert.equal(await store.get(host("a.example.com")), `{"token":"${SECRET_A}"}`);
    assert.equal(await store.get(host("b.example.com")), `{"token":"${SECRET_B}"}`);
    assert.deepEqual(report.files, [{ file: box.file, change: "removed" }]);
    assert.equal(existsSync(box.file), false);
  });

  test("a host given twice with different tokens stays in the file, both times, and is not stored without --force", async (t) => {
    const box = sandbox(t);
    const text = `{"credentials": {"a.example.com": {"token": "${SECRET_A}"}},\n "credentials": {"a.example.com": {"token": "${SECRET_B}"}}}\n`;
    box.write(box.file, text, 0o600);
    const store = createMemoryStore();
    const report = await importCredentials(store, box.views());
    // Terraform merges both objects and sends the second token; dropping the first silently
    // would lose it, so the host is refused, naming the copy.
    assert.deepEqual(
      report.hosts.map((host) => host.outcome),
      ["failed"],
    );
    assert.match(
      report.hosts[0]?.reason ?? "",
      new RegExp(`another copy holds a different token.*\\(${box.file}:1\\)$`),
    );
    assert.equal(box.text(box.file), text);
    assert.equal(store.entries.size, 0);
    assertNoSecret(report);
  });

  test("the store holds different credentials: the host is kept in the file, unless --force", async (t) => {
    const box = sandbox(t);
    const text = json({ credentials: { "a.example.com": { token: SECRET_A } } });
    box.write(box.file, text, 0o600);
    const store = createMemoryStore();
    await store.store(host("a.example.com"), `{"token":"${SECRET_B}"}`);
    const kept = await importCredentials(store, box.views());
    assert.equal(kept.hosts[0]?.outcome, "kept");
    assert.equal(box.text(box.file), text);
    assert.equal(await store.get(host("a.example.com")), `{"token":"${SECRET_B}"}`);
    assertNoSecret(kept);

    const forced = await importCredentials(store, box.views(), { force: true });
    assert.equal(forced.hosts[0]?.outcome, "replaced");
    assert.equal(await store.get(host("a.example.com")), `{"token":"${SECRET_A}"}`);
    assert.equal(existsSync(box.file), false);
  });

  test("--dry-run decides everything and changes nothing", async (t) => {
    const box = sandbox(t);
    const text = json({ credentials: { "a.example.com": { token: SECRET_A } } });
    box.write(box.file, text, 0o600);
    const store = createMemoryStore();
    const report = await importCredentials(store, box.views(), { dryRun: true });
    assert.deepEqual(report, {
      hosts: [{ file: box.file, host: "a.example.com", outcome: "moved" }],
      files: [{ file: box.file, change: "removed" }],
      lastCredentialsFileHosts: ["a.example.com"],
    });
    assert.equal(box.text(box.file), text);
    assert.equal(store.entries.size, 0);
  });

  test("a login that writes the file during the import is kept", async (t) => {
    const box = sandbox(t);
    box.write(box.file, json({ credentials: { "a.example.com": { token: SECRET_A } } }), 0o600);
    const inner = createMemoryStore();
    const loggedIn = json({
      credentials: {
        "a.example.com": { token: SECRET_A },
        "new.example.com": { token: SECRET_B },
      },
    });
    // terraform login rewrites the file while the first host is being stored.
    const store = storeWith(inner, {
      store: async (host, secret) => {
        box.write(box.file, loggedIn, 0o600);
        await inner.store(host, secret);
      },
    });
    await importCredentials(store, box.views());
    assert.deepEqual(JSON.parse(box.text(box.file) ?? ""), {
      credentials: { "new.example.com": { token: SECRET_B } },
    });
  });

  test("the empty object {} is not imported: it stays in the file", async (t) => {
    const box = sandbox(t);
    box.write(box.file, json({ credentials: { "e.example.com": {} } }), 0o600);
    const store = createMemoryStore();
    const report = await importCredentials(store, box.views());
    assert.equal(report.hosts[0]?.outcome, "failed");
    assert.match(report.hosts[0].reason ?? "", /hold no token: Terraform sends none for it/);
    assert.equal(store.entries.size, 0);
    assert.ok(existsSync(box.file));
  });

  test("a file that is not valid UTF-8 is refused and left byte for byte", async (t) => {
    const box = sandbox(t);
    const bytes = Buffer.concat([
      Buffer.from('{"credentials": {"a.example.com": {"token": "'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}}'),
    ]);
    box.write(box.file, bytes, 0o600);
    const store = createMemoryStore();
    await assert.rejects(
      importCredentials(store, box.views()),
      new CliError(`${box.file} is not valid UTF-8 text: it was not read`),
    );
    assert.deepEqual(box.bytes(box.file), bytes);
    assert.equal(store.entries.size, 0);
  });

  test("a disk too full to rewrite the file: one line, and the file keeps every byte", async (t) => {
    const disk = smallDisk(t, 256);
    if (disk === undefined) return;
    const file = path.join(disk.dir, "credentials.tfrc.json");
    const hosts = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`h${i}.example.com`, { token: `${SECRET_A}-${i}` }]),
    );
    hosts["bad host"] = { token: SECRET_B };
    const text = `${json({ credentials: hosts })}${" ".repeat(20_000)}\n`;
    writeFileSync(file, text, { mode: 0o600 });
    disk.fill(4 * 1024);
    const box = sandbox(t);
    const store = createMemoryStore();
    await assert.rejects(
      importCredentials(store, box.views({ TF_CLI_CONFIG_FILE: file })),
      new CliError(
        `could not write ${file}: no space left on the device (ENOSPC); it was left as it was`,
      ),
    );
    assert.equal(readFileSync(file, "utf8"), text);
  });
});

describe(
  "importCredentials: credentials blocks in CLI config files",
  {
    skip: process.platform === "win32" && "POSIX modes",
  },
  () => {
    /** The sandbox, with ~/.terraform.d merged into the CLI config as Terraform does. */
    function withConfigDir(t: TestContext) {
      const box = sandbox(t);
      return { ...box, rc: box.inHome(".terraformrc") };
    }
    const RC = (block: string) =>
      `# my settings\r\nplugin_cache_dir = "/tmp/cache"\n\ncredentials_helper "keychain" {}\n\n${block}provider_installation {\n  direct {}\n}\n`;

    test("a block's token is stored, read back, and then only the block leaves the file", async (t) => {
      const box = withConfigDir(t);
      box.write(
        box.rc,
        RC(`credentials "App.Terraform.io" {\n  token = "${SECRET_A}"\n}\n\n`),
        0o640,
      );
      const store = createMemoryStore();
      const report = await importCredentials(store, box.views());
      assert.deepEqual(report.hosts, [
        { file: box.rc, host: "App.Terraform.io", outcome: "moved" },
      ]);
      assert.deepEqual(report.files, [{ file: box.rc, change: "rewritten" }]);
      assert.deepEqual(store.calls, [
        ["get", "app.terraform.io"],
        ["store", "app.terraform.io"],
        ["get", "app.terraform.io"],
      ]);
      assert.equal(store.entries.get(host("app.terraform.io")), `{"token":"${SECRET_A}"}`);
      assert.equal(box.text(box.rc), RC(""));
      assert.equal(box.mode(box.rc), 0o640);
    });

    test("blocks in ~/.terraform.d/*.tfrc and *.tfrc.json move too, other string values with them; an empty block and one import cannot read are reported and left alone", async (t) => {
      const box = withConfigDir(t);
      const tfrc = box.inHome(".terraform.d", "team.tfrc");
      const tfrcJson = box.inHome(".terraform.d", "more.tfrc.json");
      const kept = `credentials "c.example.com" {}\ncredentials "d.example.com" { token = ["x"] }\n`;
      const rc = `credentials "a.example.com" { token = "${SECRET_A}" }\ncredentials "b.example.com" {\n  token = "${SECRET_B}"\n  organization = "acme"\n}\n${kept}`;
      const json = JSON.stringify({ credentials: { "e.example.com": { token: SECRET_B } } });
      box.write(tfrc, rc, 0o600);
      box.write(tfrcJson, json, 0o600);
      const store = createMemoryStore();
      const report = await importCredentials(store, box.views());
      // Go's ReadDir order: more.tfrc.json before team.tfrc.
      assert.deepEqual(
        report.hosts.map(({ host, outcome, file }) => [host, outcome, file]),
        [
          ["e.example.com", "moved", tfrcJson],
          ["a.example.com", "moved", tfrc],
          ["b.example.com", "moved", tfrc],
          ["c.example.com", "failed", tfrc],
          ["d.example.com", "failed", tfrc],
        ],
      );
      assert.match(report.hosts[3]?.reason ?? "", /hold no token/);
      assert.match(report.hosts[4]?.reason ?? "", /hold no token/);
      assert.deepEqual(
        [...store.entries.keys()],
        ["e.example.com", "a.example.com", "b.example.com"],
      );
      assert.equal(
        store.entries.get(host("b.example.com")),
        JSON.stringify({ token: SECRET_B, organization: "acme" }),
      );
      assert.equal(box.text(tfrc), kept);
      assert.equal(existsSync(tfrcJson), false);
      assertNoSecret(report);
    });

    test("a different stored token keeps the block unless --force", async (t) => {
      const box = withConfigDir(t);
      const text = RC(`credentials "a.example.com" { token = "${SECRET_A}" }\n\n`);
      box.write(box.rc, text, 0o600);
      const store = createMemoryStore();
      await store.store(host("a.example.com"), `{"token":"${SECRET_B}"}`);
      const kept = await importCredentials(store, box.views());
      assert.equal(kept.hosts[0]?.outcome, "kept");
      assert.equal(box.text(box.rc), text);
      assert.equal(store.entries.get(host("a.example.com")), `{"token":"${SECRET_B}"}`);
      const forced = await importCredentials(store, box.views(), { force: true });
      assert.equal(forced.hosts[0]?.outcome, "replaced");
      assert.equal(store.entries.get(host("a.example.com")), `{"token":"${SECRET_A}"}`);
      assert.equal(box.text(box.rc), RC(""));
    });

    test("--dry-run and --keep leave the file as it is", async (t) => {
      const box = withConfigDir(t);
      const text = RC(`credentials "a.example.com" { token = "${SECRET_A}" }\n\n`);
      box.write(box.rc, text, 0o600);
      const store = createMemoryStore();
      const planned = await importCredentials(store, box.views(), { dryRun: true });
      assert.deepEqual(planned.files, [{ file: box.rc, change: "rewritten" }]);
      assert.equal(store.entries.size, 0);
      await importCredentials(store, box.views(), { keep: true });
      assert.equal(box.text(box.rc), text);
      assert.equal(store.entries.size, 1);
    });

    test("nothing leaves the file before it is stored: an unreachable store leaves it whole", async (t) => {
      const box = withConfigDir(t);
      const text = RC(`credentials "a.example.com" { token = "${SECRET_A}" }\n\n`);
      box.write(box.rc, text, 0o600);
      const store = storeWith(createMemoryStore(), {
        get: async () => {
          throw new CliError("the keyring is locked");
        },
      });
      await assert.rejects(importCredentials(store, box.views()), /the keyring is locked/);
      assert.equal(box.text(box.rc), text);
    });

    test("a file changed during the import is read again: a block written meanwhile stays", async (t) => {
      const box = withConfigDir(t);
      box.write(box.rc, `credentials "a.example.com" { token = "${SECRET_A}" }\n`, 0o600);
      const inner = createMemoryStore();
      const later = `credentials "a.example.com" { token = "${SECRET_A}" }\ncredentials "new.example.com" { token = "${SECRET_B}" }\n`;
      const store = storeWith(inner, {
        store: async (name, secret) => {
          box.write(box.rc, later, 0o600);
          await inner.store(name, secret);
        },
      });
      await importCredentials(store, box.views());
      assert.equal(box.text(box.rc), `credentials "new.example.com" { token = "${SECRET_B}" }\n`);
    });

    test("finding 2: a host in credentials.tfrc.json (sent) and ~/.terraformrc (another token): refused naming the copy, unless --force", async (t) => {
      const box = withConfigDir(t);
      const jsonText = json({ credentials: { "a.example.com": { token: SECRET_A } } });
      box.write(box.file, jsonText, 0o600);
      const text = `\ncredentials "a.example.com" { token = "${SECRET_B}" }\n`;
      box.write(box.rc, text, 0o600);
      const store = createMemoryStore();
      const report = await importCredentials(store, box.views());
      assert.deepEqual(
        report.hosts.map(({ outcome }) => outcome),
        ["failed"],
      );
      assert.match(report.hosts[0]?.reason ?? "", new RegExp(`\\(${box.rc}:2\\)$`));
      assert.equal(box.text(box.rc), text);
      assert.equal(box.text(box.file), jsonText);
      assert.equal(store.entries.size, 0);
      // Terraform merges the config directory after ~/.terraformrc: the JSON file's token wins.
      const forced = await importCredentials(store, box.views(), { force: true });
      assert.deepEqual(
        forced.hosts.map(({ outcome, file }) => [outcome, file]),
        [["moved", box.file]],
      );
      assert.equal(store.entries.get(host("a.example.com")), `{"token":"${SECRET_A}"}`);
      assert.equal(box.text(box.rc), "\n");
      assert.equal(existsSync(box.file), false);
    });

    test("a symlinked CLI config is edited in its target, and the link stays", async (t) => {
      const box = withConfigDir(t);
      const target = path.join(box.root, "dotfiles", "terraformrc");
      box.write(target, RC(`credentials "a.example.com" { token = "${SECRET_A}" }\n\n`), 0o600);
      symlinkSync(target, box.rc);
      await importCredentials(createMemoryStore(), box.views());
      assert.ok(lstatSync(box.rc).isSymbolicLink());
      assert.equal(box.text(target), RC(""));
    });
  },
);
