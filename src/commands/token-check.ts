import { tokenOf } from "../protocol/credentials-object.ts";
import type { Deadline } from "../system/deadline.ts";
import type { Hostname } from "../protocol/hostname.ts";
import { printable } from "../system/quote.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import type { HttpsAnswer, HttpsGet } from "../system/https-get.ts";
import { certificateSources, proxyFor } from "../terraform/go-network.ts";
import {
  accountDetailsTarget,
  discoveryUrl,
  MAX_DISCOVERY_REDIRECTS,
  readAccountDetails,
  readDiscoveryAnswer,
} from "../terraform/service-discovery.ts";
import { serverCertificateRefusal } from "../terraform/go-x509.ts";
import { trustedCertificates } from "./trusted-certificates.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** How doctor may use the network for the token check. */
export interface TokenCheckOptions {
  /** `doctor --offline`: no request at all. */
  readonly offline: boolean;
  /** The deadline for every host together: the run's. */
  readonly deadline: Deadline;
  readonly get: HttpsGet;
}

/** One line of doctor's report: the shape of doctor's `Check`. */
interface Finding {
  readonly status: "ok" | "warn" | "fail";
  readonly title: string;
  readonly details: readonly string[];
  readonly fix?: string;
}

/** What the check found out about one stored token. */
type Outcome =
  | { readonly kind: "accepted"; readonly username: string | undefined }
  | { readonly kind: "rejected"; readonly status: number }
  | { readonly kind: "no-tfe" }
  | { readonly kind: "no-token" }
  | { readonly kind: "not-checked"; readonly reason: string };

/** What the check needs besides the store: where the token goes, and how it is told. */
export interface TokenCheckContext {
  readonly env: Env;
  readonly platform: NodeJS.Platform;
  /** Hosts whose token Terraform takes from elsewhere, with where from (`shadowsOf`). */
  readonly shadows: ReadonlyMap<Hostname, string>;
  /** How the report names the store: "the keychain", "pass". */
  readonly storeName: string;
  /** The command line that runs `words` in the profile the block uses. */
  readonly inProfile: (words: readonly string[]) => string;
}

/**
 * Checks each token in `store` as `terraform login` checks a new one: discovery at the host
 * (without the token), then `GET <tfe.v2>/account/details` with it, on that host only and
 * only over HTTPS. All hosts at once, by `options.deadline`; with the proxy
 * and trusted roots Terraform's Go would use. One finding per host, never the token: a
 * rejected token fails, a host that cannot be reached warns. No store: nothing to say.
 */
export async function checkStoredTokens(
  store: Promise<CredentialStore> | undefined,
  context: TokenCheckContext,
  options: TokenCheckOptions,
): Promise<Finding[]> {
  const opened = await store?.catch(() => undefined);
  // The store check has said why it could not be read.
  const hosts = await opened?.list().catch(() => undefined);
  if (opened === undefined || hosts === undefined || hosts.length === 0) return [];
  if (options.offline)
    return [{ status: "ok", title: "stored tokens not checked: --offline", details: [] }];
  const { deadline } = options;
  const signal = deadline.signal();
  const network: Network = {
    get: options.get,
    env: context.env,
    trusted: trustedCertificates(certificateSources(context.env, context.platform)),
    signal,
    failure: (error) =>
      signal.aborted ? `no answer within ${deadline.seconds} s` : (error as Error).message,
  };
  const outcomes = await Promise.all(
    hosts.map(async (host) => {
      const phase = { now: "discovery failed" };
      const outcome = (async (): Promise<Outcome> => {
        let token;
        try {
          token = tokenOf(await opened.get(host));
        } catch (error) {
          return {
            kind: "not-checked",
            reason: `reading it failed: ${(error as Error).message}`,
          };
        }
        if (token === undefined) return { kind: "no-token" };
        return checkToken(host, token, network, phase);
      })();
      // A transport that ignores the signal still ends at the deadline.
      return deadline
        .race(outcome, () => LATE)
        .catch((error: unknown) => {
          if (error !== LATE) throw error;
          return notChecked(`${phase.now}: no answer within ${deadline.seconds} s`);
        });
    }),
  );
  return hosts.map((host, index) =>
    finding(host, outcomes[index] ?? { kind: "no-token" }, context),
  );
}

