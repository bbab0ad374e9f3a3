// Random CLI configurations for the generated referee (terraform-referee.test.ts), one layout
// per seed so that a failing seed reproduces alone. A small grammar: files (the main file,
// chosen by TF_CLI_CONFIG_FILE, TERRAFORM_CONFIG or ~/.terraformrc, and drop-ins of the config
// directory, read or not by their names) in HCL 1 native syntax or JSON, valid or broken in
// the ways HCL 1 and Terraform's decoder refuse; every form and key case of `credentials` and
// `credentials_helper`; TF_TOKEN_ variables in their encodings; helper blocks naming ours or
// another helper, whose executable is in the plugin directory or not; host spellings (case,
// ports, punycode, IDNA mappings). Each layout has its own hosts (`h0.r17.test`), so layouts
// can run side by side against one fixture server.

import { random } from "./view-layouts.ts";

/** A file of a layout, by its path relative to HOME. */
export interface RefereeFile {
  readonly path: string;
  readonly text: string;
}

/** Where the generator put a token: Terraform sending it means it took it from there. */
export type TokenPlace =
  | { readonly kind: "variable"; readonly name: string }
  | { readonly kind: "file"; readonly path: string; readonly label: string };

export interface RefereeLayout {
  readonly seed: number;
  /** The hosts the root module pulls a module from: ASCII, lowercase, no port. */
  readonly hosts: readonly string[];
  readonly files: readonly RefereeFile[];
  /** Variables besides the harness's own; `~/` at the start of a value is HOME. */
  readonly env: Readonly<Record<string, string>>;
  /** Helper names with a recording executable in the plugin directory, and where. */
  readonly plugins: ReadonlyArray<{ readonly name: string; readonly dir: string }>;
  /** Every token of the layout and where it was put. */
  readonly tokens: ReadonlyArray<{ readonly token: string; readonly place: TokenPlace }>;
}

/** The token a recording helper named `name` answers with in the layout of `seed`. */
export function helperToken(name: string, seed: number): string {
  return `helper-${name}-r${seed}.atlasv1.recorded`;
}

const DIR = ".terraform.d";
const DROP_IN_NAMES = [
  "credentials.tfrc.json",
  "a.tfrc",
  "b.tfrc.json",
  "z-team.tfrc",
  "notes.tfrc.bak",
  "C.TFRC",
  "credentials.tfrc",
] as const;
const BREAKAGES = [
  "bare-word",
  "quoted-boolean",
  "json-slash-escape",
  "nul-in-comment",
  "private-use-in-comment",
  "string-credentials",
  "two-labels",
  "nested-block",
  "unclosed",
  "string-args",
  "number-in-args",
] as const;
type Breakage = (typeof BREAKAGES)[number];

