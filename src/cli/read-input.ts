import { CliError } from "../errors.ts";
import type { Deadline } from "../system/deadline.ts";

export interface InputLimits {
  /** Past this many bytes, what comes is read and dropped: a credentials object takes a few hundred. */
  readonly maxBytes: number;
  /** When the input must have ended: the call's deadline. */
  readonly deadline: Deadline;
  /** What the input is, for messages. */
  readonly source: string;
}

/**
 * Reads `input` to EOF and returns it as text. The protocol asks a helper to "fully read its
 * stdin until EOF" even when it refuses what it got, so that Terraform's write never fails on
 * a closed pipe: past `maxBytes` the rest is still read, and dropped, and the input refused
 * at EOF. Only the deadline ends a pipe that never closes (or never stops): then the input
 * is refused at once.
 * Invalid UTF-8 is refused instead of being replaced, so nothing is stored altered. One
 * leading UTF-8 byte order mark, which some Windows tools write, is dropped: it is not part
 * of the object, and the JSON checks that follow would refuse it.
 */
export async function readInput(
  input: AsyncIterable<Uint8Array>,
  limits: InputLimits,
): Promise<string> {
  const { maxBytes, source } = limits;
  const chunks: Uint8Array[] = [];
  const outcome = await consume(input, limits, (chunk) => chunks.push(chunk));
  if (outcome === "too large") {
    throw new CliError(
      `${source} is larger than ${maxBytes} bytes, where a credentials object takes a few hundred: nothing was stored`,
    );
  }
  if (outcome === "timed out") throw new CliError(timedOutMessage(limits));
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Buffer.concat(chunks),
    );
  } catch {
    throw new CliError(`${source} is not valid UTF-8 text: expected a JSON object`);
  }
}

/** What an input that did not end by the deadline is refused with. */
export function timedOutMessage(limits: InputLimits): string {
  return `${limits.source} did not end within ${limits.deadline.seconds} s (Terraform closes it after the object): nothing was stored`;
}

/**
 * Reads what is left of a store's input after the call failed before reading it (a bad
 * hostname or option) to EOF, within the same deadline, and drops it.
 */
export async function drainInput(
  input: AsyncIterable<Uint8Array>,
  limits: InputLimits,
): Promise<void> {
  await consume(input, limits, () => undefined);
}

type Outcome = "ended" | "too large" | "timed out";

/** What the deadline's race throws when the input has not ended by then. */
const TIMED_OUT = new Error("timed out");

async function consume(
  input: AsyncIterable<Uint8Array>,
  limits: InputLimits,
  keep: (chunk: Uint8Array) => void,
): Promise<Outcome> {
  const iterator = input[Symbol.asyncIterator]();
  let total = 0;
  try {
    for (;;) {
      const next = await limits.deadline.race(iterator.next(), () => TIMED_OUT);
      if (next.done === true) return total > limits.maxBytes ? "too large" : "ended";
      total += next.value.byteLength;
      // Past the cap, read on and drop: stopping would break the writer's pipe.
      if (total <= limits.maxBytes) keep(next.value);
    }
  } catch (error) {
    if (error === TIMED_OUT) return "timed out";
    throw error;
  } finally {
    // Stops a stream at once; a read still pending is abandoned with the process.
    void iterator.return?.().catch(() => undefined);
  }
}
