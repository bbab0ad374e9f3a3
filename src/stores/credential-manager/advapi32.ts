/**
 * Windows Credential Manager through advapi32.dll, called with Bun's FFI: the one module
 * that holds native pointers, the CREDENTIALW layout and the frees. What leaves it is
 * strings, numbers and copied bytes.
 *
 * Loaded only on Windows, by the built executable (Node has no `bun:ffi`).
 */
import { dlopen, ptr, read, toArrayBuffer, type Pointer } from "bun:ffi";
import {
  ERROR_NOT_FOUND,
  Win32Error,
  type CredentialManagerApi,
  type CredentialSummary,
} from "./api.ts";

const CRED_TYPE_GENERIC = 1;
// What @napi-rs/keyring 2.1.2 (windows-native-keyring-store 1.0) writes, and so what entries
// of earlier versions have: the credential roams with the user's profile in a domain and
// stays on this machine otherwise.
const CRED_PERSIST_ENTERPRISE = 3;

/*
 * typedef struct _CREDENTIALW {
 *   DWORD    Flags;                 //  0
 *   DWORD    Type;                  //  4
 *   LPWSTR   TargetName;            //  8
 *   LPWSTR   Comment;               // 16
 *   FILETIME LastWritten;           // 24  (two DWORDs)
 *   DWORD    CredentialBlobSize;    // 32  (4 bytes of padding follow)
 *   LPBYTE   CredentialBlob;        // 40
 *   DWORD    Persist;               // 48
 *   DWORD    AttributeCount;        // 52
 *   PCREDENTIAL_ATTRIBUTEW Attributes; // 56
 *   LPWSTR   TargetAlias;           // 64
 *   LPWSTR   UserName;              // 72
 * } CREDENTIALW;                    // 80 bytes
 *
 * x64 and ARM64 Windows share this layout: both are LLP64 (DWORD 4 bytes, pointers 8) with
 * the same natural alignment, so the pointer after CredentialBlobSize sits at 40 on both.
 * A 32-bit Windows would differ, and there is no such target.
 */
const CREDENTIALW = {
  Flags: 0,
  Type: 4,
  TargetName: 8,
  Comment: 16,
  CredentialBlobSize: 32,
  CredentialBlob: 40,
  Persist: 48,
  AttributeCount: 52,
  Attributes: 56,
  TargetAlias: 64,
  UserName: 72,
  size: 80,
} as const;

/** Credential Manager limits a string to 32767 characters; a longer one is no string of its. */
const MAX_STRING_UNITS = 32767;

