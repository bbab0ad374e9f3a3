import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CliError, ExitCode } from "../../../src/errors.ts";
import {
  hostnameForComparison,
  hostnameForDisplay,
  normalizeHostname,
} from "../../../src/protocol/hostname.ts";

// Vectors come from terraform-svchost's svchost_test.go (TestForComparison, and the
// punycode forms of TestHostnameForDisplay, which Terraform passes to helpers), from
// /work/shared/spec/how-terraform-calls-helpers.md, and from the edges of each rule.

const label63 = "a".repeat(63);
// 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 octets, the DNS maximum.
const longest = `${label63}.${label63}.${label63}.${"a".repeat(61)}`;

/** Behaviour → [input, expected comparison form]. */
const accepted: Record<string, ReadonlyArray<readonly [string, string]>> = {
  "keeps a name already in comparison form": [
    ["example.com", "example.com"],
    ["app.terraform.io", "app.terraform.io"],
    ["localhost", "localhost"],
    ["invalid", "invalid"], // a reserved TLD, but syntactically a fine name
    ["1example.com", "1example.com"],
    ["a-b.example.com", "a-b.example.com"],
    ["a", "a"],
  ],
  "lowercases ASCII": [
    ["HashiCorp.com", "hashicorp.com"],
    ["App.Example.COM", "app.example.com"],
    ["LOCALHOST:8443", "localhost:8443"],
  ],
  "encodes internationalized names as punycode": [
    ["münchen.de", "xn--mnchen-3ya.de"], // precomposed ü
    ["mu\u0308nchen.de", "xn--mnchen-3ya.de"], // u + combining diaeresis, composed by NFC
    ["MÜNCHEN.DE", "xn--mnchen-3ya.de"],
    ["Испытание.com", "xn--80akhbyknj4f.com"],
    ["עברית.com", "xn--5dbqzzl.com"],
    ["💩.la", "xn--ls8h.la"],
  ],
  "uses non-transitional UTS #46 mapping (deviation characters kept)": [
    ["faß.de", "xn--fa-hia.de"],
    ["ς.com", "xn--3xa.com"],
  ],
  "maps capital sharp s (U+1E9E) to ss, as Terraform's Go idna tables do": [
    ["\u1e9e.de", "ss.de"],
    ["STRA\u1e9eE.de", "strasse.de"],
    ["fa\u1e9e.de", "fass.de"],
  ],
  "folds full-width forms and treats ideographic full stops as dots": [
    ["ＡＰＰ．terraform．io", "app.terraform.io"],
    ["ａｐｐ.terraform.io", "app.terraform.io"],
    ["app。terraform。io", "app.terraform.io"],
    ["app｡terraform｡io", "app.terraform.io"],
    ["１２７．０．０．１:8443", "127.0.0.1:8443"],
  ],
  "drops characters UTS #46 ignores": [["ex\u00adample.com", "example.com"]],
  "accepts punycode as Terraform passes it": [
    ["xn--mnchen-3ya.de", "xn--mnchen-3ya.de"],
    ["XN--MNCHEN-3YA.DE", "xn--mnchen-3ya.de"],
    ["xn--80akhbyknj4f.com", "xn--80akhbyknj4f.com"],
    ["xn--80akhbyknj4f.com:8080", "xn--80akhbyknj4f.com:8080"],
    ["xn--fa-hia.de", "xn--fa-hia.de"],
  ],
  "drops the default port 443": [
    ["example.com:443", "example.com"],
    ["example.com:0443", "example.com"],
    ["example.com:00000443", "example.com"],
    ["münchen.de:443", "xn--mnchen-3ya.de"],
  ],
  "keeps other ports, without leading zeros": [
    ["example.com:81", "example.com:81"],
    ["example.com:081", "example.com:81"],
    ["example.com:8443", "example.com:8443"],
    ["localhost:1211", "localhost:1211"],
    ["example.com:65535", "example.com:65535"],
    ["example.com:0", "example.com:0"], // svchost accepts it too
    ["example.com:1", "example.com:1"],
  ],
  "reads the port as strconv.Atoi does (svchost normalizePortPortion)": [
    ["example.com:+443", "example.com"],
    ["example.com:+0443", "example.com"],
    ["example.com:+81", "example.com:81"],
    ["example.com:-1", "example.com:-1"], // svchost keeps a negative port
    ["example.com:-0", "example.com:0"],
    ["example.com:-0443", "example.com:-443"],
    ["example.com:-9223372036854775808", "example.com:-9223372036854775808"],
  ],
  "accepts IPv4 literals as names, unchanged": [
    ["127.0.0.1", "127.0.0.1"],
    ["127.0.0.1:8443", "127.0.0.1:8443"],
    ["127.0.0.1:443", "127.0.0.1"],
    ["127.1", "127.1"], // a WHATWG URL parser would rewrite this; Go doesn't
    ["example.123", "example.123"],
    ["münchen.123", "xn--mnchen-3ya.123"],
  ],
  "keeps a trailing dot": [
    ["example.com.", "example.com."],
    ["Example.COM.:8443", "example.com.:8443"],
    ["example.com.:443", "example.com."],
    ["münchen.de．", "xn--mnchen-3ya.de."],
  ],
  "treats http and https as host names when a port follows (as svchost does)": [
    ["http:80", "http:80"],
    ["https:80", "https:80"],
  ],
  "accepts names at the DNS length limits": [
    [`${label63}.com`, `${label63}.com`],
    [longest, longest],
    [`${longest}.`, `${longest}.`],
  ],
  "accepts '--' in the third and fourth UTF-8 bytes only (as Go does)": [
    ["aü--b.de", "xn--a--b-0ra.de"],
  ],
};

