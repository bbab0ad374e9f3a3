import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { executable, onPath } from "./find-command.ts";

const execFileAsync = promisify(execFile);

/** The Debian packages the Windows suite needs, for its SKIP line. */
export const WINE_PACKAGE = "wine64";
export const MINGW_PACKAGE = "gcc-mingw-w64-x86-64";
const MINGW_GCC = "x86_64-w64-mingw32-gcc";
const SOURCES = path.join(import.meta.dirname, "wine");

/**
 * Builds the win-x64 helper now, as the host's build is by scripts/test.sh (a stale binary
 * proves nothing), and returns its path.
 */
export function buildWindowsHelper(): string {
  const root = path.resolve(import.meta.dirname, "../..");
  execFileSync("npx", ["tsx", "scripts/build.ts", "--target", "win-x64"], {
    cwd: root,
    stdio: "pipe",
  });
  return path.join(root, "dist/win-x64/terraform-credentials-keychain.exe");
}

/** A private, set-up Wine prefix whose Credential Manager the Windows build stores into. */
export interface WinePrefix {
  /** Environment for Windows programs run in this prefix. */
  readonly env: Record<string, string>;
  /** %APPDATA% of the prefix's user, as a path on this machine. */
  readonly appData: string;
  /** Wine's loader, which runs a Windows program given after it. */
  readonly loader: string;
  /** The prefix's drive C:, as a directory on this machine. */
  readonly driveC: string;
  /** The command line that runs the Windows program `exe` (a path on this machine). */
  command(exe: string): [string, ...string[]];
  /**
   * A generic credential as any Windows program reads it (CredReadW): its blob's bytes,
   * its LastWritten time and its metadata, or undefined when there is none.
   */
  readCredential(target: string): Promise<StoredCredential | undefined>;
  /** Writes a generic credential as the landed version (the @napi-rs/keyring addon) did. */
  writeLandedCredential(target: string, userName: string, blob: Buffer): Promise<void>;
  /** Whether a program in the prefix can load the DLL `name` (LoadLibraryW). */
  canLoadLibrary(name: string): Promise<boolean>;
  /** Adds the PEM certificate in `pemFile` to the current user's trusted roots. */
  trustRoot(pemFile: string): Promise<void>;
  /** Stops the prefix's wineserver and deletes the prefix. */
  close(): Promise<void>;
}

export interface StoredCredential {
  /** FILETIME of the last write, as a decimal string. */
  readonly lastWritten: string;
  readonly blob: Buffer;
  readonly persist: number;
  readonly flags: number;
  readonly attributeCount: number;
  /** The strings, undefined for NULL. */
  readonly userName: string | undefined;
  readonly comment: string | undefined;
  readonly targetAlias: string | undefined;
}

/**
 * The Visual C++ runtime's DLLs, which Wine has built in and Windows does not: disabled in
 * every prefix, so that the suite runs as on a Windows without the redistributable.
 */
export const VC_RUNTIME_DLLS = ["vcruntime140", "vcruntime140_1", "msvcp140"] as const;

/**
 * Why the Windows suite cannot run on this machine, as one SKIP line that names the package
 * to install; undefined when it can.
 */
export function wineMissing(): string | undefined {
  if (findWine() === undefined) {
    return `SKIP: wine64 is not installed, so the Windows build is not run (apt-get install ${WINE_PACKAGE})`;
  }
  if (onPath(MINGW_GCC) === undefined) {
    return `SKIP: ${MINGW_GCC} is not installed, so Wine cannot be given ProcessPrng (apt-get install ${MINGW_PACKAGE})`;
  }
  return undefined;
}

/**
 * Makes a Wine prefix in a temp directory, as Windows 10, for the Windows user `user` (Wine
 * names the profile's folder after $USER: C:\users\USER), with the stand-in
 * bcryptprimitives.dll in its system32 (see test/support/wine/bcryptprimitives.c), the
 * Visual C++ runtime disabled, and the credential reader and writer compiled beside it. HOME points into the temp directory too, so Wine
 * leaves nothing in the user's own. Takes 5-15 s: do it once per test file, and close it.
 */
