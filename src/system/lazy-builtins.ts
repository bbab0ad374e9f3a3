import process from "node:process";

/**
 * Built-in modules that most calls never use, loaded on first use: in the built executable
 * a static import is paid by every call (node:url ~1 ms, node:os ~0.2 ms), and a first use
 * through here costs about twice the import (docs/speed.md).
 */
export function builtin<Name extends "node:url" | "node:os">(
  name: Name,
): ReturnType<typeof process.getBuiltinModule<Name>> {
  return process.getBuiltinModule(name);
}
