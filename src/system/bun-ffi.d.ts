/**
 * The part of Bun's `bun:ffi` that core-dumps.ts uses; the project carries no Bun types
 * (it is type-checked against Node's), so the few declarations it needs are written here.
 */
declare module "bun:ffi" {
  export const FFIType: {
    readonly i32: number;
    readonly u64: number;
    readonly ptr: number;
  };
  interface Library<Symbols> {
    readonly symbols: Symbols;
    close(): void;
  }
  export function dlopen<Names extends string>(
    path: string,
    symbols: Record<Names, { args: readonly number[]; returns: number }>,
  ): Library<Record<Names, (...args: unknown[]) => number>>;
}