export async function startWinePrefix(
  options: { readonly user?: string } = {},
): Promise<WinePrefix> {
  const wine = findWine();
  if (wine === undefined) throw new Error(wineMissing());
  const sandbox = mkdtempSync(path.join(os.tmpdir(), "tfck-wine-"));
  const home = path.join(sandbox, "home");
  mkdirSync(home, { mode: 0o700 });
  const prefixDir = path.join(sandbox, "prefix");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    HOME: home,
    WINEPREFIX: prefixDir,
    WINEARCH: "win64",
    // Wine's own diagnostics would land on the helper's stderr, which the tests check.
    WINEDEBUG: "-all",
    // No Mono or Gecko installer and no desktop menu entries: none is needed, all take time.
    WINEDLLOVERRIDES: `mscoree,mshtml,winemenubuilder.exe,${VC_RUNTIME_DLLS.join(",")}=d`,
    ...(options.user === undefined ? {} : { USER: options.user }),
  };
  const run = (file: string, args: readonly string[]) =>
    execFileAsync(file, args, { env, timeout: 60_000, encoding: "utf8" });
  let keeper: ChildProcess | undefined;
  const close = async () => {
    if (keeper !== undefined && keeper.exitCode === null) {
      const exited = new Promise((resolve) => keeper?.once("exit", resolve));
      keeper.stdin?.end("exit\r\n");
      await exited;
    }
    if (wine.server !== undefined) spawnSync(wine.server, ["-k"], { env, stdio: "ignore" });
    rmSync(sandbox, { recursive: true, force: true });
  };

  try {
    const tool = (name: string) => path.join(sandbox, `${name}.exe`);
    const toolsBuilt = Promise.all(
      ["read-credential", "write-credential", "load-library", "trust-root"].map((name) =>
        run(MINGW_GCC, [
          "-municode",
          "-O2",
          "-s",
          "-o",
          tool(name),
          path.join(SOURCES, `${name}.c`),
          "-ladvapi32",
          "-lcrypt32",
        ]),
      ),
    );
    await runDetached(wine.loader, ["wineboot", "-i"], env);
    // Wine's own services (services.exe, explorer.exe, ...) are started by the first program
    // of a session, inherit its stdout and stderr, and stop a few seconds after the last
    // program ends. Were that a helper with pipes, the test would wait for those pipes to
    // close: ~2.5 s per call instead of ~0.1 s. A cmd.exe that waits on its stdin keeps them
    // running, holding no pipe of ours, until close().
    keeper = spawn(wine.loader, ["cmd"], { env, stdio: ["pipe", "ignore", "ignore"] });
    await runDetached(wine.loader, ["winecfg", "-v", "win10"], env);
    await run(MINGW_GCC, [
      "-shared",
      "-O2",
      "-s",
      "-o",
      path.join(prefixDir, "drive_c/windows/system32/bcryptprimitives.dll"),
      path.join(SOURCES, "bcryptprimitives.c"),
      "-ladvapi32",
    ]);
    await toolsBuilt;
    const appDataWindows = (await run(wine.loader, ["cmd", "/c", "echo %APPDATA%"])).stdout.trim();
    const appData = (await run(wine.loader, ["winepath", "-u", appDataWindows])).stdout.trim();

    return {
      env,
      appData,
      loader: wine.loader,
      driveC: path.join(prefixDir, "drive_c"),
      command: (exe) => [wine.loader, exe],
      async readCredential(target) {
        try {
          const { stdout } = await run(wine.loader, [tool("read-credential"), target]);
          const fields = stdout.trim().split(" ");
          const [lastWritten, hex, persist, flags, attributeCount, ...strings] = fields;
          if (hex === undefined || attributeCount === undefined || strings.length !== 3) {
            throw new Error(`read-credential printed ${JSON.stringify(stdout)}`);
          }
          const [userName, comment, targetAlias] = strings.map((field) =>
            field === "-" ? undefined : Buffer.from(field.slice(1), "hex").toString("utf8"),
          );
          return {
            lastWritten: lastWritten!,
            blob: Buffer.from(hex, "hex"),
            persist: Number(persist),
            flags: Number(flags),
            attributeCount: Number(attributeCount),
            userName,
            comment,
            targetAlias,
          };
        } catch (error) {
          if ((error as { code?: unknown }).code === 1) return undefined;
          throw error;
        }
      },
      async writeLandedCredential(target, userName, blob) {
        await run(wine.loader, [tool("write-credential"), target, userName, blob.toString("hex")]);
      },
      async canLoadLibrary(name) {
        try {
          await run(wine.loader, [tool("load-library"), name]);
          return true;
        } catch (error) {
          if ((error as { code?: unknown }).code === 1) return false;
          throw error;
        }
      },
      async trustRoot(pemFile) {
        const der = path.join(sandbox, `root-${Date.now().toString(36)}.der`);
        writeFileSync(der, new X509Certificate(readFileSync(pemFile)).raw);
        await run(wine.loader, [tool("trust-root"), der]);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Runs a Wine program with no pipes, waiting for it to exit (not for its stdout to close:
 * the services it starts would hold that open). Fails on a non-zero exit.
 */
async function runDetached(
  file: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<void> {
  const child = spawn(file, args, { env, stdio: "ignore", timeout: 120_000 });
  const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
  if (code !== 0)
    throw new Error(`${path.basename(file)} ${args.join(" ")} failed: ${code ?? signal}`);
}

interface Wine {
  /** Starts a Windows program: `loader program.exe args...`. */
  readonly loader: string;
  readonly server: string | undefined;
}

/**
 * Debian's wine64 package puts its loader in /usr/lib/wine, not on PATH (the `wine` package
 * adds the wrappers on PATH); other systems have `wine64` or `wine` on PATH.
 */
function findWine(): Wine | undefined {
  const loader = onPath("wine64") ?? onPath("wine") ?? executable("/usr/lib/wine/wine64");
  if (loader === undefined) return undefined;
  const server =
    executable(path.join(path.dirname(realpathSync(loader)), "wineserver")) ?? onPath("wineserver");
  return { loader, server };
}
