import { normalizeHostname } from "../protocol/hostname.ts";
import type { Hostname } from "../protocol/hostname.ts";

const PREFIX = "TF_TOKEN_";

/**
 * The `TF_TOKEN_` variable Terraform and OpenTofu read for `host`, or `undefined` when the
 * host has a port: a variable name cannot hold ":", and neither tool decodes one
 * (`collectCredentialsFromEnv` in internal/command/cliconfig/credentials.go only turns
 * "__" into "-" and "_" into "."). `host` is already punycode, as an env name must be ASCII.
 */
export function tokenVariableName(host: Hostname): string | undefined {
  if (host.includes(":")) return undefined;
  return PREFIX + host.replaceAll("-", "__").replaceAll(".", "_");
}

/**
 * The host a `TF_TOKEN_` variable names, decoded as Terraform does ("__" → "-", then
 * "_" → ".", then UTF-8 or punycode and any case to the comparison form), or `undefined`
 * for any other variable or a name that is no hostname (Terraform ignores those too).
 */
export function hostOfTokenVariable(name: string): Hostname | undefined {
  if (!name.startsWith(PREFIX)) return undefined;
  const raw = name.slice(PREFIX.length).replaceAll("__", "-").replaceAll("_", ".");
  try {
    return normalizeHostname(raw);
  } catch {
    return undefined;
  }
}

/** What `exec` gives its command, and the hosts it could not name in a variable. */
export interface ExecEnvironment {
  readonly env: Record<string, string>;
  /** Hosts with a token that no `TF_TOKEN_` variable can carry (they have a port). */
  readonly unnamable: Hostname[];
}

/**
 * The command's environment: `base` plus one `TF_TOKEN_` variable per token, except for
 * hosts the caller already set one for, under any spelling Terraform accepts (the
 * environment beats a helper in Terraform's own order, so the caller's choice stands).
 * With `tfe`, also `TFE_TOKEN` and `TFE_HOSTNAME` for that host (`tfe` must be in `tokens`),
 * where the caller's own `TFE_TOKEN` likewise wins.
 */
export function execEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  tokens: ReadonlyMap<Hostname, string>,
  tfe?: Hostname,
): ExecEnvironment {
  const env: Record<string, string> = {};
  const callerHosts = new Set<Hostname>();
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    env[name] = value;
    const host = hostOfTokenVariable(name);
    if (host !== undefined) callerHosts.add(host);
  }
  const unnamable: Hostname[] = [];
  for (const [host, token] of tokens) {
    if (callerHosts.has(host)) continue;
    const name = tokenVariableName(host);
    if (name === undefined) unnamable.push(host);
    else env[name] = token;
  }
  if (tfe !== undefined && base.TFE_TOKEN === undefined) {
    const token = tokens.get(tfe);
    if (token === undefined) throw new Error(`no token for ${tfe}`);
    env.TFE_TOKEN = token;
    env.TFE_HOSTNAME = tfe;
  }
  return { env, unnamable };
}
