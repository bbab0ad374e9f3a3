import { fixFor, renderFix } from "../../fixes.ts";
import { CliError } from "../../errors.ts";
import { errorText } from "../../quote.ts";

/** The deadline a call gets unless `--timeout` or TF_CREDENTIALS_KEYCHAIN_TIMEOUT says otherwise. */
export { DEFAULT_TIMEOUT_SECONDS } from "../../cli/options.ts";

/** When a run of keychain calls must give up, and how it waits between attempts. */
export interface CallLimits {
  /** Absolute time (in `now()`'s milliseconds) after which no call is started or awaited. */
  readonly deadline: number;
  /** The seconds the deadline was set from, for the message. */
  readonly timeoutSeconds: number;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** Limits that start now, on the real clock. */
export function callLimits(timeoutSeconds: number): CallLimits {
  return {
    deadline: performance.now() + timeoutSeconds * 1000,
    timeoutSeconds,
    now: () => performance.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}

/**
 * True for a failure that a later attempt can get past: the binding gives each D-Bus call a
 * fixed 2-second timeout, which a busy gnome-keyring (a hundred helpers at once, as
 * `terragrunt run-all` starts them) misses; the bus or the daemon may also say it is busy
 * or out of connections for a moment. A missing bus or service, or a locked keyring, is not.
 */
export function isTransient(detail: string): boolean {
  return /Did not receive a reply|NoReply|timed? ?out|Timeout|busy|LimitsExceeded|resource temporarily unavailable|EAGAIN/i.test(
    detail,
  );
}

/**
 * Runs `operation` until it succeeds, retrying transient failures with exponential backoff
 * and jitter, and never past `limits.deadline`: an attempt still pending then is abandoned
 * (its signal aborted) and a `CliError` names the likely cause. Any other failure is
 * handed to `describe` at once.
 */
export async function callKeychain<T>(
  operation: (signal: AbortSignal) => Promise<T>,
  limits: CallLimits,
  describe: (error: unknown) => CliError,
): Promise<T> {
  let lastTransient: unknown;
  for (let attempt = 0; ; attempt++) {
    const remaining = limits.deadline - limits.now();
    if (remaining <= 0) throw deadlineError(limits, lastTransient);
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<typeof EXPIRED>((resolve) => {
      timer = setTimeout(() => resolve(EXPIRED), remaining);
    });
    let outcome: T | typeof EXPIRED;
    try {
      outcome = await Promise.race([operation(controller.signal), expired]);
    } catch (error) {
      if (!isTransient(errorText(error))) throw describe(error);
      lastTransient = error;
      // 50, 100, 200, ... ms up to 1 s, each with up to half again of jitter so that
      // helpers started together do not come back together.
      const backoff = Math.min(1000, 50 * 2 ** attempt) * (1 + Math.random() / 2);
      await limits.sleep(Math.max(0, Math.min(backoff, limits.deadline - limits.now())));
      continue;
    } finally {
      clearTimeout(timer);
    }
    if (outcome === EXPIRED) {
      abandoned++;
      controller.abort();
      throw deadlineError(limits, lastTransient);
    }
    return outcome;
  }
}

const EXPIRED = Symbol("expired");

// Module state on purpose: main.ts must learn, at the very end, whether a native call is
// still blocked in a thread of the pool, without every layer passing it along.
let abandoned = 0;

/**
 * True when a call was abandoned at its deadline and may still block a thread: the binding
 * cannot interrupt a D-Bus call that waits for an unlock prompt, and Node's exit joins the
 * thread pool, so a normal exit would wait for it, possibly for ever.
 */
export function hasAbandonedCalls(): boolean {
  return abandoned > 0;
}

function deadlineError(limits: CallLimits, lastTransient: unknown): CliError {
  const seconds = `${limits.timeoutSeconds} s`;
  const raise = `(--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT sets the limit)`;
  if (lastTransient !== undefined) {
    return new CliError(
      `the keychain did not answer within ${seconds}: the Secret Service is overloaded or hung (${errorText(lastTransient)}); try again, or restart it (for example "gnome-keyring-daemon --replace") ${raise}`,
      undefined,
      { cause: lastTransient },
    );
  }
  return new CliError(
    `the keychain did not answer within ${seconds}: most likely the keyring is locked and waits for an unlock prompt that no one can answer (no desktop session), or the Secret Service hangs; ${renderFix(fixFor("keyring-locked"))}, or ${fixFor("keyring-on-desktop").effect}; then try again ${raise}`,
  );
}
