import path from "node:path";

/** Where Terraform and OpenTofu look for things, as far as this helper cares. */
export interface TerraformLocations {
  /** The executable's file name: `terraform-credentials-keychain[.exe]`. */
  readonly helperFileName: string;
  /** Where `install` puts the helper: a plugin directory both tools search. */
  readonly helperInstallPath: string;
  /** Every directory where Terraform or OpenTofu would find a credentials helper. */
  readonly pluginDirs: readonly string[];
  /**
   * The directories Terraform itself searches, in its order (cliconfig `GlobalPluginDirs`:
   * the config directory's `plugins` and its `<os>_<arch>` subdirectory).
   */
  readonly terraformPluginDirs: readonly string[];
  /** The CLI config file Terraform reads (`$TF_CLI_CONFIG_FILE` or the default). */
  readonly terraformConfigFile: string;
  /** The CLI config file OpenTofu reads; may be the same file. */
  readonly tofuConfigFile: string;
  /**
   * `$XDG_CONFIG_HOME/opentofu/tofurc` on Unix while the variable is set, whether or not
   * OpenTofu reads it now (only while neither ~/.tofurc nor ~/.terraformrc exists).
   */
  readonly tofuXdgConfigFile: string | undefined;
  /**
   * The one directory whose `*.tfrc` and `*.tfrc.json` files Terraform merges after its main
   * file (`~/.terraform.d`, `%APPDATA%\terraform.d`); `undefined` while the main file comes
   * from `configFileOverride` (Terraform's `LoadConfig` then reads no directory at all).
   */
  readonly terraformConfigDir: string | undefined;
  /** OpenTofu's: `~/.terraform.d` while it exists, else `$XDG_CONFIG_HOME/opentofu` when set. */
  readonly tofuConfigDir: string | undefined;
  /** The variable that chose the main file for both tools, when one did. */
  readonly configFileOverride: "TF_CLI_CONFIG_FILE" | "TERRAFORM_CONFIG" | undefined;
}

export interface LocationInputs {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: NodeJS.Platform;
  readonly arch: string;
  readonly homedir: string;
  /** Whether a path exists now: OpenTofu's choice of files depends on it. */
  readonly exists: (file: string) => boolean;
}

export const HELPER_NAME = "terraform-credentials-keychain";

/**
 * The one table of Terraform and OpenTofu locations (Terraform's and OpenTofu's
 * `internal/command/cliconfig/config_{unix,windows}.go` and `plugins.go`):
 * - Terraform: CLI config `$TF_CLI_CONFIG_FILE`, else `~/.terraformrc` (`%APPDATA%\terraform.rc`);
 *   plugins in `~/.terraform.d/plugins` and its `<os>_<arch>` subdirectory.
 * - OpenTofu: `~/.tofurc`, or `~/.terraformrc` while only that exists, or
 *   `$XDG_CONFIG_HOME/opentofu/tofurc` when that variable is set and neither exists
 *   (Windows: `tofu.rc`, legacy `terraform.rc`); plugins also in
 *   `$XDG_DATA_HOME/opentofu/plugins`; its config directory (drop-ins, `credentials.tfrc.json`)
 *   is `$XDG_CONFIG_HOME/opentofu` when `~/.terraform.d` does not exist.
 * - Both: `TERRAFORM_CONFIG` is the legacy name of `TF_CLI_CONFIG_FILE`.
 */
export function terraformLocations(inputs: LocationInputs): TerraformLocations {
  return inputs.platform === "win32" ? windowsLocations(inputs) : unixLocations(inputs);
}

