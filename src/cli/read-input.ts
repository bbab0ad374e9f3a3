import { CliError } from "../errors.ts";

/**
 * Reads `input` to EOF and returns it as text. The protocol requires a helper to drain stdin
 * even when it refuses what it got, so that Terraform's write never fails on a closed pipe:
 * past `maxBytes` the rest is read and dropped rather than buffered, then refused.
 * Invalid UTF-8 is refused instead of being replaced, so nothing is stored altered.
 */
export async function readInput(
  input: AsyncIterable<Uint8Array>,
  maxBytes: number,
  source: string,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of input) {
    total += chunk.byteLength;
    if (total <= maxBytes) chunks.push(chunk);
  }
  if (total > maxBytes) {
    throw new CliError(
      `${source} is larger than ${maxBytes} bytes, where a credentials object takes a few hundred: nothing was stored.`,
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Buffer.concat(chunks),
    );
  } catch {
    throw new CliError(`${source} is not valid UTF-8 text: expected a JSON object`);
  }
}