/**
 * Behaviour → [input, reason after `invalid hostname <echo>: `, echo when it is not plain
 * `JSON.stringify(input)`].
 */
const refused: Record<string, ReadonlyArray<readonly [string, string, string?]>> = {
  "refuses an empty name": [
    ["", "empty"],
    [":443", "missing the name before the port"],
    [":8443", "missing the name before the port"],
  ],
  "refuses a bad port": [
    ["example.com:", "missing port number after the colon"],
    ["example.com:boo", "port is not a number"],
    ["example.com:abc", "port is not a number"],
    ["example.com:80:boo", "port is not a number"],
    ["example.com:+", "port is not a number"],
    ["example.com:-", "port is not a number"],
    ["example.com:1_0", "port is not a number"], // Atoi takes "_" only with base 0
    ["example.com: 81", "contains whitespace"],
    ["example.com:-99999999999999999999", "port is not a number"], // below int64
    ["example.com:８０", "port is not a number"],
    ["example.com:65536", "port number is greater than 65535"],
    ["example.com:99999", "port number is greater than 65535"],
    ["example.com:9999999", "port number is greater than 65535"],
    ["example.com:99999999999999999999999", "port number is greater than 65535"],
  ],
  "refuses empty labels": [
    ["blah..blah", "empty label"],
    ["a..b", "empty label"],
    ["..", "empty label"],
    [".", "empty label"],
    [".example.com", "empty label"],
    ["example.com..", "empty label"],
    ["a．．b", "empty label"],
    ["a.。b", "empty label"],
  ],
  "refuses URLs": [
    ["https://example.com", "expected a hostname, not a URL"],
    ["https://example.com:80", "expected a hostname, not a URL"],
    ["http://x", "expected a hostname, not a URL"],
    ["HTTPS://EXAMPLE.COM", "expected a hostname, not a URL"],
    ["ftp://example.com", "expected a hostname, not a URL"],
    ["https:example.com", "expected a hostname, not a URL"],
    ["http:", "expected a hostname, not a URL"],
  ],
  "refuses paths, queries and fragments": [
    ["x/y", "expected a hostname, not a URL or path"],
    ["example.com/", "expected a hostname, not a URL or path"],
    ["example.com:443/path", "expected a hostname, not a URL or path"],
    ["/etc/passwd", "expected a hostname, not a URL or path"],
    ["x\\y", "expected a hostname, not a URL or path"],
    ["example.com?x=1", "expected a hostname, not a URL or path"],
    ["example.com#x", "expected a hostname, not a URL or path"],
  ],
  "refuses user information": [
    ["u@x", "user information is not allowed"],
    ["user:pass@example.com", "user information is not allowed"],
  ],
  "refuses IPv6 literals": [
    ["[::1]", "IPv6 literals are not supported"],
    ["[::1]:443", "IPv6 literals are not supported"],
    ["::1", "IPv6 literals are not supported"],
    ["fe80::1", "IPv6 literals are not supported"],
    ["2001:db8::1", "IPv6 literals are not supported"],
  ],
  "refuses whitespace": [
    ["a b", "contains whitespace"],
    [" example.com", "contains whitespace"],
    ["example.com ", "contains whitespace"],
    ["example.com\u00a0", "contains whitespace"],
    ["example\u3000com", "contains whitespace"],
  ],
  "refuses control characters": [
    ["a\tb", "contains a control character"],
    ["example.com\n", "contains a control character"],
    ["example.com\r\n", "contains a control character"],
    ["a\0b", "contains a control character"],
    ["a\x1b[31mb", "contains a control character"],
    ["a\x7fb", "contains a control character", String.raw`"a\u007fb"`],
  ],
  "refuses ASCII other than letters, digits, '-' and '.' (STD3 rules)": [
    ["a_b.com", '"_" is not allowed in a hostname'],
    ["_dmarc.example.com", '"_" is not allowed in a hostname'],
    ["a*b.com", '"*" is not allowed in a hostname'],
    ["a+b.com", '"+" is not allowed in a hostname'],
    ["a%41.com", '"%" is not allowed in a hostname'],
    ["a,b.com", '"," is not allowed in a hostname'],
    ['a"b.com', '"\\"" is not allowed in a hostname'],
  ],
  "refuses characters that map to ASCII STD3 forbids": [
    ["＿.com", "contains a character that is not allowed in a hostname"],
    ["⑴.com", "contains a character that is not allowed in a hostname"],
  ],
  "refuses what IDNA refuses": [
    // ZWJ out of context
    ["a\u200db.com", "not a valid internationalized domain name", String.raw`"a\u200db.com"`],
    ["\u0308a.com", "not a valid internationalized domain name"], // leading combining mark
    ["a\ufffdb.com", "not a valid internationalized domain name"],
    ["\ud800.com", "not a valid internationalized domain name"], // lone surrogate
    ["אa.com", "not a valid internationalized domain name"], // bidi rule
    ["a：b", "not a valid internationalized domain name"], // full-width colon
  ],
  "refuses invalid punycode": [
    ["xn--a.com", "not a valid internationalized domain name"],
    ["xn--.com", "not a valid internationalized domain name"],
    ["xn--wca.com", "not a valid internationalized domain name"], // encodes "Ü", not mapped
    ["xn--abc-.com", "punycode label does not encode any non-ASCII character"],
    ["xn--mnchen-3ya-.de", "punycode label does not encode any non-ASCII character"],
  ],
  "refuses labels that start or end with a hyphen": [
    ["-a.com", "label starts or ends with a hyphen"],
    ["a-.com", "label starts or ends with a hyphen"],
    ["example.-com", "label starts or ends with a hyphen"],
    ["-", "label starts or ends with a hyphen"],
    ["xn----eha.com", "label starts or ends with a hyphen"], // "-ü"
  ],
  "refuses '--' in the third and fourth places": [
    ["ab--cd.com", 'label has "--" in the third and fourth places'],
    ["AB--CD.com", 'label has "--" in the third and fourth places'],
    ["ü--x.de", 'label has "--" in the third and fourth places'], // UTF-8 bytes, as Go
  ],
  "refuses names over the DNS length limits": [
    [`${"a".repeat(64)}.com`, "label longer than 63 octets (the DNS limit)"],
    [`${"ü".repeat(60)}.de`, "label longer than 63 octets (the DNS limit)"], // 66 in punycode
    [`${longest}a`, "longer than 253 octets (the DNS limit)"],
    [`${longest}a.`, "longer than 253 octets (the DNS limit)"],
  ],
};

