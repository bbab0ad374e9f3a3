/**
 * A small reader for 64-bit Mach-O executables: enough to check the code signature that
 * macOS checks at exec (every page hash against the file) and to remove one that is wrong.
 * Bun cross-builds darwin-arm64 with a fresh ad hoc signature, but darwin-x64 keeps the
 * runtime's original signature over changed bytes, which macOS refuses to run.
 */
import { createHash } from "node:crypto";

const MH_MAGIC_64 = 0xfeedfacf;
const HEADER_SIZE = 32;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CPU_TYPES: Readonly<Record<number, string>> = { 0x01000007: "x64", 0x0100000c: "arm64" };
const HASHES: Readonly<Record<number, { name: string; size: number }>> = {
  1: { name: "sha1", size: 20 },
  2: { name: "sha256", size: 32 },
};

export interface LoadCommand {
  readonly cmd: number;
  readonly offset: number;
  readonly size: number;
}

export interface Segment {
  readonly name: string;
  /** Where the segment's command is, to rewrite it. */
  readonly commandOffset: number;
  readonly fileoff: number;
  readonly filesize: number;
}

export interface MachO {
  readonly cpu: string;
  readonly commands: readonly LoadCommand[];
  readonly segments: readonly Segment[];
  /** LC_CODE_SIGNATURE's data, when the file has one. */
  readonly signature?: {
    readonly command: LoadCommand;
    readonly offset: number;
    readonly size: number;
  };
}

export function parseMachO(file: Buffer): MachO {
  if (file.length < HEADER_SIZE || file.readUInt32LE(0) !== MH_MAGIC_64) {
    throw new Error("not a 64-bit little-endian Mach-O file");
  }
  const cpuType = file.readUInt32LE(4);
  const ncmds = file.readUInt32LE(16);
  const commands: LoadCommand[] = [];
  const segments: Segment[] = [];
  let signature: MachO["signature"];
  let offset = HEADER_SIZE;
  for (let i = 0; i < ncmds; i++) {
    const command = { cmd: file.readUInt32LE(offset), offset, size: file.readUInt32LE(offset + 4) };
    if (command.size < 8 || offset + command.size > file.length) {
      throw new Error(`load command ${i} runs past the file`);
    }
    commands.push(command);
    if (command.cmd === LC_SEGMENT_64) {
      segments.push({
        name: file.toString("latin1", offset + 8, offset + 24).replace(/\0+$/, ""),
        commandOffset: offset,
        fileoff: Number(file.readBigUInt64LE(offset + 40)),
        filesize: Number(file.readBigUInt64LE(offset + 48)),
      });
    } else if (command.cmd === LC_CODE_SIGNATURE) {
      signature = {
        command,
        offset: file.readUInt32LE(offset + 8),
        size: file.readUInt32LE(offset + 12),
      };
    }
    offset += command.size;
  }
  return { cpu: CPU_TYPES[cpuType] ?? `cputype ${cpuType}`, commands, segments, signature };
}

export interface CodeDirectoryCheck {
  readonly hash: string;
  readonly pages: number;
  /** Pages whose hash does not match the file. */
  readonly mismatched: number;
  /** Where the signed range ends, which must be where the signature starts. */
  readonly codeLimit: number;
}

export type SignatureCheck =
  | { readonly present: false }
  | {
      readonly present: true;
      readonly offset: number;
      readonly directories: readonly CodeDirectoryCheck[];
    };

/** True when the file is signed and the signature matches the whole file before it. */
export function isValidSignature(check: SignatureCheck): boolean {
  return (
    check.present &&
    check.directories.every(
      (directory) => directory.mismatched === 0 && directory.codeLimit === check.offset,
    )
  );
}

/** Checks every page hash of every code directory in the file's signature. */
export function checkSignature(file: Buffer): SignatureCheck {
  const { signature } = parseMachO(file);
  if (signature === undefined) return { present: false };
  if (signature.offset + signature.size > file.length) {
    throw new Error("the code signature runs past the file");
  }
  const blob = file.subarray(signature.offset, signature.offset + signature.size);
  if (blob.readUInt32BE(0) !== CSMAGIC_EMBEDDED_SIGNATURE) {
    throw new Error("the code signature is not an embedded signature blob");
  }
  const count = blob.readUInt32BE(8);
  const directories: CodeDirectoryCheck[] = [];
  for (let i = 0; i < count; i++) {
    const start = blob.readUInt32BE(12 + i * 8 + 4);
    if (blob.readUInt32BE(start) !== CSMAGIC_CODEDIRECTORY) continue;
    const hashOffset = blob.readUInt32BE(start + 16);
    const nCodeSlots = blob.readUInt32BE(start + 28);
    const codeLimit = blob.readUInt32BE(start + 32);
    const hashSize = blob.readUInt8(start + 36);
    const hashType = HASHES[blob.readUInt8(start + 37)];
    const pageSize = 2 ** blob.readUInt8(start + 39);
    if (hashType === undefined || hashType.size !== hashSize) {
      throw new Error(`code directory ${i} uses an unknown hash`);
    }
    let mismatched = 0;
    for (let page = 0; page < nCodeSlots; page++) {
      const from = page * pageSize;
      const actual = createHash(hashType.name)
        .update(file.subarray(from, Math.min(from + pageSize, codeLimit)))
        .digest();
      const at = start + hashOffset + page * hashSize;
      if (!actual.equals(blob.subarray(at, at + hashSize))) mismatched++;
    }
    // Slots that do not cover the whole signed range leave pages unchecked: count them.
    const uncovered = Math.ceil(codeLimit / pageSize) - nCodeSlots;
    directories.push({
      hash: hashType.name,
      pages: nCodeSlots,
      mismatched: mismatched + Math.max(0, uncovered),
      codeLimit,
    });
  }
  if (directories.length === 0) throw new Error("the code signature holds no code directory");
  return { present: true, offset: signature.offset, directories };
}

/**
 * The file without its code signature, as `codesign --remove-signature` leaves it: the
 * signature cut from the end of __LINKEDIT, the segment shrunk to match, and the load
 * command removed. A copy; `file` is not changed.
 */
export function withoutSignature(file: Buffer): Buffer {
  const macho = parseMachO(file);
  const { signature } = macho;
  if (signature === undefined) return Buffer.from(file);
  const linkedit = macho.segments.find((segment) => segment.name === "__LINKEDIT");
  const end = signature.offset + signature.size;
  if (
    linkedit === undefined ||
    signature.offset < linkedit.fileoff ||
    end !== linkedit.fileoff + linkedit.filesize ||
    end !== file.length
  ) {
    throw new Error("the code signature is not at the end of __LINKEDIT and of the file");
  }
  const out = Buffer.from(file.subarray(0, signature.offset));
  out.writeBigUInt64LE(BigInt(signature.offset - linkedit.fileoff), linkedit.commandOffset + 48);
  const { command } = signature;
  const commandsEnd = HEADER_SIZE + out.readUInt32LE(20);
  out.copy(out, command.offset, command.offset + command.size, commandsEnd);
  out.fill(0, commandsEnd - command.size, commandsEnd);
  out.writeUInt32LE(out.readUInt32LE(16) - 1, 16);
  out.writeUInt32LE(out.readUInt32LE(20) - command.size, 20);
  return out;
}
