/**
 * Credential Manager as the store sees it: names, sizes and copied bytes, no pointer. The
 * FFI behind it is advapi32.ts; tests give the store a fake.
 */

/** A generic credential as `list` sees it: its names and its size, never its blob. */
export interface CredentialSummary {
  readonly targetName: string;
  /** The user name, or "" when it has none. */
  readonly userName: string;
  readonly blobSize: number;
}

/** A generic credential as `read` gives it: its user name and a copy of its blob. */
interface CredentialEntry {
  /** The user name, or "" when it has none. */
  readonly userName: string;
  /** A copy, which the caller may (and should) overwrite when done. */
  readonly blob: Uint8Array;
}

/** Credential Manager's calls for generic credentials, with no pointer in sight. */
export interface CredentialManagerApi {
  /** The generic credential `targetName`; undefined when there is none. */
  read(targetName: string): CredentialEntry | undefined;
  /**
   * Creates or replaces the generic credential `targetName` with `userName` and `blob`, as
   * earlier versions wrote it (advapi32.ts names the fields).
   */
  write(targetName: string, userName: string, blob: Uint8Array): void;
  /** Deletes the generic credential `targetName`; false when there was none. */
  delete(targetName: string): boolean;
  /** Every generic credential of the user, blobs left unread. */
  list(): CredentialSummary[];
}

/** A call that failed, with the code GetLastError() gave right after it. */
export class Win32Error extends Error {
  readonly call: string;
  readonly code: number;

  constructor(call: string, code: number) {
    super(`${call} failed with Windows error ${code}`);
    this.name = "Win32Error";
    this.call = call;
    this.code = code;
  }
}

/** winerror.h: the codes the store tells apart. */
export const ERROR_NOT_FOUND = 1168;
export const ERROR_NO_SUCH_LOGON_SESSION = 1312;

/** wincred.h: CRED_MAX_CREDENTIAL_BLOB_SIZE (5 * 512), what one entry's blob holds. */
export const CRED_MAX_CREDENTIAL_BLOB_SIZE = 2560;
