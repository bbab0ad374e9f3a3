import { CliError, ExitCode } from "../errors.ts";
import { builtin } from "../system/lazy-builtins.ts";
import { quote } from "../system/quote.ts";

/**
 * A hostname in the comparison form Terraform passes to credentials helpers (svchost
 * `ForComparison`): lowercase ASCII, internationalized labels in punycode, an optional
 * `:port` other than 443. Two spellings of one host give equal `Hostname`s, so it is safe
 * to use as a key. Only `normalizeHostname` produces one.
 */
export type Hostname = string & { readonly __brand: "Hostname" };

/**
 * Converts a hostname as Terraform or a person writes it (`App.Example.COM`, `münchen.de`,
 * `xn--mnchen-3ya.de`, `localhost:8443`, `127.0.0.1:8443`) to Terraform's comparison form.
 * The result is a fixed point: normalizing it again returns it unchanged.
 *
 * Follows terraform-svchost `ForComparison` (golang.org/x/net/idna `Lookup` profile: UTS #46
 * non-transitional mapping, STD3 ASCII rules, hyphen and joiner checks). Where we differ,
 * we are stricter, except that punycode input is accepted (Terraform hands it to us, and a
 * person may type it on our command line; `hostnameForComparison` refuses it where svchost
 * does) and the bidi rule is only as strict as Node's: see the comments below.
 *
 * Throws a `CliError` with `ExitCode.Usage` when the input is not a hostname (empty, a URL,
 * a path, userinfo, an IPv6 literal, a bad port, an empty or over-long label, a character
 * IDNA refuses).
 */
export function normalizeHostname(input: string): Hostname {
  return comparisonForm(input, false);
}

/**
 * svchost `ForComparison` for a name a person wrote where Terraform reads it: a
 * `credentials` label, a key of credentials.tfrc.json, a host in a `TF_TOKEN_` name (after
 * `hostnameForDisplay`). The rules of `normalizeHostname`, plus svchost's own: a label
 * written in punycode (`xn--`, lowercase, exactly so: svchost's check is case-sensitive and
 * comes before IDNA maps case) is refused, so Terraform ignores such an entry.
 */
export function hostnameForComparison(given: string): Hostname {
  return comparisonForm(given, true);
}

