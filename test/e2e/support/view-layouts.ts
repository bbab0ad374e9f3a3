// Layouts of CLI config files, credentials.tfrc.json, drop-ins and variables, generated from a
// fixed seed, for the suite that asks the real `terraform` which token it sends. Each layout
// has its own hosts (`h0.l07.test`), so that layouts can run side by side against one fixture.

import { tmpdir } from "node:os";
import path from "node:path";

/** A file of a layout, by its path relative to HOME. */
export interface LayoutFile {
  readonly path: string;
  readonly text: string;
  /** Another name for the same file, relative to HOME: a hard link or a symlink to `path`. */
  readonly alias?: { readonly kind: "hard" | "symlink"; readonly path: string };
}

export interface Layout {
  readonly name: string;
  readonly family: string;
  /** The hosts the root module pulls a module from, in comparison form. */
  readonly hosts: readonly string[];
  readonly files: readonly LayoutFile[];
  /** Variables besides the harness's own; `~/` at the start of a value is HOME. */
  readonly env: Readonly<Record<string, string>>;
  /** Tokens stored in the helper's store before anything runs: service → host → token. */
  readonly stored: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Every token the layout holds anywhere, to tell which one Terraform sent. */
  readonly tokens: readonly string[];
}

/** The families, each a generator of one layout. */
export const FAMILIES = [
  "two-sources",
  "three-sources",
  "tokenless",
  "drop-in-helper",
  "tf-cli-config-file",
  "terraform-config",
  "token-variables",
  "case-and-port",
  "crlf-and-comments",
  "hard-link",
  "symlink",
  "token-spelling",
] as const;

type Family = (typeof FAMILIES)[number];

/** mulberry32: a small PRNG, so that a seed gives the same layouts everywhere. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` layouts per family, from `seed`. */
export function generateLayouts(seed: number, count: number): Layout[] {
  const next = random(seed);
  const layouts: Layout[] = [];
  for (let round = 0; round < count; round++) {
    for (const family of FAMILIES) {
      layouts.push(layout(family, layouts.length, next));
    }
  }
  return layouts;
}

const RC = ".terraformrc";
const DIR = ".terraform.d";
const CREDENTIALS_JSON = `${DIR}/credentials.tfrc.json`;

