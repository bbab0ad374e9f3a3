import { KeyringLocked } from "./secret-service.ts";

/** A locked keyring, as a message names it. */
export interface LockedKeyring {
  /** Its label, as the person who made it named it ("Login", "Work"): the daemon's text. */
  readonly label: string;
  /** Whether it is gnome-keyring's login keyring, which `--unlock` opens. */
  readonly login: boolean;
}

/** The calls the look needs. */
interface KeyringsApi {
  collections(): Promise<string[]>;
  collectionLocked(collection: string): Promise<boolean>;
  collectionLabel(collection: string): Promise<string>;
}

/** gnome-keyring's login keyring, the one `gnome-keyring-daemon --unlock` opens. */
const LOGIN = "/org/freedesktop/secrets/collection/login";

/**
 * The keyrings that a locked failure is about: those of the objects `error` could not
 * unlock (an item's keyring is the collection above it), else every collection locked now
 * (a call refused with IsLocked does not say which). Asked only after such a failure;
 * undefined when the service does not say (then the message names no keyring).
 */
export async function lockedKeyrings(
  api: KeyringsApi,
  error: unknown,
): Promise<LockedKeyring[] | undefined> {
  try {
    const named = error instanceof KeyringLocked ? error.objects : [];
    const collections =
      named.length > 0
        ? [
            ...new Set(
              named.map(
                (object) =>
                  /^\/org\/freedesktop\/secrets\/collection\/[^/]+/.exec(object)?.[0] ?? object,
              ),
            ),
          ]
        : await api.collections();
    const locked = await Promise.all(
      collections.map((collection) => api.collectionLocked(collection)),
    );
    const lockedOnes = collections.filter((_, index) => locked[index] === true);
    const labels = await Promise.all(
      lockedOnes.map((collection) => api.collectionLabel(collection)),
    );
    return lockedOnes.map((collection, index) => ({
      label: labels[index] ?? "",
      login: collection === LOGIN,
    }));
  } catch {
    return undefined;
  }
}
