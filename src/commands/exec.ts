import { constants } from "node:os";
import { tokenOf } from "../protocol/credentials-object.ts";
import { CliError, ExitCode } from "../errors.ts";
import type { Hostname } from "../protocol/hostname.ts";
import { quote } from "../system/quote.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import { execEnvironment } from "../terraform/token-variables.ts";
import type { CommandOutcome } from "../system/run-command.ts";

/** Runs a command with our standard streams and `env`; supplied by main.ts. */
export type CommandRunner = (
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
) => Promise<CommandOutcome>;

/** Exit codes a shell uses for a command it could not run. */
const NOT_EXECUTABLE = 126;
const NOT_FOUND = 127;

/** How `exec` ended: the exit code it leaves with, and the line to say when its command could not run. */
interface ExecResult {
  readonly code: number;
  readonly message?: string;
}

/**
 * `exec`: reads the tokens (of `hosts` and `tfe` when given, else of every stored host),
 * builds the command's environment and runs it. The store is opened only once the command
 * is known to be there. Its exit code is the command's, or a
 * shell's for a command that could not run. `unusable` hears at once of a stored host
 * left out (see storedTokens), before the command runs.
 */
export async function exec(
  env: Readonly<Record<string, string | undefined>>,
  openStore: () => CredentialStore | Promise<CredentialStore>,
  { hosts, tfe }: { readonly hosts: readonly Hostname[]; readonly tfe: Hostname | undefined },
  [command, ...args]: readonly string[],
  runCommand: CommandRunner,
  unusable: (host: Hostname) => void,
): Promise<ExecResult> {
  if (command === undefined || command === "") {
    throw new CliError('exec: the command after "--" is empty', ExitCode.Usage);
  }
  const only: Hostname[] | undefined =
    hosts.length > 0 ? [...new Set([...hosts, ...(tfe === undefined ? [] : [tfe])])] : undefined;
  const tokens = await storedTokens(await openStore(), only, unusable);
  if (tfe !== undefined && !tokens.has(tfe)) {
    throw noTokenStored(tfe);
  }
  const outcome = await runCommand(command, args, execEnvironment(env, tokens, tfe));
  switch (outcome.kind) {
    case "exited":
      return { code: outcome.code };
    case "signalled":
      // The shell's convention for a command killed by a signal: 128 plus its number.
      return { code: 128 + constants.signals[outcome.signal] };
    case "not-found":
      return { code: NOT_FOUND, message: `exec: command not found: ${quote(command)}` };
    case "not-executable":
      return { code: NOT_EXECUTABLE, message: `exec: permission denied: ${quote(command)}` };
    case "too-big":
      return {
        code: NOT_EXECUTABLE,
        message: `exec: could not start ${quote(command)}: its arguments and environment are larger than the system allows (E2BIG); pass fewer tokens with --host`,
      };
    case "not-started":
      return {
        code: NOT_EXECUTABLE,
        message: `exec: could not start ${quote(command)} (${outcome.code})`,
      };
  }
}

/**
 * The token of every stored host whose object has a string `token`, or of `only` those
 * hosts when given (each must have one). Entries that are not JSON objects with a token
 * are left out: they are not for `TF_TOKEN_` variables. So is a token with a NUL character,
 * which no environment variable can carry (the runtime's refusal would quote it): `unusable`
 * hears of its host, and a host asked for by name is an error. `store` keeps such an object
 * as it came, as the protocol asks; only `exec` cannot pass it on. Reads the store, never
 * writes it.
 */
export async function storedTokens(
  store: CredentialStore,
  only?: readonly Hostname[],
  unusable: (host: Hostname) => void = () => {},
): Promise<Map<Hostname, string>> {
  const hosts = only ?? (await store.list());
  const tokens = new Map<Hostname, string>();
  for (const host of hosts) {
    const token = tokenOf(await store.get(host));
    if (token?.includes("\0")) {
      if (only !== undefined) throw new CliError(nulMessage(host));
      unusable(host);
    } else if (token !== undefined) {
      tokens.set(host, token);
    } else if (only !== undefined) {
      throw noTokenStored(host);
    }
  }
  return tokens;
}

/** One line about a host whose token holds a NUL character; never the token. */
export function nulMessage(host: Hostname): string {
  return `the token stored for ${host} holds a NUL character, which no environment variable can carry; run "terraform login ${host}" again`;
}

function noTokenStored(host: Hostname): CliError {
  return new CliError(`no token stored for ${host}`, undefined, {
    fix: { situation: "no-token-stored", values: { HOST: host } },
  });
}
