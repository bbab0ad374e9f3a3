/**
 * A fix the helper prints, as data: the situation it is for, the shell command that fixes it
 * (exactly as printed), and what that command changes. Where no command can fix a situation
 * safely, `command` is absent and `effect` says what to do instead.
 *
 * Commands may hold placeholders in capitals: `HELPER` (the helper's command line, with its
 * options and profile), `HOST`, `VARIABLES`, `KEY` (a gpg key id), `RECIPIENTS` (gpg's `-r` options for the store's keys), filled by
 * `fixFor`; `PASSWORD` is the person's
 * to type, and the effect says what it is. Each situation has an integration test that builds
 * it for real, runs the printed command through a shell, and then uses the helper
 * (test/integration/printed-fixes.test.ts); docs/usage.md shows the same commands.
 */
export interface Fix {
  /** The state of the machine this fix is for. */
  readonly situation: string;
  /** The shell command, placeholders filled; undefined when no command can do it safely. */
  readonly command?: string;
  /** What the command changes; without a command, what to do instead. */
  readonly effect: string;
}

const GNOME_KEYRING_UNLOCK = {
  situation:
    "GNOME Keyring without a desktop session: no Secret Service running, no default collection, or a locked login keyring",
  // A plain `gnome-keyring-daemon --unlock` starts a second daemon beside a running one,
  // which then answers for no collection at all; --replace takes over from the running one.
  command: "echo -n PASSWORD | gnome-keyring-daemon --replace --unlock --components=secrets",
  effect:
    'starts gnome-keyring in place of any running one; it unlocks the "login" keyring with PASSWORD, your login password, or creates it: an empty PASSWORD creates none',
} as const;

