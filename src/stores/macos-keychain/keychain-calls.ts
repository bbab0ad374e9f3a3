import { CliError } from "../../errors.ts";
import { abandonedBlockingCall, type Deadline } from "../../system/deadline.ts";

/**
 * Runs one call of the binding's asynchronous API, never past `deadline`: a call still
 * pending then is abandoned (its signal aborted) and a `CliError` names the likely cause, a
 * prompt that no one answers. A failure is handed to `describe`. The macOS keychain answers
 * or asks; it has no busy state worth another attempt.
 */
export async function callKeychain<T>(
  operation: (signal: AbortSignal) => Promise<T>,
  deadline: Deadline,
  describe: (error: unknown) => CliError,
): Promise<T> {
  if (deadline.remainingMs() <= 0) throw deadlineError(deadline);
  const controller = new AbortController();
  // A synchronous throw (the entry cannot be opened) is a failure like any other.
  const pending = Promise.resolve()
    .then(() => operation(controller.signal))
    .catch((error: unknown) => {
      throw describe(error);
    });
  return deadline.race(pending, () => {
    // The binding cannot interrupt a call that waits for the keychain's password or access
    // prompt: it still blocks a thread of the pool, which a normal exit would wait for.
    abandonedBlockingCall();
    controller.abort();
    return deadlineError(deadline);
  });
}

function deadlineError(deadline: Deadline): CliError {
  return new CliError(
    `the keychain did not answer within ${deadline.seconds} s: most likely it waits for a password or "Always Allow" prompt that no one answers (no one at the screen, or an SSH session); answer it, or unlock the keychain with "security unlock-keychain", and try again (--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT sets the limit)`,
  );
}