function refusal(input: string, reason: string, echo?: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof CliError, `expected a CliError, got ${String(error)}`);
    assert.equal(error.exitCode, ExitCode.Usage);
    assert.equal(error.message, `invalid hostname ${echo ?? JSON.stringify(input)}: ${reason}`);
    return true;
  };
}

for (const [behaviour, vectors] of Object.entries(accepted)) {
  describe(behaviour, () => {
    for (const [input, want] of vectors) {
      it(`${show(input)} → ${show(want)}`, () => {
        assert.equal(normalizeHostname(input), want);
      });
    }
  });
}

for (const [behaviour, vectors] of Object.entries(refused)) {
  describe(behaviour, () => {
    for (const [input, reason, echo] of vectors) {
      it(show(input), () => {
        assert.throws(() => normalizeHostname(input), refusal(input, reason, echo));
      });
    }
  });
}

describe("gives one entry per host", () => {
  it("is a fixed point: normalizing a result again returns it unchanged", () => {
    for (const [input] of Object.values(accepted).flat()) {
      const once = normalizeHostname(input);
      assert.equal(normalizeHostname(once), once, `input ${JSON.stringify(input)}`);
    }
  });

  it("maps every spelling of münchen.de to the same name", () => {
    const spellings = ["münchen.de", "mu\u0308nchen.de", "MÜNCHEN.DE", "xn--mnchen-3ya.de"];
    const forms = new Set(spellings.map((spelling) => normalizeHostname(spelling)));
    assert.deepEqual([...forms], ["xn--mnchen-3ya.de"]);
  });
});

