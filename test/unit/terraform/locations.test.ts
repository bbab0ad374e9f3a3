import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { HELPER_NAME, terraformLocations } from "../../../src/terraform/locations.ts";
import type { TerraformLocations } from "../../../src/terraform/locations.ts";

// Table tests after OpenTofu's internal/command/cliconfig/config_locations_unix_test.go
// (TestConfigFileLocations, TestConfigDirLocations, TestDataDirLocations) and the rules in
// config_unix.go / config_windows.go / util.go (getNewOrLegacyPath) and cmd/tofu/plugins.go
// (globalPluginDirs), plus Terraform's cliconfig.go (cliConfigFileOverride). Environment
// and existing files in, paths out; the file system is injected.

interface Situation {
  readonly platform?: NodeJS.Platform;
  readonly arch?: string;
  readonly homedir?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Paths that exist. */
  readonly files?: readonly string[];
}

const HOME = "/home/user";
const WIN_HOME = "C:\\Users\\user";
const APPDATA = "C:\\Users\\user\\AppData\\Roaming";
const home = (...parts: string[]) => path.posix.join(HOME, ...parts);
const appData = (...parts: string[]) => path.win32.join(APPDATA, ...parts);

function locate(situation: Situation = {}): TerraformLocations {
  const windows = situation.platform === "win32";
  const files = new Set(situation.files ?? []);
  return terraformLocations({
    env: situation.env ?? {},
    platform: situation.platform ?? "linux",
    arch: situation.arch ?? "x64",
    homedir: situation.homedir ?? (windows ? WIN_HOME : HOME),
    exists: (file) => files.has(file),
  });
}

/** The CLI config files only: what each tool reads, and whether the variable chose it. */
function configFiles(situation: Situation) {
  const { terraformConfigFile, tofuConfigFile, configFileOverride } = locate(situation);
  return {
    terraformConfigFile,
    tofuConfigFile,
    configFileFromEnv: configFileOverride !== undefined,
  };
}

