/**
 * Terraform 1.16's `terraform stacks` takes its host from TF_STACKS_HOSTNAME, else
 * TF_CLOUD_HOSTNAME, else the hosts of credentials.tfrc.json, else app.terraform.io
 * (hashicorp/terraform#38896): a token only the helper holds does not tell it the host.
 */
const DEFAULT_STACKS_HOST = "app.terraform.io";

/**
 * The line to tell a person whose `terraform stacks` would now fall back to
 * app.terraform.io instead of one of `hosts`: each host that needs it named once, in the
 * order given; `undefined` when none does (only the default host, or a variable already
 * names the host).
 */
export function stacksHostnameNote(
  hosts: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const set = (name: string) => (env[name] ?? "") !== "";
  if (set("TF_STACKS_HOSTNAME") || set("TF_CLOUD_HOSTNAME")) return undefined;
  const named = [...new Set(hosts)].filter((host) => host !== DEFAULT_STACKS_HOST);
  if (named.length === 0) return undefined;
  // The variable holds one host: with several, each is offered as a whole assignment.
  const which =
    named.length === 1
      ? `set TF_STACKS_HOSTNAME=${named[0] ?? ""} where you run it`
      : `set the host your stacks are on where you run it, one of ${named.map((host) => `TF_STACKS_HOSTNAME=${host}`).join(" or ")}`;
  return `terraform stacks (Terraform 1.16+) finds its host only in credentials.tfrc.json or a variable: ${which}, or it uses ${DEFAULT_STACKS_HOST}`;
}
