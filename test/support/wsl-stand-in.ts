import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startWinePrefix, type WinePrefix } from "./wine-prefix.ts";

const execFileAsync = promisify(execFile);

/** The win-x64 build, which the stand-in's Windows side installs (scripts/build.ts). */
export const WINDOWS_BUILD = path.resolve(
  import.meta.dirname,
  "../../dist/win-x64/terraform-credentials-keychain.exe",
);

/** The Windows helper as `install` puts it on the Windows side, under %APPDATA%. */
export const WINDOWS_HELPER_IN_APPDATA = "terraform.d/plugins/terraform-credentials-keychain.exe";

/**
 * This machine as a WSL, through the helper's stand-ins (docs/reference.md): a directory
 * that holds what WSL has at "/" (the interop entry, /etc/wsl.conf, the drive /mnt/c), and
 * Wine as the Windows side, its drive_c that drive.
 */
export interface WslStandIn {
  /** The helper's environment on the WSL side: the stand-ins set, Wine's prefix with them. */
  readonly env: Record<string, string>;
  /** The Windows side. */
  readonly wine: WinePrefix;
  /** %APPDATA% of the Windows user, as a path here. */
  readonly appData: string;
  /** Runs the Windows helper on the Windows side, as Terraform on Windows does: its argv. */
  windowsHelperCommand(): [string, ...string[]];
  /** A root like this one but whose interop entry says `disabled`, and its env. */
  readonly interopOffEnv: Record<string, string>;
  close(): Promise<void>;
}

/**
 * A WSL stand-in whose Windows user is `user` (so that %APPDATA% holds its name), with the
 * Windows helper installed on the Windows side by its own `install`, unless `install` is
 * false. Takes as long as a Wine prefix does: once per test file.
 */
export async function startWslStandIn(
  options: { readonly user?: string; readonly install?: boolean } = {},
): Promise<WslStandIn> {
  const user = options.user ?? "wsl-user";
  const wine = await startWinePrefix({ user });
  const roots = mkdtempSync(path.join(os.tmpdir(), "tfck-wsl-"));
  const close = async () => {
    await wine.close();
    rmSync(roots, { recursive: true, force: true });
  };
  try {
    const makeRoot = (name: string, interop: "enabled" | "disabled") => {
      const root = path.join(roots, name);
      const binfmt = path.join(root, "proc/sys/fs/binfmt_misc");
      mkdirSync(binfmt, { recursive: true });
      // As WSL's binfmt_misc entry reads: its state, then how it runs an .exe ("MZ").
      writeFileSync(
        path.join(binfmt, "WSLInterop"),
        `${interop}\ninterpreter /init\nflags: PF\noffset 0\nmagic 4d5a\n`,
      );
      mkdirSync(path.join(root, "etc"));
      writeFileSync(path.join(root, "etc/wsl.conf"), "[boot]\nsystemd=true\n");
      mkdirSync(path.join(root, "mnt"));
      symlinkSync(wine.driveC, path.join(root, "mnt/c"));
      return {
        ...wine.env,
        TF_CREDENTIALS_KEYCHAIN_WSL_ROOT: root,
        TF_CREDENTIALS_KEYCHAIN_WSL_LAUNCHER: wine.loader,
      };
    };
    const env = makeRoot("wsl", "enabled");
    const interopOffEnv = makeRoot("interop-off", "disabled");
    // Wine names the profile's folder after the user exactly; winepath would print a
    // non-ASCII name in the console's code page.
    const appData = path.join(wine.driveC, "users", user, "AppData/Roaming");
    if (options.install !== false) {
      await execFileAsync(wine.loader, [WINDOWS_BUILD, "install"], {
        env: wine.env,
        timeout: 120_000,
      });
    }
    return {
      env,
      wine,
      appData,
      windowsHelperCommand: () => wine.command(path.join(appData, WINDOWS_HELPER_IN_APPDATA)),
      interopOffEnv,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