describe("terraformLocations on Linux", () => {
  describe("CLI config files (OpenTofu TestConfigFileLocations)", () => {
    const xdgDir = home(".myconfig");
    const cases: ReadonlyArray<{
      readonly name: string;
      readonly situation: Situation;
      readonly terraform: string;
      readonly tofu: string;
    }> = [
      {
        name: ".tofurc only: Terraform still reads ~/.terraformrc, OpenTofu ~/.tofurc",
        situation: { files: [home(".tofurc")] },
        terraform: home(".terraformrc"),
        tofu: home(".tofurc"),
      },
      {
        name: ".terraformrc only: both tools read ~/.terraformrc",
        situation: { files: [home(".terraformrc")] },
        terraform: home(".terraformrc"),
        tofu: home(".terraformrc"),
      },
      {
        name: ".terraformrc and .tofurc: OpenTofu prefers ~/.tofurc",
        situation: { files: [home(".terraformrc"), home(".tofurc")] },
        terraform: home(".terraformrc"),
        tofu: home(".tofurc"),
      },
      {
        name: "XDG_CONFIG_HOME with .tofurc and .terraformrc present: ~/.tofurc wins over the XDG file",
        situation: {
          env: { XDG_CONFIG_HOME: xdgDir },
          files: [
            home(".terraformrc"),
            home(".tofurc"),
            path.posix.join(xdgDir, "opentofu/tofurc"),
          ],
        },
        terraform: home(".terraformrc"),
        tofu: home(".tofurc"),
      },
      {
        name: "XDG_CONFIG_HOME with .terraformrc only: OpenTofu keeps reading ~/.terraformrc",
        situation: {
          env: { XDG_CONFIG_HOME: xdgDir },
          files: [home(".terraformrc"), path.posix.join(xdgDir, "opentofu/tofurc")],
        },
        terraform: home(".terraformrc"),
        tofu: home(".terraformrc"),
      },
      {
        name: "XDG_CONFIG_HOME with .tofurc only: OpenTofu reads ~/.tofurc",
        situation: { env: { XDG_CONFIG_HOME: xdgDir }, files: [home(".tofurc")] },
        terraform: home(".terraformrc"),
        tofu: home(".tofurc"),
      },
      {
        name: "XDG_CONFIG_HOME without .tofurc and .terraformrc: OpenTofu reads $XDG_CONFIG_HOME/opentofu/tofurc",
        situation: {
          env: { XDG_CONFIG_HOME: xdgDir },
          files: [path.posix.join(xdgDir, "opentofu/tofurc")],
        },
        terraform: home(".terraformrc"),
        tofu: path.posix.join(xdgDir, "opentofu", "tofurc"),
      },
      {
        name: "XDG_CONFIG_HOME and no config file at all: OpenTofu would read $XDG_CONFIG_HOME/opentofu/tofurc",
        situation: { env: { XDG_CONFIG_HOME: xdgDir } },
        terraform: home(".terraformrc"),
        tofu: path.posix.join(xdgDir, "opentofu", "tofurc"),
      },
    ];
    for (const { name, situation, terraform, tofu } of cases) {
      test(name, () => {
        assert.deepEqual(configFiles(situation), {
          terraformConfigFile: terraform,
          tofuConfigFile: tofu,
          configFileFromEnv: false,
        });
      });
    }

    test(
      "neither file and no XDG_CONFIG_HOME: OpenTofu's default is ~/.tofurc (it has no ~/.config fallback)",
      {},
      () => {
        assert.deepEqual(configFiles({}), {
          terraformConfigFile: home(".terraformrc"),
          tofuConfigFile: home(".tofurc"),
          configFileFromEnv: false,
        });
      },
    );

    test("TF_CLI_CONFIG_FILE overrides every other file for both tools", () => {
      const chosen = home("mytofufile");
      assert.deepEqual(
        configFiles({
          env: { TF_CLI_CONFIG_FILE: chosen, XDG_CONFIG_HOME: xdgDir },
          files: [chosen, home(".terraformrc"), home(".tofurc")],
        }),
        { terraformConfigFile: chosen, tofuConfigFile: chosen, configFileFromEnv: true },
      );
    });

    test("TF_CLI_CONFIG_FILE is used even when the file does not exist", () => {
      const chosen = "/etc/terraform/cli.tfrc";
      assert.deepEqual(configFiles({ env: { TF_CLI_CONFIG_FILE: chosen } }), {
        terraformConfigFile: chosen,
        tofuConfigFile: chosen,
        configFileFromEnv: true,
      });
    });

    test("TERRAFORM_CONFIG is the legacy override when TF_CLI_CONFIG_FILE is unset", {}, () => {
      const chosen = home("legacy.tfrc");
      assert.deepEqual(
        configFiles({ env: { TERRAFORM_CONFIG: chosen }, files: [home(".terraformrc")] }),
        { terraformConfigFile: chosen, tofuConfigFile: chosen, configFileFromEnv: true },
      );
    });

    test("TF_CLI_CONFIG_FILE wins over TERRAFORM_CONFIG", () => {
      const chosen = home("cli.tfrc");
      assert.deepEqual(
        configFiles({ env: { TF_CLI_CONFIG_FILE: chosen, TERRAFORM_CONFIG: home("legacy.tfrc") } }),
        { terraformConfigFile: chosen, tofuConfigFile: chosen, configFileFromEnv: true },
      );
    });
  });

  describe("empty environment values count as unset", () => {
    const fileSets: ReadonlyArray<readonly string[]> = [
      [],
      [home(".terraformrc")],
      [home(".tofurc")],
      [home(".terraformrc"), home(".tofurc")],
      [home(".terraform.d")],
    ];
    for (const variable of ["TF_CLI_CONFIG_FILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME"]) {
      test(`${variable}="" gives the same locations as no ${variable}`, () => {
        for (const files of fileSets) {
          assert.deepEqual(
            locate({ env: { [variable]: "" }, files }),
            locate({ files }),
            `files: ${JSON.stringify(files)}`,
          );
        }
      });
    }

    test('TF_CLI_CONFIG_FILE="" does not count as chosen by the variable', () => {
      assert.equal(locate({ env: { TF_CLI_CONFIG_FILE: "" } }).configFileOverride, undefined);
    });
  });

  describe("plugin directories (OpenTofu TestDataDirLocations, globalPluginDirs)", () => {
    const machines: ReadonlyArray<{
      readonly platform: NodeJS.Platform;
      readonly arch: string;
      readonly osArch: string;
    }> = [
      { platform: "linux", arch: "x64", osArch: "linux_amd64" },
      { platform: "linux", arch: "arm64", osArch: "linux_arm64" },
      { platform: "linux", arch: "ia32", osArch: "linux_386" },
      { platform: "darwin", arch: "arm64", osArch: "darwin_arm64" },
      { platform: "darwin", arch: "x64", osArch: "darwin_amd64" },
    ];
    for (const { platform, arch, osArch } of machines) {
      test(`${platform} ${arch}: ~/.terraform.d/plugins, then its ${osArch} subdirectory, come first`, () => {
        const { pluginDirs } = locate({ platform, arch });
        assert.deepEqual(pluginDirs.slice(0, 2), [
          home(".terraform.d/plugins"),
          home(".terraform.d/plugins", osArch),
        ]);
      });
    }

    test("the helper is installed as ~/.terraform.d/plugins/terraform-credentials-keychain", () => {
      const locations = locate({ platform: "darwin", arch: "arm64" });
      assert.equal(locations.helperFileName, HELPER_NAME);
      assert.equal(locations.helperFileName, "terraform-credentials-keychain");
      assert.equal(
        locations.helperInstallPath,
        home(".terraform.d/plugins/terraform-credentials-keychain"),
      );
      assert.ok(locations.pluginDirs.includes(path.posix.dirname(locations.helperInstallPath)));
    });

    test("the install path does not move with XDG_DATA_HOME or XDG_CONFIG_HOME (Terraform never reads them)", () => {
      const locations = locate({
        env: { XDG_DATA_HOME: home(".mydata"), XDG_CONFIG_HOME: home(".myconfig") },
      });
      assert.equal(
        locations.helperInstallPath,
        home(".terraform.d/plugins/terraform-credentials-keychain"),
      );
    });

    test("XDG_DATA_HOME adds $XDG_DATA_HOME/opentofu/plugins and its <os>_<arch> subdirectory", () => {
      const { pluginDirs } = locate({ env: { XDG_DATA_HOME: home(".mydata") } });
      assert.ok(pluginDirs.includes(home(".mydata/opentofu/plugins")), String(pluginDirs));
      assert.ok(
        pluginDirs.includes(home(".mydata/opentofu/plugins/linux_amd64")),
        String(pluginDirs),
      );
    });

    test("Terraform searches only its own two (cliconfig GlobalPluginDirs), not OpenTofu's", () => {
      const { terraformPluginDirs } = locate({ env: { XDG_DATA_HOME: home(".mydata") } });
      assert.deepEqual(terraformPluginDirs, [
        home(".terraform.d/plugins"),
        home(".terraform.d/plugins/linux_amd64"),
      ]);
    });

    test("the plugin directories hold no duplicates", () => {
      for (const env of [{}, { XDG_DATA_HOME: home(".local/share") }]) {
        const { pluginDirs } = locate({ env });
        assert.equal(new Set(pluginDirs).size, pluginDirs.length, String(pluginDirs));
      }
    });

    const exact: ReadonlyArray<{
      readonly name: string;
      readonly env: Record<string, string>;
      readonly expected: readonly string[];
    }> = [
      {
        name: "without XDG_DATA_HOME: exactly ~/.terraform.d/plugins and its linux_amd64",
        env: {},
        expected: [home(".terraform.d/plugins"), home(".terraform.d/plugins/linux_amd64")],
      },
      {
        name: "with XDG_DATA_HOME: exactly ~/.terraform.d, then $XDG_DATA_HOME/opentofu",
        env: { XDG_DATA_HOME: home(".mydata") },
        expected: [
          home(".terraform.d/plugins"),
          home(".terraform.d/plugins/linux_amd64"),
          home(".mydata/opentofu/plugins"),
          home(".mydata/opentofu/plugins/linux_amd64"),
        ],
      },
    ];
    for (const { name, env, expected } of exact) {
      test(name, {}, () => {
        assert.deepEqual(locate({ env }).pluginDirs, expected);
      });
    }
  });

  describe("the config directory (Terraform's loadConfigDir, OpenTofu's configDir)", () => {
    test("~/.terraform.d is merged into the CLI config, for both tools", () => {
      const { terraformConfigDir, tofuConfigDir } = locate();
      assert.deepEqual(
        [terraformConfigDir, tofuConfigDir],
        [home(".terraform.d"), home(".terraform.d")],
      );
    });

    for (const variable of ["TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG"]) {
      test(`${variable} turns the config directory off`, () => {
        const located = locate({ env: { [variable]: home("cli.tfrc") } });
        assert.deepEqual(
          [located.terraformConfigDir, located.tofuConfigDir],
          [undefined, undefined],
        );
        assert.equal(located.configFileOverride, variable);
      });
    }

    test("OpenTofu: $XDG_CONFIG_HOME/opentofu while ~/.terraform.d does not exist, and only then", () => {
      const env = { XDG_CONFIG_HOME: home(".myconfig") };
      assert.equal(locate({ env }).tofuConfigDir, home(".myconfig/opentofu"));
      assert.equal(locate({ env }).terraformConfigDir, home(".terraform.d"));
      assert.equal(
        locate({ env, files: [home(".terraform.d")] }).tofuConfigDir,
        home(".terraform.d"),
      );
    });
  });
});