/** The layout of one seed. */
export function refereeLayout(seed: number): RefereeLayout {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => {
    const item = items[Math.floor(next() * items.length)];
    if (item === undefined) throw new Error("pick from no items");
    return item;
  };
  const chance = (p: number) => next() < p;
  const id = `r${seed}`;

  // Host names with something for each rule: a hyphen (`__` in TF_TOKEN_ names), "strasse"
  // (IDNA's transitional mapping writes ß as ss), plain ones. No IDN host: Terraform 1.11
  // refuses to discover services on one ("specified in punycode format"), so its token can
  // never be observed; labels and variables spell punycode and Unicode forms instead.
  const count = 3 + Math.floor(next() * 3);
  const stems = ["h", "strasse", "a-b", "x"];
  const hosts = Array.from({ length: count }, (_, i) => `${pick(stems)}${i}.${id}.test`);

  const tokens: Array<{ token: string; place: TokenPlace }> = [];
  const newToken = (place: TokenPlace) => {
    const token = `t${tokens.length}-${id}-${Math.floor(next() * 1e9).toString(36)}.atlasv1.x`;
    tokens.push({ token, place });
    return token;
  };

  /** The host as a label may spell it; some spellings name another host or none. */
  const spell = (host: string): string => {
    const variants = [
      host,
      host,
      host.toUpperCase(),
      host.replace(/^./, (c) => c.toUpperCase()),
      `${host}:443`,
      `${host}:0443`,
      `${host}:+443`,
      `${host.toUpperCase()}:443`,
      `${host}:8443`,
      `${host}.`,
      host.replace("strasse", "straße"),
      host.replace("strasse", "STRASSE"),
      host.replace("strasse", "xn--strae-oqa"),
      host.replace("strasse", "XN--STRAE-OQA"),
      host.replace(/^[a-z]+/, (stem) => `${stem}\u00ad`), // a soft hyphen: IDNA removes it
    ];
    return pick(variants);
  };
  /** A TF_TOKEN_ name for the host, in one of its encodings (or a wrong one). */
  const variableFor = (host: string): string => {
    let name = host.replaceAll("-", "__").replaceAll(".", "_");
    const form = pick(["plain", "plain", "upper", "mixed", "sharp-s", "hyphen", "dot"]);
    if (form === "upper") name = name.toUpperCase();
    if (form === "mixed") name = name.replace(/^./, (c) => c.toUpperCase());
    if (form === "sharp-s") name = name.replace("strasse", "straße");
    if (form === "hyphen") name = host.replaceAll(".", "_"); // `-` written as is
    if (form === "dot") name = host; // dots kept
    return `TF_TOKEN_${name}`;
  };

  const env: Record<string, string> = {};
  const files: RefereeFile[] = [];

  // The main file: TF_CLI_CONFIG_FILE, TERRAFORM_CONFIG (which only Terraform's older
  // versions and the view know of), or ~/.terraformrc.
  const mainChoice = pick(["rc", "rc", "rc", "rc", "cli-config-file", "terraform-config", "none"]);
  let mainPath: string | undefined = ".terraformrc";
  if (mainChoice === "cli-config-file") {
    mainPath = "profiles/main.tfrc";
    env.TF_CLI_CONFIG_FILE = `~/${mainPath}`;
  } else if (mainChoice === "terraform-config") {
    mainPath = "profiles/legacy.rc";
    env.TERRAFORM_CONFIG = `~/${mainPath}`;
  } else if (mainChoice === "none") mainPath = undefined;
  const paths: string[] = mainPath === undefined ? [] : [mainPath];
  // With an override, ~/.terraformrc may exist and not be read.
  if (mainChoice !== "rc" && mainChoice !== "none" && chance(0.5)) paths.push(".terraformrc");
  const dropIns = DROP_IN_NAMES.filter(() => chance(0.25));
  paths.push(...dropIns.map((name) => `${DIR}/${name}`));

  const helperNames = ["keychain", "keychain", "other"];
  const argsChoices: string[][] = [
    [],
    ["--service", `s-${id}`],
    ["--backend", "pass", "--service", "work"],
    ["a b", "c\\d"],
  ];

  for (const file of paths) {
    const json = file.endsWith(".json") ? chance(0.8) : chance(0.2);
    const items = 1 + Math.floor(next() * 3);
    const credentials: Array<{ label: string; body: Record<string, string> }> = [];
    const helpers: Array<{ name: string; args: string[] }> = [];
    for (let i = 0; i < items; i++) {
      if (chance(0.25)) {
        helpers.push({ name: pick(helperNames), args: pick(argsChoices) });
        continue;
      }
      const host = pick(hosts);
      const label = spell(host);
      const tokenKey = pick(["token", "token", "token", "token", "Token", "TOKEN", "none"]);
      const body: Record<string, string> = {};
      if (tokenKey !== "none") body[tokenKey] = newToken({ kind: "file", path: file, label });
      if (tokenKey === "none" || chance(0.2)) body.organization = "acme";
      credentials.push({ label, body });
    }
    const breakage: Breakage | undefined = chance(0.15) ? pick(BREAKAGES) : undefined;
    files.push({
      path: file,
      text: json
        ? jsonFile(credentials, helpers, breakage, pick, chance)
        : nativeFile(credentials, helpers, breakage, pick, chance),
    });
  }

  for (let i = 0, n = Math.floor(next() * 3); i < n; i++) {
    const name = variableFor(pick(hosts));
    env[name] = newToken({ kind: "variable", name });
  }

  const plugins: Array<{ name: string; dir: string }> = [];
  const pluginDir = chance(0.8) ? `${DIR}/plugins` : `${DIR}/plugins/linux_amd64`;
  if (chance(0.8)) plugins.push({ name: "keychain", dir: pluginDir });
  if (chance(0.5)) plugins.push({ name: "other", dir: pluginDir });

  return { seed, hosts, files, env, plugins, tokens };
}

type Pick = <T>(items: readonly T[]) => T;