/** What `deadline.race` throws when a host's check is still running at the deadline. */
const LATE = new Error("deadline");

interface Network {
  readonly get: HttpsGet;
  readonly env: Env;
  readonly trusted: readonly string[] | undefined;
  /** Aborted at the deadline. */
  readonly signal: AbortSignal;
  /** Why a request failed, in words: the deadline once it has passed. */
  readonly failure: (error?: unknown) => string;
}

async function checkToken(
  host: Hostname,
  token: string,
  network: Network,
  phase: { now: string },
): Promise<Outcome> {
  const get = async (url: URL, authorization?: string): Promise<HttpsAnswer> => {
    if (network.trusted?.length === 0)
      throw new Error(
        "TLS: no trusted certificate in SSL_CERT_FILE, SSL_CERT_DIR or the system's files",
      );
    const proxy = proxyFor(url, network.env);
    return network.get({
      url,
      signal: network.signal,
      // Go's rules for the name and the signatures, not the TLS library's.
      checkCertificate: serverCertificateRefusal,
      ...(authorization === undefined ? {} : { authorization }),
      ...(proxy === undefined ? {} : { proxy }),
      ...(network.trusted === undefined ? {} : { trusted: network.trusted }),
    });
  };
  // Discovery, without the token: the document is public (terraform login reads it before
  // it has one), so a token never goes to a host that did not answer as Terraform expects.
  let url = discoveryUrl(host);
  let services;
  try {
    for (let redirects = 0; services === undefined; redirects++) {
      const step = readDiscoveryAnswer(url, await get(url));
      if (step.kind === "failed") return notChecked(`discovery failed: ${step.reason}`);
      if (step.kind === "services") services = step.services;
      else if (redirects === MAX_DISCOVERY_REDIRECTS)
        return notChecked("discovery failed: too many redirects");
      else url = step.to;
    }
  } catch (error) {
    return notChecked(`discovery failed: ${network.failure(error)}`);
  }
  const target = accountDetailsTarget(host, services, url);
  switch (target.kind) {
    case "no-tfe":
      return { kind: "no-tfe" };
    case "other-host":
      return notChecked(
        `its tfe.v2 API is on another host, ${target.url.host}, and the token goes only to ${host}`,
      );
    case "refused":
      return notChecked(`${target.reason}: the token is not sent there`);
    case "url":
      break;
  }
  phase.now = "account/details failed";
  let answer;
  try {
    answer = await get(target.url, `Bearer ${token}`);
  } catch (error) {
    return notChecked(`account/details failed: ${network.failure(error)}`);
  }
  const verdict = readAccountDetails(answer);
  if (verdict.kind === "unexpected")
    return notChecked(`account/details answered HTTP ${verdict.status}`);
  return verdict;
}

function notChecked(reason: string): Outcome {
  return { kind: "not-checked", reason };
}

function finding(host: Hostname, outcome: Outcome, context: TokenCheckContext): Finding {
  const title = `token for ${host}: `;
  const shadow = context.shadows.get(host);
  const details =
    shadow === undefined
      ? []
      : [
          `Terraform uses ${shadow} for ${host}, not the helper: the token checked is the one in ${context.storeName}`,
        ];
  switch (outcome.kind) {
    case "accepted":
      return {
        status: "ok",
        title: `${title}accepted${outcome.username === undefined ? "" : `, account ${printable(outcome.username)}`}`,
        details,
      };
    case "rejected": {
      const login = (tool: string) => context.inProfile([tool, "login", host]);
      return {
        status: "fail",
        title: `${title}rejected by ${host} (HTTP ${outcome.status})`,
        details,
        fix: `run "${login("terraform")}" (or "${login("tofu")}") to store a new one`,
      };
    }
    case "no-tfe":
      return {
        status: "ok",
        title: `${title}not checked: the host offers no tfe.v2 API to check it with (a module or provider registry)`,
        details,
      };
    case "no-token":
      return {
        status: "ok",
        title: `${title}not checked: the stored object has no token`,
        details,
      };
    case "not-checked":
      return { status: "warn", title: `${title}not checked: ${outcome.reason}`, details };
  }
}
