import { hostnameForComparison, hostnameForDisplay } from "../protocol/hostname.ts";
import type { Hostname } from "../protocol/hostname.ts";

const PREFIX = "TF_TOKEN_";

/**
 * The `TF_TOKEN_` variable Terraform and OpenTofu read for `host`, encoded as their
 * `collectCredentialsFromEnv` (internal/command/cliconfig/credentials.go) decodes it: "-" as
 * "__", "." as "_" (`host` is already punycode). A port keeps its literal ":": both tools map
 * only underscores, then parse the rest as a hostname, so `TF_TOKEN_localhost:8443` is read
 * for `localhost:8443`. No shell can set such a name, but a child's environment can hold it.
 */
export function tokenVariableName(host: Hostname): string {
  return PREFIX + host.replaceAll("-", "__").replaceAll(".", "_");
}

/**
 * The host a `TF_TOKEN_` variable names, decoded as Terraform's `collectCredentialsFromEnv`
 * does: "__" → "-", then "_" → ".", then svchost `ForDisplay` (IDNA with transitional
 * mapping: `TF_TOKEN_straße_de` names strasse.de, and punycode is read) and `ForComparison`.
 * `undefined` for any other variable or a name that is no hostname (Terraform ignores those).
 */
export function hostOfTokenVariable(name: string): Hostname | undefined {
  if (!name.startsWith(PREFIX)) return undefined;
  const raw = name.slice(PREFIX.length).replaceAll("__", "-").replaceAll("_", ".");
  try {
    return hostnameForComparison(hostnameForDisplay(raw));
  } catch {
    return undefined;
  }
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
): Record<string, string> {
  const env: Record<string, string> = {};
  const callerHosts = new Set<Hostname>();
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    env[name] = value;
    const host = hostOfTokenVariable(name);
    if (host !== undefined) callerHosts.add(host);
  }
  for (const [host, token] of tokens) {
    if (!callerHosts.has(host)) env[tokenVariableName(host)] = token;
  }
  if (tfe !== undefined && base.TFE_TOKEN === undefined) {
    const token = tokens.get(tfe);
    if (token === undefined) throw new Error(`no token for ${tfe}`);
    env.TFE_TOKEN = token;
    env.TFE_HOSTNAME = tfe;
  }
  return env;
}