/** An HCL 1 native-syntax file: every form of `credentials`, key case, comments. */
function nativeFile(
  credentials: ReadonlyArray<{ label: string; body: Record<string, string> }>,
  helpers: ReadonlyArray<{ name: string; args: string[] }>,
  breakage: Breakage | undefined,
  pick: Pick,
  chance: (p: number) => boolean,
): string {
  const q = (value: string) => JSON.stringify(value);
  const attrs = (body: Record<string, string>, indent: string) =>
    Object.entries(body)
      .map(([key, value]) => `${indent}${key} = ${q(value)}\n`)
      .join("");
  const parts: string[] = [];
  if (chance(0.3)) parts.push(pick(["# settings\n", "// settings\n", "/* settings */\n"]));
  if (chance(0.2)) parts.push("disable_checkpoint = true\n");
  const form = pick(["blocks", "blocks", "blocks", "assigned", "unlabelled"]);
  const keyword = () => pick(["credentials", "credentials", "credentials", "Credentials"]);
  if (form === "blocks" || credentials.length === 0) {
    for (const { label, body } of credentials) {
      parts.push(`${keyword()} ${q(label)} {\n${attrs(body, "  ")}}\n`);
    }
  } else {
    const inner = credentials
      .map(({ label, body }) =>
        form === "assigned"
          ? `  ${q(label)} = {\n${attrs(body, "    ")}  }\n`
          : `  ${q(label)} {\n${attrs(body, "    ")}  }\n`,
      )
      .join("");
    parts.push(
      form === "assigned" ? `${keyword()} = {\n${inner}}\n` : `${keyword()} {\n${inner}}\n`,
    );
  }
  for (const { name, args } of helpers) {
    const key = pick(["credentials_helper", "credentials_helper", "CREDENTIALS_HELPER"]);
    const argsKey = pick(["args", "args", "Args"]);
    parts.push(
      args.length === 0 && chance(0.5)
        ? `${key} ${q(name)} {}\n`
        : `${key} ${q(name)} {\n  ${argsKey} = [${args.map(q).join(", ")}]\n}\n`,
    );
  }
  switch (breakage) {
    case "bare-word":
      parts.push("plugin_cache_dir = yes\n");
      break;
    case "quoted-boolean":
      parts.push('disable_checkpoint = "true"\n');
      break;
    case "nul-in-comment":
      parts.push("# a NUL \u0000 here\n");
      break;
    case "private-use-in-comment":
      parts.push("# a private-use \ue123 character\n");
      break;
    case "string-credentials":
      parts.push('credentials "broken.example" = "x"\n');
      break;
    case "two-labels":
      parts.push('credentials "a.example" "b" {\n  token = "x"\n}\n');
      break;
    case "nested-block":
      parts.push('credentials "n.example" {\n  inner {\n    token = "x"\n  }\n}\n');
      break;
    case "unclosed":
      parts.push('credentials "u.example" {\n  token = "x"\n');
      break;
    case "json-slash-escape":
      parts.push('plugin_cache_dir = "a\\/b"\n');
      break;
    case "string-args":
      parts.push('credentials_helper "keychain" {\n  args = "--service"\n}\n');
      break;
    case "number-in-args":
      parts.push('credentials_helper "keychain" {\n  args = ["--service", 7]\n}\n');
      break;
    case undefined:
      break;
  }
  const text = shuffle(parts, chance).join(pick(["", "\n"]));
  return chance(0.15) ? text.replaceAll("\n", "\r\n") : text;
}

/** A JSON-syntax file: key case, objects and lists of objects, broken in JSON's own ways. */
function jsonFile(
  credentials: ReadonlyArray<{ label: string; body: Record<string, string> }>,
  helpers: ReadonlyArray<{ name: string; args: string[] }>,
  breakage: Breakage | undefined,
  pick: Pick,
  chance: (p: number) => boolean,
): string {
  const top: Record<string, unknown> = {};
  if (chance(0.2)) top.disable_checkpoint = true;
  if (credentials.length > 0) {
    const key = pick(["credentials", "credentials", "credentials", "Credentials"]);
    const entries = credentials.map(({ label, body }) => ({ [label]: body }));
    top[key] = chance(0.7)
      ? Object.assign({}, ...entries)
      : chance(0.5)
        ? entries
        : [Object.assign({}, ...entries)];
  }
  if (helpers.length > 0) {
    const key = pick(["credentials_helper", "credentials_helper", "CREDENTIALS_HELPER"]);
    const blocks = helpers.map(({ name, args }) => ({
      [name]: args.length === 0 && chance(0.5) ? {} : { [pick(["args", "args", "Args"])]: args },
    }));
    top[key] = chance(0.6) ? Object.assign({}, ...blocks) : blocks;
  }
  let text = JSON.stringify(top, null, chance(0.5) ? 2 : undefined);
  switch (breakage) {
    case "bare-word":
      text = text.replace(/^\{/, "{\n  plugin_cache_dir: yes,");
      break;
    case "quoted-boolean":
      text = text.replace(/^\{/, '{"disable_checkpoint": "true",');
      break;
    case "json-slash-escape":
      text = text.replace(/^\{/, '{"plugin_cache_dir": "a\\/b",');
      break;
    case "string-args":
      text = text.replace(/^\{/, '{"credentials_helper": {"keychain": {"args": "--service"}},');
      break;
    case "number-in-args":
      text = text.replace(
        /^\{/,
        '{"credentials_helper": {"keychain": {"args": ["--service", 7]}},',
      );
      break;
    case "string-credentials":
      text = text.replace(/^\{/, '{"credentials": {"broken.example": "x"},');
      break;
    case "unclosed":
      text = text.slice(0, -1);
      break;
    case "two-labels":
      text = text.replace(/^\{/, '{"credentials": {"a.example": {"b": {"token": "x"}}},');
      break;
    case "nested-block":
      text = text.replace(/^\{/, '{"credentials": {"n.example": {"inner": {"token": "x"}}},');
      break;
    case "nul-in-comment":
    case "private-use-in-comment":
      // JSON has no comments: a character in a string instead.
      text = text.replace(
        /^\{/,
        `{"plugin_cache_dir": "${breakage === "nul-in-comment" ? "\\u0000" : "\ue123"}",`,
      );
      break;
    case undefined:
      break;
  }
  // `{"a": 1,}` after a replace on an empty object: keep it valid unless it is meant broken.
  text = text.replace(/,\}$/, "}");
  return `${text}\n`;
}

function shuffle<T>(items: readonly T[], chance: (p: number) => boolean): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    if (chance(0.3)) [out[i], out[i - 1]] = [out[i - 1] as T, out[i] as T];
  }
  return out;
}
