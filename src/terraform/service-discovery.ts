import type { Hostname } from "../protocol/hostname.ts";
import { quote } from "../system/quote.ts";
import type { HttpsAnswer } from "../system/https-get.ts";

/**
 * Remote service discovery as Terraform and OpenTofu read it (terraform-svchost `disco`),
 * and the check `terraform login` makes of a token: values in, values out, no I/O.
 */

/** The fixed path of the discovery document on every host. */
const DISCOVERY_PATH = "/.well-known/terraform.json";

/** How many redirects discovery follows: svchost's `maxRedirects`. */
export const MAX_DISCOVERY_REDIRECTS = 3;

/** The service `terraform login` checks a pasted token against. */
const TFE_SERVICE = "tfe.v2";

/** `https://HOST/.well-known/terraform.json`; a port the host carries stays in it. */
export function discoveryUrl(host: Hostname): URL {
  return new URL(`https://${host}${DISCOVERY_PATH}`);
}

/** What one discovery response means: go on at another URL, the services, or a failure. */
type DiscoveryStep =
  | { readonly kind: "redirect"; readonly to: URL }
  | { readonly kind: "services"; readonly services: Readonly<Record<string, unknown>> }
  | { readonly kind: "failed"; readonly reason: string };

/**
 * Reads the answer to a discovery request at `url`. What the server sent appears in a reason
 * only through `quote()`. A 404 means the host offers no services
 * (svchost returns an empty host, not an error); any other status but 200, a media type
 * other than application/json or a body that is no JSON object is a failure. A redirect
 * must stay on HTTPS: the token check never follows one elsewhere.
 */
export function readDiscoveryAnswer(url: URL, answer: HttpsAnswer): DiscoveryStep {
  const { status } = answer;
  if ([301, 302, 303, 307, 308].includes(status)) {
    if (answer.location === undefined)
      return { kind: "failed", reason: `HTTP ${status} without a Location` };
    let to: URL;
    try {
      to = new URL(answer.location, url);
    } catch {
      return { kind: "failed", reason: `HTTP ${status} to an invalid URL` };
    }
    if (to.protocol !== "https:")
      return { kind: "failed", reason: `redirected to ${to.protocol} (only HTTPS is used)` };
    return { kind: "redirect", to };
  }
  if (status === 404) return { kind: "services", services: {} };
  if (status !== 200) return { kind: "failed", reason: `HTTP ${status}` };
  // mime.ParseMediaType: parameters such as "; charset=utf-8" are allowed, case is not kept.
  const mediaType = (answer.contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json")
    return {
      kind: "failed",
      reason: `the document's Content-Type is ${quote(answer.contentType ?? "")}, not application/json`,
    };
  let document: unknown;
  try {
    document = JSON.parse(answer.body);
  } catch {
    return { kind: "failed", reason: "the document is not JSON" };
  }
  if (typeof document !== "object" || document === null || Array.isArray(document))
    return { kind: "failed", reason: "the document is not a JSON object" };
  return { kind: "services", services: document as Record<string, unknown> };
}

/** Where `account/details` is, or why the token is not sent there. */
type AccountDetailsTarget =
  | { readonly kind: "url"; readonly url: URL }
  | { readonly kind: "no-tfe" }
  | { readonly kind: "other-host"; readonly url: URL }
  | { readonly kind: "refused"; readonly reason: string };

/**
 * The `account/details` URL of the `tfe.v2` service in `services`, discovered at `finalUrl`
 * (after redirects) for `host`. As svchost does: a relative URL resolves against the
 * discovery URL and gets a trailing slash (go-tfe's base path). A token goes only to the host
 * it was stored for, over HTTPS, without user information in the URL: anything else is
 * refused here, before a request exists.
 */
export function accountDetailsTarget(
  host: Hostname,
  services: Readonly<Record<string, unknown>>,
  finalUrl: URL,
): AccountDetailsTarget {
  const value = services[TFE_SERVICE];
  if (typeof value !== "string") return { kind: "no-tfe" };
  let base: URL;
  try {
    base = new URL(value, finalUrl);
  } catch {
    return { kind: "refused", reason: `its ${TFE_SERVICE} URL is invalid` };
  }
  if (base.protocol !== "https:")
    return { kind: "refused", reason: `its ${TFE_SERVICE} URL is not HTTPS` };
  if (base.username !== "" || base.password !== "")
    return { kind: "refused", reason: `its ${TFE_SERVICE} URL carries user information` };
  // URL.host is lowercase punycode without the default port, as a Hostname is.
  if (base.host !== host) return { kind: "other-host", url: base };
  base.hash = "";
  base.search = "";
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  return { kind: "url", url: new URL("account/details", base) };
}

/** What `GET account/details` with the token says about it. */
type TokenVerdict =
  | { readonly kind: "accepted"; readonly username: string | undefined }
  | { readonly kind: "rejected"; readonly status: number }
  | { readonly kind: "unexpected"; readonly status: number };

/**
 * Reads the answer of `account/details`: 200 is an accepted token, with the JSON:API user's
 * `username` when the body has one; 401 and 403 are a rejected one; anything else says
 * nothing about the token.
 */
export function readAccountDetails(answer: HttpsAnswer): TokenVerdict {
  if (answer.status === 401 || answer.status === 403)
    return { kind: "rejected", status: answer.status };
  if (answer.status !== 200) return { kind: "unexpected", status: answer.status };
  let username: unknown;
  try {
    const document = JSON.parse(answer.body) as {
      data?: { attributes?: { username?: unknown } };
    } | null;
    username = document?.data?.attributes?.username;
  } catch {
    username = undefined;
  }
  return { kind: "accepted", username: typeof username === "string" ? username : undefined };
}