function comparisonForm(input: string, refusePunycode: boolean): Hostname {
  const fail = (reason: string): never => {
    throw new CliError(`invalid hostname ${quote(input)}: ${reason}`, ExitCode.Usage);
  };

  // These would surface below as a bad port or a bad character; say what the person
  // most likely did instead. None of them can fail on a plain name.
  if (input === "") fail("empty");
  if (!isPlainName(input)) {
    if (input.includes("://")) fail("expected a hostname, not a URL");
    if (input.startsWith("[") || IPV6_LIKE.test(input)) fail("IPv6 literals are not supported");
    if (input.includes("@")) fail("user information is not allowed");
    if (/[/\\?#]/.test(input)) fail("expected a hostname, not a URL or path");
    if (/\p{Cc}/u.test(input)) fail("contains a control character");
    if (/\p{White_Space}/u.test(input)) fail("contains whitespace");
  }

  // Like svchost, everything after the first colon is the port.
  const colon = input.indexOf(":");
  const host = colon === -1 ? input : input.slice(0, colon);
  const port = colon === -1 ? "" : portSuffix(host, input.slice(colon + 1), fail);
  if (host === "") fail("missing the name before the port");
  // svchost ForComparison: its labelIter splits the name as written at ASCII dots, before
  // any mapping; a plain name has no "xn--" label (isPlainName).
  if (refusePunycode && !isPlainName(host)) {
    for (const label of host.split(".")) {
      if (label.startsWith(ACE_PREFIX)) {
        fail(
          `label ${quote(label)} is in punycode, which Terraform ignores here; write it in Unicode (${unicodeSpelling(host)})`,
        );
      }
    }
  }

  return (toAsciiName(host, fail) + port) as Hostname;
}

/** The Unicode spelling of a punycode name, for a message; the name itself if it has none. */
function unicodeSpelling(host: string): string {
  try {
    const ascii = toAsciiName(host, (reason) => {
      throw new Error(reason);
    });
    return (
      builtin("node:url")
        .domainToUnicode(ascii + GUARD)
        .slice(0, -GUARD.length) || host
    );
  } catch {
    return host;
  }
}

/**
 * svchost `ForDisplay`: the Unicode form of `given` through its display profile (IDNA
 * `MapForLookup` with `Transitional(true)`: "ß" becomes "ss", "ς" becomes "σ", the joiners
 * ZWJ and ZWNJ are dropped), and the port as `normalizePortPortion` reads it. Where either
 * fails, the input is returned as it was, as svchost does. Terraform's
 * `collectCredentialsFromEnv` puts a `TF_TOKEN_` name through this, then `ForComparison`.
 */
export function hostnameForDisplay(given: string): string {
  const colon = given.indexOf(":");
  const host = colon === -1 ? given : given.slice(0, colon);
  let port = colon === -1 ? "" : given.slice(colon);
  try {
    if (colon !== -1) port = portSuffix(host, given.slice(colon + 1), failWith);
  } catch {
    // normalizePortPortion's error is ignored: the portion stays as written.
  }
  if (isPlainName(host)) {
    // Its own IDNA form lowercased, as in toAsciiName; one that IDNA refuses stays as written.
    try {
      return toAsciiName(host, failWith) + port;
    } catch {
      return host + port;
    }
  }
  // UTS #46 transitional processing maps only these four deviation characters otherwise.
  const transitional = host.replaceAll("\u00df", "ss").replaceAll("\u03c2", "\u03c3");
  let ascii;
  try {
    ascii = toAsciiName(transitional.replace(/[\u200c\u200d]/g, ""), failWith);
  } catch {
    return host + port;
  }
  const unicode = builtin("node:url").domainToUnicode(ascii + GUARD);
  return unicode.endsWith(GUARD) ? unicode.slice(0, -GUARD.length) + port : host + port;
}

const failWith = (reason: string): never => {
  throw new Error(reason);
};

// Hex digits and at least two colons: `::1`, `fe80::1`. Without this they would be
// reported as a bad port, which would confuse.
const IPV6_LIKE = /^[0-9a-f]*:[0-9a-f]*:[0-9a-f:.]*$/i;

const DEFAULT_PORT = 443n;
const MAX_PORT = 65535n;
const INT64_MIN = -(2n ** 63n);
// strconv.Atoi's syntax in base 10.
const ATOI = /^[+-]?[0-9]+$/;
// DNS limits (RFC 1035), in octets of the ASCII form, the root's trailing dot not counted.
const MAX_LABEL_LENGTH = 63;
const MAX_NAME_LENGTH = 253;
const ACE_PREFIX = "xn--";
const HYPHEN = 0x2d;
const DOT = 0x2e;

// Appended before calling Node's WHATWG domain functions, stripped after: the WHATWG host
// parser reads a name whose last label is numeric as IPv4 (`127.1` → `127.0.0.1`,
// `müller.123` → failure), which Go's idna never does. A trailing letter label never
// changes how the other labels are mapped or checked.
const GUARD = ".a";

const utf8 = new TextEncoder();

/**
 * Whether `name` is ASCII letters, digits, "-" and "." only, with no label that begins with
 * punycode's "xn--" (in any case): such a name, every name Terraform's services use, is its
 * own IDNA form lowercased, and no check for a URL, an IPv6 literal, user information, a
 * control character, white space or a character STD3 refuses can fail on it. A loop: the
 * regular expressions of those checks cost a call ~0.15 ms to compile (docs/speed.md).
 */
function isPlainName(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    const letter = (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
    const digit = code >= 0x30 && code <= 0x39;
    if (!letter && !digit && code !== HYPHEN && code !== DOT) return false;
    const labelStart = i === 0 || name.charCodeAt(i - 1) === DOT;
    if (labelStart && name.slice(i, i + ACE_PREFIX.length).toLowerCase() === ACE_PREFIX) {
      return false;
    }
  }
  return true;
}

/**
 * The port as svchost `normalizePortPortion` reads it: `strconv.Atoi` (an optional sign,
 * then ASCII digits, within Go's int64: ":+443" is 443, ":-1" is -1), 443 dropped as the
 * default, more than 65535 refused, any other value printed as Go prints it (":081" is
 * ":81", ":-0" is ":0"). Returns "" for the default port.
 */
function portSuffix(host: string, digits: string, fail: (reason: string) => never): string {
  if (!ATOI.test(digits)) {
    // svchost's hint: "https:foo" is a URL missing its slashes far more often than a host
    // called "https".
    if (/^https?$/i.test(host)) fail("expected a hostname, not a URL");
    fail(digits === "" ? "missing port number after the colon" : "port is not a number");
  }
  const port = BigInt(digits);
  if (port > MAX_PORT) fail(`port number is greater than ${MAX_PORT}`);
  // Below int64, Atoi fails.
  if (port < INT64_MIN) fail("port is not a number");
  return port === DEFAULT_PORT ? "" : `:${port}`;
}

/** The host part (no port) in lowercase ASCII; a single trailing dot is kept, as svchost does. */
function toAsciiName(host: string, fail: (reason: string) => never): string {
  const plain = isPlainName(host);
  // STD3 rules: in ASCII only letters, digits, "-" and "." (Go's Lookup profile). WHATWG,
  // which Node implements, would let "_" or "*" through and percent-decode "%41".
  const bad = plain ? null : /[^A-Za-z0-9.\-\P{ASCII}]/u.exec(host);
  if (bad) fail(`${quote(bad[0])} is not allowed in a hostname`);

  // A plain name is its own IDNA form, lowercased (UTS #46 maps nothing else in ASCII, and
  // its checks below see the same labels): it never loads node:url (~1 ms).
  const idna = plain ? undefined : builtin("node:url");

  // UTS #46 non-transitional mapping and validation (case folding, full-width forms and
  // ideographic full stops, NFC, punycode decoding and checking, ContextJ joiners, leading
  // combining marks). Returns "" when the name is refused.
  // Capital sharp s: UTS #46 mapped it to "ss" until Unicode 15.1, which maps it to "ß".
  // Terraform's golang.org/x/net/idna still has the older table (it passes "ss.de" for
  // "ẞ.de"), Node's ICU the newer one ("xn--zca.de"); we follow Terraform.
  const mapped =
    idna === undefined
      ? host.toLowerCase() + GUARD
      : idna.domainToASCII(host.replaceAll("\u1e9e", "ss") + GUARD);
  if (!mapped.endsWith(GUARD)) fail("not a valid internationalized domain name");
  const ascii = mapped.slice(0, -GUARD.length);
  // Mapping can yield characters STD3 forbids ("⑴" → "(1)", "＿" → "_"); Go refuses
  // these characters outright.
  if (!plain && /[^a-z0-9.-]/.test(ascii)) {
    fail("contains a character that is not allowed in a hostname");
  }

  const labels = ascii.split(".");
  const rooted = labels.length > 1 && labels[labels.length - 1] === "";
  if (rooted) labels.pop();
  // svchost only catches some empty labels (its iterator skips one before a final dot, so
  // it lets "a.." through, and it checks before mapping "．", so it lets "a．．b" through);
  // we refuse them all: they can never be reached.
  if (labels.includes("")) fail("empty label");
  // Go's Lookup profile does not check lengths; names over them cannot exist in DNS, so no
  // Terraform service can live there, and refusing them gives a clearer error.
  for (const label of labels) {
    if (label.length > MAX_LABEL_LENGTH) {
      fail(`label longer than ${MAX_LABEL_LENGTH} octets (the DNS limit)`);
    }
  }
  const name = labels.join(".");
  if (name.length > MAX_NAME_LENGTH) fail(`longer than ${MAX_NAME_LENGTH} octets (the DNS limit)`);

  // Go checks hyphens on the Unicode form of each label (punycode decoded); WHATWG doesn't
  // check them at all (CheckHyphens=false).
  const unicodeLabels =
    idna === undefined
      ? labels
      : idna
          .domainToUnicode(name + GUARD)
          .slice(0, -GUARD.length)
          .split(".");
  if (unicodeLabels.length !== labels.length) fail("not a valid internationalized domain name");
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] ?? "";
    const unicode = unicodeLabels[i] ?? "";
    // UTS #46 (since 15.1) refuses punycode that decodes to plain ASCII ("xn--abc-"); Go
    // would turn it into "abc", but Terraform never produces it.
    if (label.startsWith(ACE_PREFIX) && !/[^\p{ASCII}]/u.test(unicode)) {
      fail("punycode label does not encode any non-ASCII character");
    }
    if (unicode.startsWith("-") || unicode.endsWith("-")) {
      fail("label starts or ends with a hyphen");
    }
    // "--" in the 3rd and 4th places is reserved for encodings such as punycode's "xn--".
    // Go counts UTF-8 bytes here, not characters (so it refuses "ü--x" and accepts
    // "aü--b"); we count the same way, so as to accept exactly what Terraform does.
    const bytes = utf8.encode(unicode);
    if (bytes.length > 4 && bytes[2] === HYPHEN && bytes[3] === HYPHEN) {
      fail('label has "--" in the third and fourth places');
    }
  }
  // Not checked by us: the bidi rule (RFC 5893). Node enforces it only in part, so we accept
  // some mixed-direction names Go refuses ("aא.com", "1.עברית"); checking it ourselves would
  // need Bidi_Class data that JavaScript regular expressions don't expose. Terraform never
  // sends such names, so accepting them costs nothing.

  return rooted ? `${name}.` : name;
}

/**
 * `text` as a Hostname when it already is one in Terraform's comparison form, else
 * `undefined`: for names read back from a store, where any other spelling is not ours.
 */
export function canonicalHostname(text: string): Hostname | undefined {
  try {
    const host = normalizeHostname(text);
    return host === text ? host : undefined;
  } catch {
    return undefined;
  }
}
