import { CliError } from "../../errors.ts";
import type { CallLimits } from "../call-limits.ts";

/**
 * Runs one call of the binding's asynchronous API, never past `limits.deadline`: a call
 * still pending then is abandoned (its signal aborted) and a `CliError` names the likely
 * cause, a prompt that no one answers. A failure is handed to `describe`. The macOS
 * keychain answers or asks; it has no busy state worth another attempt.
 */
export async function callKeychain<T>(
  operation: (signal: AbortSignal) => Promise<T>,
  limits: CallLimits,
  describe: (error: unknown) => CliError,
): Promise<T> {
  const remaining = limits.deadline - limits.now();
  if (remaining <= 0) throw deadlineError(limits);
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<typeof EXPIRED>((resolve) => {
    timer = setTimeout(() => resolve(EXPIRED), remaining);
  });
  let outcome: T | typeof EXPIRED;
  try {
    outcome = await Promise.race([operation(controller.signal), expired]);
  } catch (error) {
    throw describe(error);
  } finally {
    clearTimeout(timer);
  }
  if (outcome === EXPIRED) {
    abandoned++;
    controller.abort();
    throw deadlineError(limits);
  }
  return outcome;
}

const EXPIRED = Symbol("expired");

// Module state on purpose: main.ts must learn, at the very end, whether a native call is
// still blocked in a thread of the pool, without every layer passing it along.
let abandoned = 0;

/**
 * True when a call was abandoned at its deadline and may still block a thread: the binding
 * cannot interrupt a call that waits for the keychain's password or access prompt, and
 * Node's exit joins the thread pool, so a normal exit would wait for it, possibly for ever.
 */
export function hasAbandonedCalls(): boolean {
  return abandoned > 0;
}

function deadlineError(limits: CallLimits): CliError {
  return new CliError(
    `the keychain did not answer within ${limits.timeoutSeconds} s: most likely it waits for a password or "Always Allow" prompt that no one answers (no one at the screen, or an SSH session); answer it, or unlock the keychain with "security unlock-keychain", and try again (--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT sets the limit)`,
  );
}
