/**
 * A fix the helper prints, as data: the situation it is for, the shell command that fixes it
 * (exactly as printed), and what that command changes. Where no command can fix a situation
 * safely, `command` is absent and `effect` says what to do instead.
 *
 * Commands may hold placeholders in capitals: `HELPER` (the helper's command: in doctor its
 * options and profile too), `ARGS` (the options of the call that failed, less those the
 * command names itself), `HOST`, `VARIABLES`, `KEY` (a gpg key id), `RECIPIENTS` (gpg's `-r`
 * options for the store's keys), filled by `fixFor`; `PASSWORD` is the person's to type, and
 * the effect says what it is. An error carries its situation (`FixNeeded`, on `CliError`)
 * and cli/ renders it with this call's values: one fix per error, last on its line. Each
 * situation with a command has an integration test that builds it for real, runs the
 * printed command through a shell, and then uses the helper
 * (test/integration/printed-fixes.test.ts); docs/usage.md shows the same commands, and
 * doctor the alternatives.
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
    'PASSWORD: your login password; it unlocks the "login" keyring or creates it, and an empty PASSWORD creates none',
} as const;

const USE_PASS = {
  command: "HELPER --backend pass ARGS install --force",
  effect: "Terraform and the helper then keep tokens in pass, gpg-encrypted",
} as const;

/** Every fix, by situation. */
export const FIXES = {
  "session-bus-missing": {
    ...USE_PASS,
    situation:
      "no D-Bus session bus, as on a server, over SSH, in a container or a CI job: no keychain can be reached",
  },
  "credential-manager-unusable": {
    ...USE_PASS,
    situation:
      "Windows Credential Manager cannot be used: the logon session has no user profile (a service, a scheduled task)",
  },
  "session-bus-for-a-shell": {
    situation: "no D-Bus session bus, and GNOME Keyring wanted all the same (an alternative)",
    // No double quotes inside: the helper prints the command within them.
    command:
      "dbus-run-session -- sh -c 'echo -n PASSWORD | gnome-keyring-daemon --replace --unlock --components=secrets >/dev/null && exec ${SHELL:-sh}'",
    effect:
      'starts your shell with a session bus of its own and gnome-keyring on it, the "login" keyring unlocked with PASSWORD, your login password, or created (an empty PASSWORD creates none); run terraform in that shell',
  },
  "secret-service-missing": GNOME_KEYRING_UNLOCK,
  "no-default-collection": GNOME_KEYRING_UNLOCK,
  "keyring-locked": GNOME_KEYRING_UNLOCK,
  "keyring-password-wrong": {
    ...GNOME_KEYRING_UNLOCK,
    situation:
      "the login keyring stays locked right after gnome-keyring-daemon --unlock was given a password: the password may have been wrong",
    effect: "with PASSWORD the password the login keyring was made with",
  },
  "no-default-chosen": {
    situation: "the Secret Service has collections, but none is the default",
    effect:
      "make one the default (KWallet Manager: Configure, Default wallet; Seahorse: Set as default)",
  },
  "unlock-prompt-dismissed": {
    situation: "the keyring's unlock prompt was dismissed",
    effect: "unlock it when the prompt shows again, then try again",
  },
  "install-over-other-helper": {
    situation: "the CLI config already names another credentials helper: Terraform runs only one",
    command: "HELPER ARGS install --force",
    effect: "replaces that block with this helper's",
  },
  "helper-not-run": {
    situation:
      "Terraform runs no credentials helper: no credentials_helper block, or this helper's block without its executable in Terraform's plugin directory",
    command: "HELPER ARGS install",
    effect:
      "puts the helper in Terraform's plugin directory and its credentials_helper block in the CLI config",
  },
  "several-helpers": {
    situation:
      "the CLI config files Terraform merges set more than one credentials_helper: each run it takes one at random",
    effect:
      "remove every credentials_helper block but this helper's from the CLI config files Terraform reads",
  },
  "install-from-source": {
    situation: "install run from the sources: it copies the built executable",
    command: "npm run build && dist/terraform-credentials-keychain ARGS install",
    effect: "builds the executable and installs it",
  },
  "store-needs-doctor": {
    situation:
      "a store that fails in a way whose fix depends on more of the machine than the call saw (which gpg keys there are)",
    command: "HELPER ARGS doctor",
    effect: "looks at the store and the machine, and prints the fix",
  },
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
  "pass-missing": {
    situation: "pass is not installed, or not on PATH",
    effect:
      "install pass and gnupg with the system's package manager (apt-get install pass gnupg), then try again",
  },
  "pass-store-dir-relative": {
    situation:
      "PASSWORD_STORE_DIR is a relative path: Terraform runs the helper from each configuration's directory",
    effect: "set PASSWORD_STORE_DIR to an absolute path, or unset it",
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
      "gpg-agent asks for the key's passphrase once and keeps it for its cache time (default-cache-ttl); build machines want a key without one",
  },
  "gpg-agent-hung": {
    situation: "the gpg-agent that pass's gpg talks to does not answer (hung or stopped)",
    command: "gpgconf --kill gpg-agent",
    effect: "ends that gpg-agent (kill its process if this hangs too); gpg starts a new one",
  },
  "entry-unreadable": {
    situation:
      "a stored entry is not UTF-8 text or not a JSON credentials object (another program wrote it, or it is damaged)",
    command: "terraform logout HOST",
    effect:
      "removes the entry through the helper, as tofu logout HOST does for OpenTofu; terraform login HOST then stores a new one",
  },
  "several-items": {
    situation:
      "more than one keychain item matches a host (another program, or an older version, wrote them)",
    command: "HELPER ARGS forget HOST",
    effect: "removes every item that matches HOST; then log in again with terraform login HOST",
  },
  "no-token-stored": {
    situation: "exec was asked for a host the store holds no token for",
    command: "terraform login HOST",
    effect: "logs in and stores the host's token through the helper; then run exec again",
  },
  "macos-keychain-locked": {
    situation:
      "the macOS keychain is locked, and its password prompt has no one to answer it (an SSH session, no one at the screen)",
    command: "security unlock-keychain",
    effect:
      'asks for the default keychain\'s password here and unlocks it; then run the call again (an "Always Allow" prompt needs someone at the screen)',
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
  "wsl-interop-failing": {
    situation:
      "WSL interop is on, but a Windows program (cmd.exe, the Windows helper) could not be started or gave no answer",
    effect:
      'check that WSL interop works: "cmd.exe /c ver" should print the Windows version; if it does not, run wsl.exe --shutdown in Windows and start WSL again',
  },
  "windows-side-hung": {
    situation:
      "the Windows helper run through WSL interop did not answer by the deadline, and was ended",
    effect:
      "try again, and if it keeps hanging, run wsl.exe --shutdown in Windows and start WSL again (--timeout or TF_CREDENTIALS_KEYCHAIN_TIMEOUT sets the limit)",
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

type Placeholder = "HELPER" | "ARGS" | "HOST" | "VARIABLES" | "KEY" | "RECIPIENTS";

/** The values a fix's placeholders take. */
type FixValues = Readonly<Partial<Record<Placeholder, string>>>;

/**
 * The fix an error needs, as data that travels with it (`CliError.fix`): its situation and
 * the values only the failing code knows (a key, recipients). cli/ adds the call's own
 * (`HELPER`, `ARGS`) when it renders the error.
 */
export interface FixNeeded {
  readonly situation: Situation;
  readonly values?: FixValues;
}

/** The fix for `situation`, its placeholders filled from `values` (others stay as they are). */
export function fixFor(situation: Situation, values: FixValues = {}): Fix {
  const fix: Fix = FIXES[situation];
  const fill = (text: string) =>
    text
      // An empty ARGS goes with the space before it.
      .replace(/ ARGS\b/g, values.ARGS === "" ? "" : " ARGS")
      .replace(
        /\b(HELPER|ARGS|HOST|VARIABLES|KEY|RECIPIENTS)\b/g,
        (name) => values[name as Placeholder] ?? name,
      );
  return {
    situation: fix.situation,
    ...(fix.command === undefined ? {} : { command: fill(fix.command) }),
    effect: fill(fix.effect),
  };
}

/**
 * The fix an error or a probe needs, filled for where it is printed: `helper` is the
 * helper's command as a person runs it there, and `args(named)` this call's options as a
 * command line, less the options in `named`, which the fix's command sets itself.
 */
export function fixWith(
  needed: FixNeeded,
  helper: string,
  args: (named: readonly string[]) => string,
): Fix {
  const command: string = (FIXES[needed.situation] as Fix).command ?? "";
  const named = [...command.matchAll(/--(service|backend|timeout)\b/g)].map(
    (match) => match[1] ?? "",
  );
  return fixFor(needed.situation, { HELPER: helper, ARGS: args(named), ...needed.values });
}

/** How a fix reads in a one-line message: `run "COMMAND" (EFFECT)`, or what to do instead. */
export function renderFix(fix: Fix): string {
  return fix.command === undefined ? fix.effect : `run "${fix.command}" (${fix.effect})`;
}
