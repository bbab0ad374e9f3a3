/** The platforms a binary can be built for, with where their parts come from in the npm registry. */

export interface Target {
  readonly os: "linux" | "darwin" | "win32";
  /** `bun build --compile --target` for this platform. */
  readonly bunTarget: string;
  /**
   * The Bun runtime the executable is made of, fetched from the npm registry at the pinned
   * Bun version and given to `--compile-executable-path`, so Bun never downloads one.
   * x64 takes the `-baseline` builds: the others need AVX2, which not every x64 CPU that
   * runs Terraform has.
   */
  readonly bunPackage: string;
  /** Path of the runtime inside `bunPackage`. */
  readonly bunBinary: string;
  /**
   * The @napi-rs/keyring addon the binary embeds, where it still needs one (macOS). Linux
   * binaries speak D-Bus themselves and Windows binaries call advapi32 through Bun's FFI:
   * neither embeds native code.
   */
  readonly keyring?: { readonly package: string; readonly file: string };
  readonly exeSuffix: "" | ".exe";
}

export const TARGET_NAMES = [
  "linux-x64",
  "linux-arm64",
  "darwin-x64",
  "darwin-arm64",
  "win-x64",
  "win-arm64",
] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export const TARGETS: Readonly<Record<TargetName, Target>> = {
  "linux-x64": {
    os: "linux",
    bunTarget: "bun-linux-x64-baseline",
    bunPackage: "@oven/bun-linux-x64-baseline",
    bunBinary: "bin/bun",
    exeSuffix: "",
  },
  "linux-arm64": {
    os: "linux",
    bunTarget: "bun-linux-arm64",
    bunPackage: "@oven/bun-linux-aarch64",
    bunBinary: "bin/bun",
    exeSuffix: "",
  },
  "darwin-x64": {
    os: "darwin",
    bunTarget: "bun-darwin-x64-baseline",
    bunPackage: "@oven/bun-darwin-x64-baseline",
    bunBinary: "bin/bun",
    keyring: { package: "@napi-rs/keyring-darwin-x64", file: "keyring.darwin-x64.node" },
    exeSuffix: "",
  },
  "darwin-arm64": {
    os: "darwin",
    bunTarget: "bun-darwin-arm64",
    bunPackage: "@oven/bun-darwin-aarch64",
    bunBinary: "bin/bun",
    keyring: { package: "@napi-rs/keyring-darwin-arm64", file: "keyring.darwin-arm64.node" },
    exeSuffix: "",
  },
  "win-x64": {
    os: "win32",
    bunTarget: "bun-windows-x64-baseline",
    bunPackage: "@oven/bun-windows-x64-baseline",
    bunBinary: "bin/bun.exe",
    exeSuffix: ".exe",
  },
  "win-arm64": {
    os: "win32",
    bunTarget: "bun-windows-arm64",
    bunPackage: "@oven/bun-windows-aarch64",
    bunBinary: "bin/bun.exe",
    exeSuffix: ".exe",
  },
};

/** The target this machine runs, which is the default. */
export function hostTarget(): TargetName {
  const name = `${process.platform === "win32" ? "win" : process.platform}-${process.arch}`;
  const target = TARGET_NAMES.find((known) => known === name);
  if (target === undefined) throw new Error(`no build target for this machine (${name})`);
  return target;
}
