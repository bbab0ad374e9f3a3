/**
 * The part of Bun's `bun:ffi` that stores/credential-manager/advapi32.ts and
 * system/core-dumps.ts use, as Bun 1.4.5 documents it: the project type-checks against
 * Node's types, and only the built executable has Bun.
 */
declare module "bun:ffi" {
  /** A native address; Bun represents it as a number. */
  export type Pointer = number & { readonly __pointer: unique symbol };

  type FFITypeName = "ptr" | "u32" | "i32" | "u64" | "void";
  interface FFIFunction {
    readonly args: readonly FFITypeName[];
    readonly returns: FFITypeName;
  }

  export function dlopen<Fns extends Record<string, FFIFunction>>(
    path: string,
    symbols: Fns,
  ): {
    // Arguments typed "ptr" take a TypedArray (Bun passes its address) or a Pointer.
    symbols: {
      [Name in keyof Fns]: (
        ...args: (ArrayBufferView | Pointer | number | bigint | null)[]
      ) => number | undefined;
    };
    close(): void;
  };

  /** The address of a TypedArray's bytes, valid while the array is referenced. */
  export function ptr(view: ArrayBufferView, byteOffset?: number): Pointer;

  /** A view of native memory, not a copy: copy what must outlive the memory. */
  export function toArrayBuffer(
    pointer: Pointer,
    byteOffset: number,
    byteLength: number,
  ): ArrayBuffer;

  export const read: {
    u16(pointer: Pointer, byteOffset: number): number;
    u32(pointer: Pointer, byteOffset: number): number;
    ptr(pointer: Pointer, byteOffset: number): number;
  };
}
