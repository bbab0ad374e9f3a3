import { CliError, ExitCode } from "../errors.ts";
import type { CredentialStore } from "../protocol/credential-store.ts";
import { quote } from "../system/quote.ts";
import { deadlineIn, timeoutSeconds, type Deadline } from "../system/deadline.ts";
import type { Io, Machine } from "../system/io.ts";
import { credentialManagerStore } from "./credential-manager/description.ts";
import { macosKeychainStore } from "./macos-keychain/description.ts";
import { passStore } from "./pass/description.ts";
import { secretServiceStore } from "./secret-service/description.ts";
import { wincredStore } from "./wincred/description.ts";
import type { StoreDescription } from "./store-description.ts";

/**
 * Every store, one line each. Each description's modules load only when it is opened or
 * probed: a keychain call never pays for child_process, nor one platform's store for
 * another's.
 */
const STORES: readonly StoreDescription[] = [
  secretServiceStore,
  credentialManagerStore,
  macosKeychainStore,
  wincredStore,
  passStore,
];

/** The `--backend` values, each once, in the registry's order. */
export const BACKENDS: readonly string[] = [...new Set(namesOf(STORES))];

/** The store `--backend` chooses when neither the command line nor the installed block does. */
export const DEFAULT_BACKEND = "keychain";

/** `value` when it names a store of some platform, else a usage error that lists them. */
export function parseBackend(value: string): string {
  if (!BACKENDS.includes(value)) {
    throw new CliError(
      `invalid --backend ${quote(value)}: use ${listed(BACKENDS)}`,
      ExitCode.Usage,
    );
  }
  return value;
}

/**
 * The stores `machine` is for, to offer (doctor's list, install's way out): those of its
 * platform that are `here`, and `chosen`, whatever the machine.
 */
export async function storesHere(
  machine: Machine,
  chosen?: StoreDescription,
): Promise<StoreDescription[]> {
  const stores = storesOn(machine.platform);
  const offered = await Promise.all(
    stores.map(async (store) => store === chosen || ((await store.here?.(machine)) ?? true)),
  );
  return stores.filter((_, index) => offered[index]);
}

/** The stores that serve `platform`, each with its own `--backend` value. */
export function storesOn(platform: NodeJS.Platform): StoreDescription[] {
  const here: StoreDescription[] = [];
  for (const store of STORES) if (store.platforms.includes(platform)) here.push(store);
  return here;
}

/**
 * The one place that picks a store: the one `backend` names on `platform`. A name that
 * serves only other platforms is a usage error naming those that serve this one.
 */
export function storeFor(backend: string, platform: NodeJS.Platform): StoreDescription {
  const here = storesOn(platform);
  let store: StoreDescription | undefined;
  for (const candidate of here) {
    if (candidate.name === backend) {
      store = candidate;
      break;
    }
  }
  if (store === undefined) {
    const elsewhere = STORES.filter(({ name }) => name === backend).flatMap(
      ({ platforms }) => platforms,
    );
    throw new CliError(
      `--backend ${quote(backend)} ${elsewhere.length === 0 ? "is no store" : `serves only ${listed(elsewhere)}`}: here use ${listed(namesOf(here))}`,
      ExitCode.Usage,
    );
  }
  return store;
}

/** How messages name the store `backend` chooses on `platform`. */
export function storeTitle(backend: string, platform: NodeJS.Platform): string {
  return storesOn(platform).find(({ name }) => name === backend)?.title ?? backend;
}

/**
 * The store that the options select, opened under the run's one deadline: `deadline` when
 * the command has started it, else one from now (`--timeout`, else the variable, else the
 * default), read first so that a bad value is refused before anything else happens. The
 * store calls `beforeSecret` once a secret is about to be read.
 */
export async function openStore(
  options: { readonly backend: string; readonly service: string; readonly timeout?: number },
  io: Io,
  beforeSecret: () => Promise<void>,
  deadline: Deadline = deadlineIn(timeoutSeconds(options, io.env)),
): Promise<CredentialStore> {
  return storeFor(options.backend, io.platform).open({
    service: options.service,
    io,
    deadline,
    beforeSecret,
  });
}

function listed(names: readonly string[]): string {
  return names.length <= 1
    ? (names[0] ?? "none")
    : `${names.slice(0, -1).join(", ")} or ${names.at(-1) ?? ""}`;
}

/**
 * Each store's name. A loop: BACKENDS is evaluated as every call loads, where `map` costs
 * its compile.
 */
function namesOf(stores: readonly StoreDescription[]): string[] {
  const names: string[] = [];
  for (const { name } of stores) names.push(name);
  return names;
}