/** Every fix, by situation. */
export const FIXES = {
  "session-bus-missing": {
    situation: "no D-Bus session bus: an SSH session, a container, a service",
    // No double quotes inside: the helper prints the command within them.
    command:
      "dbus-run-session -- sh -c 'echo -n PASSWORD | gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null && exec ${SHELL:-sh}'",
    effect:
      'starts your shell with a session bus of its own and gnome-keyring on it, the "login" keyring unlocked with PASSWORD, your login password, or created (an empty PASSWORD creates none); run terraform in that shell',
  },
  "secret-service-missing": GNOME_KEYRING_UNLOCK,
  "no-default-collection": GNOME_KEYRING_UNLOCK,
  "keyring-locked": GNOME_KEYRING_UNLOCK,
  "keyring-on-desktop": {
    situation:
      "KWallet or KeePassXC serves the Secret Service, or a desktop session shows the keyring",
    effect:
      'in Seahorse create or unlock the "login" keyring, in KWallet Manager create or open the wallet, in KeePassXC open the database and expose a group to the Secret Service',
  },
  "credentials-in-files": {
    situation:
      "hosts shadowed by credentials.tfrc.json or by credentials blocks in CLI config files",
    command: "HELPER import",
    effect:
      "stores each of their tokens, reads it back, and only then removes the host from its file; a host whose stored token differs stays (--force replaces it)",
  },
  "credentials-by-hand": {
    situation:
      "a credentials entry import cannot move: values other than plain strings (an interpolation, a heredoc) or a nested block",
    effect:
      "move it by hand: log in to its host again with terraform login (the helper stores the new token), then delete the block",
  },
  "token-variables": {
    situation: "hosts shadowed by TF_TOKEN_* variables",
    command: "unset VARIABLES",
    effect:
      "Terraform then asks the helper for their hosts in this shell; first log in with terraform login to any of them that HELPER list does not show, and remove the variables also where they are set (a shell profile, .envrc, CI settings)",
  },
  "pass-store-missing": {
    situation:
      "pass is installed and gpg has a secret key, but the password store is not initialised",
    command: "pass init KEY",
    effect:
      "creates the password store, encrypting its entries to KEY, the secret key gpg has here",
  },
  "gpg-key-missing": {
    situation: "pass is installed, but gpg has no secret key and there is no password store",
    command:
      "gpg --batch --passphrase '' --quick-gen-key terraform-credentials default default never && pass init terraform-credentials",
    effect:
      "makes a gpg key without a passphrase, as a build machine needs (a person may prefer one that gpg-agent caches), and creates the password store for it",
  },
  "gpg-key-locked": {
    situation: "the password store's gpg key needs a passphrase that gpg-agent has not cached",
    // Encrypting nothing to the store's keys and decrypting it makes gpg-agent ask, by
    // pinentry on the terminal GPG_TTY names (taken before the pipe: the decrypting gpg's
    // stdin is the pipe); --trust-model always, as an imported key may carry no trust.
    command: "export GPG_TTY=$(tty) && gpg --trust-model always -e RECIPIENTS </dev/null | gpg -d",
    effect:
      "asks for the passphrase of the store's key once; gpg-agent keeps it for its cache time (default-cache-ttl, 10 minutes unless set), so on build machines use a key without a passphrase",
  },
  "gpg-agent-hung": {
    situation: "the gpg-agent that pass's gpg talks to does not answer (hung or stopped)",
    command: "gpgconf --kill gpg-agent",
    effect: "ends that gpg-agent (kill its process if this hangs too); gpg starts a new one",
  },
  "gpg-key-elsewhere": {
    situation:
      "the password store's .gpg-id names a key whose secret (or public) key is not on this machine",
    effect:
      "bring the key to this machine (export it with gpg --export-secret-keys where it is, import it here with gpg --import), or point PASSWORD_STORE_DIR at a store initialised for a key this machine has",
  },
  "wsl-interop-off": {
    situation: "WSL with interop switched off: Windows programs cannot run from Linux",
    effect:
      "remove enabled=false under [interop] in /etc/wsl.conf (or set it to true), then run wsl.exe --shutdown in Windows and start WSL again",
  },
  "windows-helper-missing": {
    situation:
      "WSL with interop on, but no helper installed on the Windows side for --backend wincred",
    // Run from WSL: single quotes keep bash off PowerShell's "$", and no double quotes
    // (the helper prints the command within them); "? name -like X" takes X as a word.
    command:
      "powershell.exe -NoProfile -Command '$ErrorActionPreference = [Management.Automation.ActionPreference]::Stop; $a = (irm https://api.github.com/repos/terraform-credentials-keychain/terraform-credentials-keychain/releases/latest).assets | ? name -like *_win-x64.zip; $d = New-Item -ItemType Directory (Join-Path $env:TEMP ([guid]::NewGuid())); iwr $a.browser_download_url -OutFile (Join-Path $d $a.name); Expand-Archive (Join-Path $d $a.name) $d; & (Join-Path $d terraform-credentials-keychain.exe) install; Remove-Item -Recurse $d'",
    effect:
      "downloads the latest win-x64 release and runs its install on the Windows side, which puts the helper in %APPDATA%\\terraform.d\\plugins for Terraform on Windows and for --backend wincred here",
  },
} as const satisfies Record<string, Fix>;

export type Situation = keyof typeof FIXES;

type Placeholder = "HELPER" | "HOST" | "VARIABLES" | "KEY" | "RECIPIENTS";

/** The fix for `situation`, its placeholders filled from `values` (others stay as they are). */
export function fixFor(
  situation: Situation,
  values: Readonly<Partial<Record<Placeholder, string>>> = {},
): Fix {
  const fix: Fix = FIXES[situation];
  const fill = (text: string) =>
    text.replace(
      /\b(HELPER|HOST|VARIABLES|KEY|RECIPIENTS)\b/g,
      (name) => values[name as Placeholder] ?? name,
    );
  return {
    situation: fix.situation,
    ...(fix.command === undefined ? {} : { command: fill(fix.command) }),
    effect: fill(fix.effect),
  };
}

/** How a fix reads in a one-line message: `run "COMMAND" (EFFECT)`, or what to do instead. */
export function renderFix(fix: Fix): string {
  return fix.command === undefined ? fix.effect : `run "${fix.command}" (${fix.effect})`;
}
