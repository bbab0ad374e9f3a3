import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import {
  buildWindowsHelper,
  startWinePrefix,
  wineMissing,
  type WinePrefix,
} from "./wine-prefix.ts";

const execFileAsync = promisify(execFile);

/** The Windows helper as `install` puts it on the Windows side, under %APPDATA%. */
export const WINDOWS_HELPER_IN_APPDATA = "terraform.d/plugins/terraform-credentials-keychain.exe";

/**
 * Set by the workflow's WSL job: the tests run in a real WSL against the real Windows side
 * (the Windows helper installed there), with no stand-in but for interop switched off.
 */
export const REAL_WSL = process.env.TFCK_TEST_REAL_WSL === "1";

/** Why the WSL tests cannot run here, as one SKIP line; undefined when they can. */
export function wslMissing(): string | undefined {
  if (REAL_WSL) return undefined;
  return process.platform === "linux" ? wineMissing() : "SKIP: Wine runs on Linux only";
}

/** A WSL whose Windows side has the Windows helper installed: real, or the stand-in. */
export interface WslUnderTest {
  /** The helper's environment on the WSL side, with a private HOME. */
  readonly env: Record<string, string>;
  readonly home: string;
  /** %APPDATA% of the Windows user, as a path here. */
  readonly appData: string;
  /** The Windows helper's command line, run on the Windows side as Terraform on Windows runs it. */
  windowsHelperCommand(): [string, ...string[]];
  /** The environment for running it so. */
  readonly windowsEnv: Record<string, string>;
  /** The helper's environment in a WSL whose interop entry says `disabled`. */
  readonly interopOffEnv: Record<string, string>;
  close(): Promise<void>;
}

/**
 * This machine as a WSL, through the helper's stand-ins (docs/reference.md): a directory
 * that holds what WSL has at "/" (the interop entry, /etc/wsl.conf, the drive /mnt/c), and
 * Wine as the Windows side, its drive_c that drive.
 */
export interface WslStandIn extends WslUnderTest {
  /** The Windows side. */
  readonly wine: WinePrefix;
}

/** The real WSL when REAL_WSL, else the stand-in with Wine. */
export function startWslUnderTest(): Promise<WslUnderTest> {
  return REAL_WSL ? startRealWsl() : startWslStandIn();
}

/** A root under `dir` whose WSL interop entry says `interop`, its drive C: `driveC`. */
function makeRoot(dir: string, interop: "enabled" | "disabled", driveC: string): string {
  const binfmt = path.join(dir, "proc/sys/fs/binfmt_misc");
  mkdirSync(binfmt, { recursive: true });
  // As WSL's binfmt_misc entry reads: its state, then how it runs an .exe ("MZ").
  writeFileSync(
    path.join(binfmt, "WSLInterop"),
    `${interop}\ninterpreter /init\nflags: PF\noffset 0\nmagic 4d5a\n`,
  );
  mkdirSync(path.join(dir, "etc"));
  writeFileSync(path.join(dir, "etc/wsl.conf"), "[boot]\nsystemd=true\n");
  mkdirSync(path.join(dir, "mnt"));
  symlinkSync(driveC, path.join(dir, "mnt/c"));
  return dir;
}

/** The real WSL of the workflow's job: its interop, and a private HOME. */
async function startRealWsl(): Promise<WslUnderTest> {
  const sandbox = mkdtempSync(path.join(os.tmpdir(), "tfck-wsl-"));
  const home = path.join(sandbox, "home");
  mkdirSync(home);
  const pass = (name: string) => {
    const value = process.env[name];
    return value === undefined ? {} : { [name]: value };
  };
  // WSL_INTEROP names the socket through which WSL 2 runs Windows programs.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    HOME: home,
    ...pass("WSL_INTEROP"),
    ...pass("WSL_DISTRO_NAME"),
    ...pass("WSLENV"),
  };
  const appDataWindows = execFileSync("cmd.exe", ["/d", "/c", "echo %APPDATA%"], {
    cwd: "/mnt/c",
    encoding: "utf8",
  }).trim();
  const appData = execFileSync("wslpath", ["-u", appDataWindows], { encoding: "utf8" }).trim();
  const off = makeRoot(path.join(sandbox, "interop-off"), "disabled", "/mnt/c");
  return {
    env,
    home,
    appData,
    windowsHelperCommand: () => [path.join(appData, WINDOWS_HELPER_IN_APPDATA)],
    windowsEnv: env,
    interopOffEnv: { ...env, TF_CREDENTIALS_KEYCHAIN_WSL_ROOT: off },
    close: () => {
      rmSync(sandbox, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

/**
 * A WSL stand-in whose Windows user is `user` (so that %APPDATA% holds its name), with the
 * win-x64 build, built now, installed on the Windows side by its own `install`, unless
 * `install` is false. Takes as long as a Wine prefix does: once per test file.
 */
export async function startWslStandIn(
  options: { readonly user?: string; readonly install?: boolean } = {},
): Promise<WslStandIn> {
  const windowsBuild = buildWindowsHelper();
  const user = options.user ?? "wsl-user";
  const wine = await startWinePrefix({ user });
  const roots = mkdtempSync(path.join(os.tmpdir(), "tfck-wsl-"));
  const close = async () => {
    await wine.close();
    rmSync(roots, { recursive: true, force: true });
  };
  try {
    const standIn = (name: string, interop: "enabled" | "disabled") => ({
      ...wine.env,
      TF_CREDENTIALS_KEYCHAIN_WSL_ROOT: makeRoot(path.join(roots, name), interop, wine.driveC),
      TF_CREDENTIALS_KEYCHAIN_WSL_LAUNCHER: wine.loader,
    });
    const env = standIn("wsl", "enabled");
    const interopOffEnv = standIn("interop-off", "disabled");
    // Wine names the profile's folder after the user exactly; winepath would print a
    // non-ASCII name in the console's code page.
    const appData = path.join(wine.driveC, "users", user, "AppData/Roaming");
    if (options.install !== false) {
      await execFileAsync(wine.loader, [windowsBuild, "install"], {
        env: wine.env,
        timeout: 120_000,
      });
    }
    return {
      env,
      home: wine.env.HOME!,
      wine,
      windowsEnv: wine.env,
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
