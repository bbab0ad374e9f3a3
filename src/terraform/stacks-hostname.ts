/**
 * Terraform 1.16's `terraform stacks` takes its host from TF_STACKS_HOSTNAME, else
 * TF_CLOUD_HOSTNAME, else the hosts of credentials.tfrc.json, else app.terraform.io
 * (hashicorp/terraform#38896): a token only the helper holds does not tell it the host.
 */
export const DEFAULT_STACKS_HOST = "app.terraform.io";

/**
 * The line to tell a person whose `terraform stacks` would now fall back to
 * app.terraform.io instead of `host`; `undefined` when `host` is that default or a variable
 * already names the host.
 */
export function stacksHostnameNote(
  host: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const set = (name: string) => (env[name] ?? "") !== "";
  if (host === DEFAULT_STACKS_HOST || set("TF_STACKS_HOSTNAME") || set("TF_CLOUD_HOSTNAME")) {
    return undefined;
  }
  return `terraform stacks (Terraform 1.16+) finds its host only in credentials.tfrc.json or a variable: set TF_STACKS_HOSTNAME=${host} where you run it, or it uses ${DEFAULT_STACKS_HOST}`;
}