describe("a plain ASCII name, which skips IDNA, is read as IDNA reads it", () => {
  // The same name with an internationalized label after it goes through node:url's UTS #46
  // mapping and checks, which treat each label on its own (no bidi label here): the plain
  // name must come out as that name's first labels, or be refused with the same message.
  const IDNA_LABEL = ".ü";
  const IDNA_FORM = ".xn--tda";
  const outcome = (input: string) => {
    try {
      return normalizeHostname(input);
    } catch (error) {
      return (error as Error).message.replace(JSON.stringify(input), "NAME");
    }
  };

  it("agrees on 3,000 random names of letters, digits, hyphens and dots", () => {
    const alphabet = "aZ09-.-.xnX";
    let seed = 37;
    const random = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % below;
    };
    for (let i = 0; i < 3000; i++) {
      let name = "";
      for (let length = 1 + random(12); name.length < length;) name += alphabet.charAt(random(11));
      // A root's dot would leave an empty label before the added one.
      if (name.endsWith(".")) continue;
      const plain = outcome(name);
      const throughIdna = outcome(name + IDNA_LABEL);
      const expected =
        throughIdna.endsWith(IDNA_FORM) && !throughIdna.startsWith("invalid")
          ? throughIdna.slice(0, -IDNA_FORM.length)
          : throughIdna.replace(JSON.stringify(name + IDNA_LABEL), "NAME");
      assert.equal(plain, expected, JSON.stringify(name));
    }
  });
});

describe("writes safe, one-line error messages", () => {
  const inputs = Object.values(refused)
    .flat()
    .map(([input]) => input);

  it("starts lowercase, has no trailing period, no line break and no raw control character", () => {
    for (const input of inputs) {
      const { message } = catchError(() => normalizeHostname(input));
      assert.match(message, /^invalid hostname /);
      assert.doesNotMatch(message, /\.$/);
      assert.doesNotMatch(message, /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u, JSON.stringify(message));
    }
  });

  it("escapes C1 controls, bidi overrides and other invisible characters in the echo", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["a\u0085b", String.raw`invalid hostname "a\u0085b": contains a control character`],
      ["a\u009b2Jb", String.raw`invalid hostname "a\u009b2Jb": contains a control character`],
      ["a\u2028b", String.raw`invalid hostname "a\u2028b": contains whitespace`],
      ["a\u202eb.com:x", String.raw`invalid hostname "a\u202eb.com:x": port is not a number`],
      ["\u200bx.com:x", String.raw`invalid hostname "\u200bx.com:x": port is not a number`],
    ];
    for (const [input, message] of cases) {
      assert.equal(catchError(() => normalizeHostname(input)).message, message);
    }
  });
});

