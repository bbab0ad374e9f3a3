import { startKeePassXcSession } from "./keepassxc-session.ts";
import { startKeyringSession, type KeyringSession } from "./keyring-session.ts";
import { startKWalletSession } from "./kwallet-session.ts";

/** A real program that serves org.freedesktop.secrets, started in a private session. */
export interface SecretServiceProvider {
  readonly name: string;
  start(): Promise<KeyringSession>;
}

/**
 * The Secret Service providers every keychain suite runs against: GNOME Keyring, KeePassXC
 * and KWallet, all headless. scripts/test.sh refuses to run without them, so none is ever
 * skipped quietly.
 */
export const SECRET_SERVICE_PROVIDERS: readonly SecretServiceProvider[] = [
  { name: "gnome-keyring", start: () => startKeyringSession() },
  { name: "KeePassXC", start: startKeePassXcSession },
  { name: "KWallet", start: startKWalletSession },
];