/** Opens advapi32.dll and kernel32.dll (both always loaded in a Windows process). */
export function openAdvapi32(): CredentialManagerApi {
  const advapi32 = dlopen("advapi32.dll", {
    // BOOL CredReadW(LPCWSTR TargetName, DWORD Type, DWORD Flags, PCREDENTIALW *Credential);
    CredReadW: { args: ["ptr", "u32", "u32", "ptr"], returns: "i32" },
    // BOOL CredWriteW(PCREDENTIALW Credential, DWORD Flags);
    CredWriteW: { args: ["ptr", "u32"], returns: "i32" },
    // BOOL CredDeleteW(LPCWSTR TargetName, DWORD Type, DWORD Flags);
    CredDeleteW: { args: ["ptr", "u32", "u32"], returns: "i32" },
    // BOOL CredEnumerateW(LPCWSTR Filter, DWORD Flags, DWORD *Count, PCREDENTIALW **Credential);
    CredEnumerateW: { args: ["ptr", "u32", "ptr", "ptr"], returns: "i32" },
    // void CredFree(PVOID Buffer);
    CredFree: { args: ["ptr"], returns: "void" },
  }).symbols;
  // DWORD GetLastError(void);
  const { GetLastError } = dlopen("kernel32.dll", {
    GetLastError: { args: [], returns: "u32" },
  }).symbols;

  // After a failure the thread's last error is read by the very next native call: no JS
  // that allocates (and so may run the collector, which calls Windows) comes between.

  return {
    read(targetName) {
      const name = wideString(targetName);
      const out = new BigUint64Array(1);
      if (advapi32.CredReadW(name, CRED_TYPE_GENERIC, 0, out) === 0) {
        const error = GetLastError() ?? 0;
        if (error === ERROR_NOT_FOUND) return undefined;
        throw new Win32Error("CredReadW", error);
      }
      const credential = pointerIn(out);
      try {
        const userName = readWideString(read.ptr(credential, CREDENTIALW.UserName));
        const size = read.u32(credential, CREDENTIALW.CredentialBlobSize);
        if (size === 0) return { userName, blob: new Uint8Array(0) };
        const blob = read.ptr(credential, CREDENTIALW.CredentialBlob) as Pointer;
        // A copy: the memory is Credential Manager's and goes with CredFree.
        return { userName, blob: new Uint8Array(toArrayBuffer(blob, 0, size)).slice() };
      } finally {
        advapi32.CredFree(credential);
      }
    },

    write(targetName, userName, blob) {
      const name = wideString(targetName);
      const user = wideString(userName);
      // An empty comment and alias, not NULL: the entry format of docs/reference.md, which
      // earlier versions wrote and read.
      const empty = wideString("");
      const bytes = blob.byteLength === 0 ? new Uint8Array(1) : blob;
      const struct = genericCredential({ name, user, empty, bytes, size: blob.byteLength });
      // Pinned for the call: the struct holds only their addresses, which no collector sees.
      const buffers = [name, user, empty, bytes];
      pinned.add(buffers);
      const written = advapi32.CredWriteW(struct, 0);
      const error = written === 0 ? (GetLastError() ?? 0) : 0;
      pinned.delete(buffers);
      if (written === 0) throw new Win32Error("CredWriteW", error);
    },

    delete(targetName) {
      const name = wideString(targetName);
      if (advapi32.CredDeleteW(name, CRED_TYPE_GENERIC, 0) !== 0) return true;
      const error = GetLastError() ?? 0;
      if (error === ERROR_NOT_FOUND) return false;
      throw new Win32Error("CredDeleteW", error);
    },

    list() {
      const count = new Uint32Array(1);
      const out = new BigUint64Array(1);
      // A NULL filter: every credential. A filter is a prefix and a final "*" (Wine takes "*"
      // nowhere else), and ours share a suffix, not a prefix.
      if (advapi32.CredEnumerateW(null, 0, count, out) === 0) {
        const error = GetLastError() ?? 0;
        // The user has no credential at all.
        if (error === ERROR_NOT_FOUND) return [];
        throw new Win32Error("CredEnumerateW", error);
      }
      const array = pointerIn(out);
      try {
        const found: CredentialSummary[] = [];
        for (let index = 0; index < (count[0] ?? 0); index++) {
          const credential = read.ptr(array, index * 8) as Pointer;
          if (read.u32(credential, CREDENTIALW.Type) !== CRED_TYPE_GENERIC) continue;
          found.push({
            targetName: readWideString(read.ptr(credential, CREDENTIALW.TargetName)),
            userName: readWideString(read.ptr(credential, CREDENTIALW.UserName)),
            blobSize: read.u32(credential, CREDENTIALW.CredentialBlobSize),
          });
        }
        return found;
      } finally {
        // One free for the array and every credential in it.
        advapi32.CredFree(array);
      }
    },
  };
}

/** A CREDENTIALW of type generic, persisted for the user, pointing at the given buffers. */
function genericCredential(parts: {
  readonly name: Uint8Array;
  readonly user: Uint8Array;
  readonly empty: Uint8Array;
  readonly bytes: Uint8Array;
  readonly size: number;
}): DataView {
  const struct = new DataView(new ArrayBuffer(CREDENTIALW.size));
  const address = (view: ArrayBufferView) => BigInt(ptr(view));
  struct.setUint32(CREDENTIALW.Flags, 0, true);
  struct.setUint32(CREDENTIALW.Type, CRED_TYPE_GENERIC, true);
  struct.setBigUint64(CREDENTIALW.TargetName, address(parts.name), true);
  struct.setBigUint64(CREDENTIALW.Comment, address(parts.empty), true);
  struct.setUint32(CREDENTIALW.CredentialBlobSize, parts.size, true);
  struct.setBigUint64(CREDENTIALW.CredentialBlob, address(parts.bytes), true);
  struct.setUint32(CREDENTIALW.Persist, CRED_PERSIST_ENTERPRISE, true);
  struct.setUint32(CREDENTIALW.AttributeCount, 0, true);
  struct.setBigUint64(CREDENTIALW.Attributes, 0n, true);
  struct.setBigUint64(CREDENTIALW.TargetAlias, address(parts.empty), true);
  struct.setBigUint64(CREDENTIALW.UserName, address(parts.user), true);
  return struct;
}

/** `text` as UTF-16LE with its NUL terminator, as an LPCWSTR wants it. */
function wideString(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(`${text}\0`, "utf16le"));
}

/** The NUL-terminated UTF-16 string at `address`; "" for NULL. */
function readWideString(address: number): string {
  if (address === 0) return "";
  const start = address as Pointer;
  let units = 0;
  while (units < MAX_STRING_UNITS && read.u16(start, units * 2) !== 0) units++;
  return Buffer.from(toArrayBuffer(start, 0, units * 2)).toString("utf16le");
}

/** The pointer an out-parameter received. */
function pointerIn(out: BigUint64Array): Pointer {
  return Number(out[0] ?? 0n) as Pointer;
}

/** Buffers whose addresses Windows is reading, kept reachable until it is done. */
const pinned = new Set<unknown>();
