import type { CredentialStore } from "../protocol/credential-store.ts";
import type { Hostname } from "../protocol/hostname.ts";
import type { FixNeeded, Situation } from "../fixes.ts";
import type { Deadline } from "../system/deadline.ts";
import type { Io, Machine } from "../system/io.ts";

/**
 * A store as the rest of the helper knows it: each store's folder exports one, and
 * registry.ts lists them. Nothing outside stores/ names a particular store; it asks the
 * registry, which asks these.
 */
export interface StoreDescription {
  /**
   * The `--backend` value that chooses it, as users name it. Stores for different platforms
   * may share one (`keychain`: the system's own keychain, whichever it is).
   */
  readonly name: string;
  /** How messages name it: "the keychain", "pass". */
  readonly title: string;
  /** The platforms (`io.platform`) it serves; whether it works there is its probe's finding. */
  readonly platforms: readonly NodeJS.Platform[];
  /**
   * Whether `machine` is one the store is for, beyond its platform (wincred: Linux that is
   * WSL), from files only, starting nothing; absent: every machine of its platforms. Only
   * such stores are offered (doctor's list, install's way out); any may still be chosen.
   * Its modules load only when asked, as `open`'s do.
   */
  readonly here?: (machine: Machine) => Promise<boolean>;
  /**
   * Opens the store, loading its modules only now: a call never pays for a store it does not
   * use. Every call of the store keeps `context.deadline`.
   */
  open(context: StoreContext): Promise<CredentialStore>;
  /**
   * What `doctor` and `install` learn of the store without touching a secret, starting
   * nothing and prompting no one, by `context.deadline`.
   */
  probe(context: ProbeContext): Promise<ProbeResult>;
  /**
   * Commands of the store's own tools that delete what the helper keeps for `service`, for
   * when the helper itself is gone (after the last `uninstall`); `undefined` when no tool of
   * the store can without the list of `hosts` (then `undefined` too).
   */
  deleteCommands(
    service: string,
    hosts: readonly Hostname[] | undefined,
    env: Readonly<Record<string, string | undefined>>,
  ): readonly DeleteCommand[] | undefined;
  /**
   * What the store shares its entries through, in a few words ("its git remote origin"), or
   * undefined: a deletion there reaches them too. Absent: a store of this machine's only.
   */
  sharedWith?(context: ProbeContext): Promise<string | undefined>;
  /**
   * Brings the store in step with the copies it shares (`sync`), by `context.deadline`, and
   * says in one line what happened; absent: a store with nothing to sync with.
   */
  sync?(context: Omit<StoreContext, "beforeSecret">): Promise<string>;
  /** The situations (fixes.ts) that this store's messages and probe give fixes for. */
  readonly fixes: readonly Situation[];
}

/** A command of a store's own tools, as its words, with the variable it needs set, if any. */
export interface DeleteCommand {
  readonly words: readonly string[];
  readonly variable?: { readonly name: string; readonly value: string };
}

/** What registry.ts gives the `open` of every store. */
export interface StoreContext {
  /** The service name that keeps this set of entries apart (`--service`). */
  readonly service: string;
  readonly io: Io;
  /** The deadline that every call of this run shares. */
  readonly deadline: Deadline;
  /**
   * Called once a secret is about to be read into this process, and not before: a call that
   * finds nothing, or only deletes, never holds a token and needs no protection (core-dumps.ts).
   */
  readonly beforeSecret: () => Promise<void>;
}

/** What a probe is given: a store's context without streams, nor a secret to protect. */
export interface ProbeContext {
  readonly service: string;
  readonly io: Machine;
  readonly deadline: Deadline;
}

/** What `doctor` learns of a store without touching a secret. */
export interface ProbeResult {
  readonly status: "ok" | "warn" | "fail";
  readonly summary: string;
  /** The one fix, as data: doctor and install render it with the helper's command. */
  readonly fix?: FixNeeded;
  /** True when it is safe to touch the keychain itself (nothing will be started or prompted). */
  readonly safeToOpen: boolean;
}

/**
 * How long a probe waits for a store when neither --timeout nor the variable says: a person
 * is waiting (doctor, install's warnings), and no probe waits for an unlock prompt.
 */
export const PROBE_TIMEOUT_SECONDS = 5;

/** Every platform Node names but macOS and Windows: Linux and the BSDs, and the rest of Unix. */
export const OTHER_UNIXES: readonly NodeJS.Platform[] = [
  "linux",
  "freebsd",
  "openbsd",
  "netbsd",
  "sunos",
  "aix",
  "android",
  "haiku",
  "cygwin",
];

/**
 * `store` with `beforeSecret` called at the start of each `get`: for stores whose one call
 * both finds an entry and reads its secret.
 */
export function protectingGets(
  store: CredentialStore,
  beforeSecret: () => Promise<void>,
): CredentialStore {
  return {
    async get(host) {
      await beforeSecret();
      return store.get(host);
    },
    store: (host, secret) => store.store(host, secret),
    forget: (host) => store.forget(host),
    list: () => store.list(),
  };
}