function unixLocations(inputs: LocationInputs): TerraformLocations {
  const { env, platform, arch, homedir } = inputs;
  const exists = (file: string) => inputs.exists(file);
  const join = (...parts: string[]) => path.posix.join(...parts);
  const dotTerraform = join(homedir, ".terraform.d");
  // OpenTofu uses the XDG directories only when the variables are set; it has no
  // ~/.config or ~/.local/share fallback.
  const xdgConfig = nonEmpty(env.XDG_CONFIG_HOME);
  const xdgData = nonEmpty(env.XDG_DATA_HOME);
  const dataDirs = unique([
    dotTerraform,
    ...(xdgData === undefined ? [] : [join(xdgData, "opentofu")]),
  ]);
  const pluginDirs = dataDirs.flatMap((dir) => [
    join(dir, "plugins"),
    join(dir, "plugins", osArch(platform, arch)),
  ]);

  const fromEnv = configFileOverride(env);
  const terraformrc = join(homedir, ".terraformrc");
  const tofurc = join(homedir, ".tofurc");
  const tofuXdgConfigFile =
    xdgConfig === undefined ? undefined : join(xdgConfig, "opentofu", "tofurc");
  let tofuConfigFile: string;
  if (fromEnv !== undefined) tofuConfigFile = fromEnv;
  else if (tofuXdgConfigFile !== undefined && !exists(terraformrc) && !exists(tofurc)) {
    tofuConfigFile = tofuXdgConfigFile;
  } else tofuConfigFile = exists(terraformrc) && !exists(tofurc) ? terraformrc : tofurc;

  return {
    helperFileName: HELPER_NAME,
    helperInstallPath: join(dotTerraform, "plugins", HELPER_NAME),
    pluginDirs,
    terraformPluginDirs: [
      join(dotTerraform, "plugins"),
      join(dotTerraform, "plugins", osArch(platform, arch)),
    ],
    terraformConfigFile: fromEnv ?? terraformrc,
    tofuConfigFile,
    tofuXdgConfigFile,
    terraformConfigDir: fromEnv === undefined ? dotTerraform : undefined,
    // OpenTofu's config_unix.go configDir: the XDG directory only when ~/.terraform.d is absent.
    tofuConfigDir:
      fromEnv !== undefined
        ? undefined
        : xdgConfig !== undefined && !exists(dotTerraform)
          ? join(xdgConfig, "opentofu")
          : dotTerraform,
    configFileOverride: overrideVariable(env),
  };
}

function windowsLocations(inputs: LocationInputs): TerraformLocations {
  const { env, arch, homedir } = inputs;
  const exists = (file: string) => inputs.exists(file);
  const join = (...parts: string[]) => path.win32.join(...parts);
  const appData = nonEmpty(env.APPDATA) ?? join(homedir, "AppData", "Roaming");
  const dataDir = join(appData, "terraform.d");
  const fileName = `${HELPER_NAME}.exe`;
  const fromEnv = configFileOverride(env);
  const terraformRc = join(appData, "terraform.rc");
  const tofuRc = join(appData, "tofu.rc");
  const tofuDefault = exists(terraformRc) && !exists(tofuRc) ? terraformRc : tofuRc;
  return {
    helperFileName: fileName,
    helperInstallPath: join(dataDir, "plugins", fileName),
    pluginDirs: [join(dataDir, "plugins"), join(dataDir, "plugins", osArch("win32", arch))],
    terraformPluginDirs: [
      join(dataDir, "plugins"),
      join(dataDir, "plugins", osArch("win32", arch)),
    ],
    terraformConfigFile: fromEnv ?? terraformRc,
    tofuConfigFile: fromEnv ?? tofuDefault,
    tofuXdgConfigFile: undefined,
    terraformConfigDir: fromEnv === undefined ? dataDir : undefined,
    tofuConfigDir: fromEnv === undefined ? dataDir : undefined,
    configFileOverride: overrideVariable(env),
  };
}

/** TF_CLI_CONFIG_FILE, or the legacy TERRAFORM_CONFIG that both tools still honour. */
function configFileOverride(env: LocationInputs["env"]): string | undefined {
  return nonEmpty(env.TF_CLI_CONFIG_FILE) ?? nonEmpty(env.TERRAFORM_CONFIG);
}

/** Which variable `configFileOverride` took its value from. */
function overrideVariable(env: LocationInputs["env"]): TerraformLocations["configFileOverride"] {
  if (nonEmpty(env.TF_CLI_CONFIG_FILE) !== undefined) return "TF_CLI_CONFIG_FILE";
  return nonEmpty(env.TERRAFORM_CONFIG) === undefined ? undefined : "TERRAFORM_CONFIG";
}

/** Go's GOOS_GOARCH spelling of a Node platform and architecture. */
function osArch(platform: NodeJS.Platform, arch: string): string {
  const goos = platform === "win32" ? "windows" : platform;
  const goarch =
    ({ x64: "amd64", ia32: "386", arm64: "arm64", arm: "arm" } as Record<string, string>)[arch] ??
    arch;
  return `${goos}_${goarch}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