function catchError(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof CliError);
    return error;
  }
  assert.fail("expected an error");
}

/** A test name that shows invisible characters instead of printing them raw. */
function show(text: string): string {
  return JSON.stringify(text).replace(
    /[\p{Cc}\p{Cf}]/gu,
    (char) => `\\u{${char.codePointAt(0)?.toString(16)}}`,
  );
}

describe("hostnameForComparison: svchost ForComparison for names a person wrote", () => {
  // What Terraform makes of a credentials label; each row checked against terraform 1.11.4
  // by test/e2e/terraform-svchost.test.ts where marked.
  const cases: ReadonlyArray<readonly [string, string | RegExp]> = [
    ["münchen.de", "xn--mnchen-3ya.de"],
    ["example.com:+443", "example.com"], // e2e
    // A label svchost refuses: written in lowercase punycode (its check is case-sensitive).
    ["xn--mnchen-3ya.de", /label "xn--mnchen-3ya" is in punycode.*\(münchen\.de\)$/], // e2e
    ["a.xn--mnchen-3ya.de:8443", /label "xn--mnchen-3ya" is in punycode/],
    ["xn--a.com", /label "xn--a" is in punycode/],
    ["xn--mnchen-3ya。de", /label "xn--mnchen-3ya。de" is in punycode/], // split at ASCII dots only
    // Any other case passes svchost's check, and IDNA then reads the punycode.
    ["XN--MNCHEN-3YA.DE", "xn--mnchen-3ya.de"], // e2e
    ["Xn--mnchen-3ya.de", "xn--mnchen-3ya.de"],
    // Full-width letters pass it too: IDNA maps them to "xn--" and reads the punycode.
    ["ｘｎ--mnchen-3ya.de", "xn--mnchen-3ya.de"], // e2e
  ];
  for (const [input, want] of cases) {
    it(`${show(input)} → ${String(want)}`, () => {
      if (typeof want === "string") assert.equal(hostnameForComparison(input), want);
      else assert.throws(() => hostnameForComparison(input), want);
    });
  }

  it("agrees with normalizeHostname on every name without a lowercase punycode label", () => {
    for (const [input] of Object.values(accepted).flat()) {
      if (input.split(/[.:]/).some((label) => label.startsWith("xn--"))) continue;
      assert.equal(hostnameForComparison(input), normalizeHostname(input), show(input));
    }
  });
});

describe("hostnameForDisplay: svchost ForDisplay, transitional", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["example.com", "example.com"],
    ["Example.COM:0443", "example.com"],
    ["example.com:+81", "example.com:81"],
    ["straße.de", "strasse.de"], // transitional: ß is ss
    ["STRASSE.de", "strasse.de"],
    ["ς.com", "σ.com"],
    ["a\u200db.com", "ab.com"], // joiners dropped
    ["xn--mnchen-3ya.de", "münchen.de"],
    ["xn--strae-oqa.de", "straße.de"], // punycode is decoded, not mapped again
    ["XN--MNCHEN-3YA.de:8443", "münchen.de:8443"],
    // What the profile refuses is returned as written, the port portion normalized or not.
    ["bad_host.com:+443", "bad_host.com"],
    ["-a.com:x", "-a.com:x"],
    ["xn--a.com", "xn--a.com"],
  ];
  for (const [input, want] of cases) {
    it(`${show(input)} → ${show(want)}`, () => {
      assert.equal(hostnameForDisplay(input), want);
    });
  }
});