describe("terraformLocations on macOS (OpenTofu's config_unix.go applies to darwin too)", () => {
  test("OpenTofu reads $XDG_CONFIG_HOME/opentofu/tofurc when neither rc file exists", () => {
    const xdgDir = "/Users/user/.myconfig";
    assert.deepEqual(
      configFiles({ platform: "darwin", homedir: "/Users/user", env: { XDG_CONFIG_HOME: xdgDir } }),
      {
        terraformConfigFile: "/Users/user/.terraformrc",
        tofuConfigFile: "/Users/user/.myconfig/opentofu/tofurc",
        configFileFromEnv: false,
      },
    );
  });

  test("~/.terraformrc only: both tools read it", () => {
    assert.deepEqual(
      configFiles({
        platform: "darwin",
        homedir: "/Users/user",
        files: ["/Users/user/.terraformrc"],
      }),
      {
        terraformConfigFile: "/Users/user/.terraformrc",
        tofuConfigFile: "/Users/user/.terraformrc",
        configFileFromEnv: false,
      },
    );
  });
});

describe("terraformLocations on Windows", () => {
  const win = (situation: Situation = {}): TerraformLocations =>
    locate({ ...situation, platform: "win32" });
  const winConfigFiles = (situation: Situation = {}) =>
    configFiles({ ...situation, platform: "win32" });
  const env = { APPDATA };

  const cases: ReadonlyArray<{
    readonly name: string;
    readonly files: readonly string[];
    readonly tofu: string;
  }> = [
    { name: "neither tofu.rc nor terraform.rc: OpenTofu's is tofu.rc", files: [], tofu: "tofu.rc" },
    {
      name: "terraform.rc only: both tools read terraform.rc",
      files: [appData("terraform.rc")],
      tofu: "terraform.rc",
    },
    { name: "tofu.rc only: OpenTofu reads tofu.rc", files: [appData("tofu.rc")], tofu: "tofu.rc" },
    {
      name: "tofu.rc and terraform.rc: OpenTofu prefers tofu.rc",
      files: [appData("terraform.rc"), appData("tofu.rc")],
      tofu: "tofu.rc",
    },
  ];
  for (const { name, files, tofu } of cases) {
    test(name, () => {
      assert.deepEqual(winConfigFiles({ env, files }), {
        terraformConfigFile: appData("terraform.rc"),
        tofuConfigFile: appData(tofu),
        configFileFromEnv: false,
      });
    });
  }

  test("APPDATA set: the plugin directories, install path and credentials file are under it", () => {
    const locations = win({ env: { APPDATA: "D:\\Roaming" } });
    assert.deepEqual(locations, {
      helperFileName: "terraform-credentials-keychain.exe",
      helperInstallPath: "D:\\Roaming\\terraform.d\\plugins\\terraform-credentials-keychain.exe",
      pluginDirs: [
        "D:\\Roaming\\terraform.d\\plugins",
        "D:\\Roaming\\terraform.d\\plugins\\windows_amd64",
      ],
      terraformPluginDirs: [
        "D:\\Roaming\\terraform.d\\plugins",
        "D:\\Roaming\\terraform.d\\plugins\\windows_amd64",
      ],
      terraformConfigFile: "D:\\Roaming\\terraform.rc",
      tofuConfigFile: "D:\\Roaming\\tofu.rc",
      tofuXdgConfigFile: undefined,
      terraformConfigDir: "D:\\Roaming\\terraform.d",
      tofuConfigDir: "D:\\Roaming\\terraform.d",
      configFileOverride: undefined,
    });
  });

  test("APPDATA unset: %USERPROFILE%\\AppData\\Roaming under the home directory", () => {
    const locations = win();
    assert.equal(locations.terraformConfigFile, appData("terraform.rc"));
    assert.equal(locations.tofuConfigFile, appData("tofu.rc"));
    assert.equal(
      locations.helperInstallPath,
      appData("terraform.d", "plugins", "terraform-credentials-keychain.exe"),
    );
    assert.equal(locations.terraformConfigDir, appData("terraform.d"));
  });

  test('APPDATA="" gives the same locations as no APPDATA', () => {
    for (const files of [[], [appData("terraform.rc")], [appData("tofu.rc")]]) {
      assert.deepEqual(win({ env: { APPDATA: "" }, files }), win({ files }));
    }
  });

  test("arm64 uses the windows_arm64 subdirectory", () => {
    assert.deepEqual(win({ env, arch: "arm64" }).pluginDirs, [
      appData("terraform.d", "plugins"),
      appData("terraform.d", "plugins", "windows_arm64"),
    ]);
  });

  test("TF_CLI_CONFIG_FILE overrides terraform.rc and tofu.rc", () => {
    const chosen = "C:\\ci\\cli.tfrc";
    assert.deepEqual(
      winConfigFiles({
        env: { ...env, TF_CLI_CONFIG_FILE: chosen },
        files: [appData("terraform.rc"), appData("tofu.rc")],
      }),
      { terraformConfigFile: chosen, tofuConfigFile: chosen, configFileFromEnv: true },
    );
  });

  test('TF_CLI_CONFIG_FILE="" is unset', () => {
    assert.deepEqual(
      win({ env: { ...env, TF_CLI_CONFIG_FILE: "" }, files: [appData("terraform.rc")] }),
      win({ env, files: [appData("terraform.rc")] }),
    );
  });

  test("XDG variables change nothing on Windows", () => {
    assert.deepEqual(
      win({ env: { ...env, XDG_CONFIG_HOME: "C:\\xdg\\config", XDG_DATA_HOME: "C:\\xdg\\data" } }),
      win({ env }),
    );
  });
});

describe("OpenTofu's XDG tofurc, named whether or not it is read", () => {
  test("XDG_CONFIG_HOME set: $XDG_CONFIG_HOME/opentofu/tofurc, even while ~/.tofurc wins", () => {
    const located = locate({ env: { XDG_CONFIG_HOME: "/x" }, files: [home(".tofurc")] });
    assert.equal(located.tofuXdgConfigFile, "/x/opentofu/tofurc");
    assert.equal(located.tofuConfigFile, home(".tofurc"));
  });

  test("XDG_CONFIG_HOME unset or empty, or Windows: none", () => {
    assert.equal(locate().tofuXdgConfigFile, undefined);
    assert.equal(locate({ env: { XDG_CONFIG_HOME: "" } }).tofuXdgConfigFile, undefined);
    const windows = locate({ platform: "win32", env: { XDG_CONFIG_HOME: "/x" } });
    assert.equal(windows.tofuXdgConfigFile, undefined);
  });
});