function layout(family: Family, index: number, next: () => number): Layout {
  const id = `l${String(index).padStart(2, "0")}`;
  const host = (n: number) => `h${n}.${id}.test`;
  const tokens: string[] = [];
  const token = () => {
    const value = `${id}-${tokens.length}-${Math.floor(next() * 1e12).toString(36)}.atlasv1.${Math.floor(next() * 1e12).toString(36)}`;
    tokens.push(value);
    return value;
  };
  const chance = (p: number) => next() < p;
  const service = `view-${id}`;
  const helper = (name = service) =>
    `credentials_helper "keychain" {\n  args = ["--backend", "pass", "--service", "${name}"]\n}\n`;
  const block = (label: string, body: string) => `credentials "${label}" {\n  ${body}\n}\n`;
  const tokenBlock = (label: string, value: string) => block(label, `token = "${value}"`);
  const json = (entries: Record<string, Record<string, string>>) =>
    `${JSON.stringify({ credentials: entries }, null, 2)}\n`;
  // Any family may get CRLF line breaks or comments in ~/.terraformrc.
  const crlf = family === "crlf-and-comments" || chance(0.2);
  const comments = family === "crlf-and-comments" || chance(0.3);
  const rc = (...parts: string[]) => {
    let text = comments
      ? parts.map((part, i) => `# part ${i}\n${part}// end of part ${i}\n`).join("\n") +
        "/* a closing\n   comment */\n"
      : parts.join("\n");
    if (crlf) text = text.replaceAll("\n", "\r\n");
    return text;
  };
  const files: LayoutFile[] = [];
  const env: Record<string, string> = {};
  const stored: Record<string, Record<string, string>> = {};
  let hosts: string[] = [];

  switch (family) {
    case "two-sources": {
      hosts = [host(0), host(1)];
      const same = chance(0.3);
      const dropInToken = token();
      files.push(
        { path: RC, text: rc(helper(), tokenBlock(host(0), token())) },
        {
          path: CREDENTIALS_JSON,
          text: json({ [host(0)]: { token: token() }, [host(1)]: { token: dropInToken } }),
        },
        { path: `${DIR}/team.tfrc`, text: tokenBlock(host(1), same ? dropInToken : token()) },
      );
      break;
    }
    case "three-sources": {
      hosts = [host(0), host(1), host(2)];
      files.push(
        { path: RC, text: rc(helper(), tokenBlock(host(0), token())) },
        { path: `${DIR}/a-team.tfrc`, text: tokenBlock(host(0), token()) },
        {
          path: CREDENTIALS_JSON,
          text: json({ [host(0)]: { token: token() }, [host(1)]: { token: token() } }),
        },
      );
      stored[service] = { [host(2)]: token() };
      if (chance(0.5)) stored[service][host(1)] = token();
      break;
    }
    case "tokenless": {
      hosts = [host(0), host(1), host(2)];
      const inSameFile = block(host(0), 'organization = "acme"');
      files.push(
        {
          path: RC,
          text: rc(
            helper(),
            chance(0.5)
              ? inSameFile + tokenBlock(host(0), token())
              : tokenBlock(host(0), token()) + inSameFile,
            tokenBlock(host(1), token()),
          ),
        },
        {
          path: `${DIR}/org.tfrc`,
          text: block(host(1), 'organization = "acme"') + block(host(2), 'organization = "acme"'),
        },
      );
      stored[service] = { [host(2)]: token() };
      break;
    }
    case "drop-in-helper": {
      hosts = [host(0), host(1), host(2)];
      const other = `${service}-other`;
      files.push(
        { path: RC, text: rc(...(chance(0.5) ? [helper()] : []), tokenBlock(host(1), token())) },
        { path: `${DIR}/helper.tfrc`, text: helper(other) },
        { path: CREDENTIALS_JSON, text: json({ [host(0)]: { token: token() } }) },
      );
      stored[other] = { [host(2)]: token() };
      stored[service] = { [host(2)]: token() };
      break;
    }
    case "tf-cli-config-file":
    case "terraform-config": {
      hosts = [host(0), host(1), host(2)];
      const variable = family === "tf-cli-config-file" ? "TF_CLI_CONFIG_FILE" : "TERRAFORM_CONFIG";
      const profile = `${service}-profile`;
      env[variable] = "~/profile.tfrc";
      files.push(
        { path: "profile.tfrc", text: rc(helper(profile), tokenBlock(host(0), token())) },
        { path: RC, text: rc(helper(), tokenBlock(host(1), token())) },
        {
          path: CREDENTIALS_JSON,
          text: json({ [host(0)]: { token: token() }, [host(2)]: { token: token() } }),
        },
        { path: `${DIR}/team.tfrc`, text: tokenBlock(host(1), token()) },
      );
      stored[profile] = chance(0.5) ? { [host(1)]: token() } : {};
      break;
    }
    case "token-variables": {
      hosts = [host(0), host(1), host(2)];
      env[`TF_TOKEN_${host(0).replaceAll(".", "_")}`] = token();
      env[`TF_TOKEN_${host(2).toUpperCase().replaceAll(".", "_")}`] = token();
      files.push(
        { path: RC, text: rc(helper(), tokenBlock(host(1), token())) },
        {
          path: CREDENTIALS_JSON,
          text: json({ [host(0)]: { token: token() }, [host(1)]: { token: token() } }),
        },
      );
      break;
    }
    case "case-and-port": {
      hosts = [host(0), host(1), host(2)];
      const shared = token();
      files.push(
        {
          path: RC,
          text: rc(
            helper(),
            tokenBlock(host(0).toUpperCase(), shared),
            tokenBlock(`${host(1)}:443`, token()),
          ),
        },
        {
          path: CREDENTIALS_JSON,
          text: json({
            [`${host(0)}:443`]: { token: chance(0.5) ? shared : token() },
            [host(2).replace("h2", "H2")]: { token: token() },
          }),
        },
      );
      break;
    }
    case "crlf-and-comments": {
      hosts = [host(0), host(1)];
      files.push({
        path: RC,
        text: rc(
          helper(),
          tokenBlock(host(0), token()),
          `/* credentials "${host(1)}" { token = "x" } */\n`,
          tokenBlock(host(1), token()),
        ),
      });
      break;
    }
    case "hard-link":
    case "symlink": {
      hosts = [host(0), host(1)];
      const kind = family === "hard-link" ? "hard" : "symlink";
      files.push({
        path: "dotfiles/terraformrc",
        text: rc(helper(), tokenBlock(host(0), token())),
        alias: { kind, path: RC },
      });
      files.push(
        chance(0.5)
          ? {
              path: "dotfiles/credentials.tfrc.json",
              text: json({ [host(1)]: { token: token() } }),
              alias: { kind, path: CREDENTIALS_JSON },
            }
          : { path: CREDENTIALS_JSON, text: json({ [host(1)]: { token: token() } }) },
      );
      break;
    }
    case "token-spelling": {
      hosts = [host(0), host(1), host(2)];
      files.push(
        {
          path: RC,
          text: rc(
            helper(),
            block(host(0), `${chance(0.5) ? "TOKEN" : "Token"} = "${token()}"`),
            tokenBlock(host(2), token()),
          ),
        },
        { path: CREDENTIALS_JSON, text: json({ [host(1)]: { token: token() } }) },
        { path: `${DIR}/team.tfrc`, text: block(host(1), `TOKEN = "${token()}"`) },
      );
      break;
    }
  }
  return { name: `${id} ${family}`, family, hosts, files, env, stored, tokens };
}

/**
 * The environment terraform and the helper run with for a layout built in `home`: XDG and
 * temp directories under it or the machine's, no checkpoint, the fixture's CA, its proxy,
 * and the layout's own variables (`~/` in a value is `home`).
 */
export function layoutEnv(
  home: string,
  proxyUrl: string,
  caFile: string,
  variables: Readonly<Record<string, string>>,
): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_DATA_DIRS: path.join(home, ".local", "share"),
    TMPDIR: tmpdir(),
    TF_IN_AUTOMATION: "1",
    CHECKPOINT_DISABLE: "1",
    HTTPS_PROXY: proxyUrl,
    HTTP_PROXY: proxyUrl,
    SSL_CERT_FILE: caFile,
    ...Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [name, value.replace(/^~\//, `${home}/`)]),
    ),
  };
}
