import { CliError } from "../../errors.ts";
import type { ProbeResult } from "../store-description.ts";
import { CRED_MAX_CREDENTIAL_BLOB_SIZE, Win32Error, type CredentialSummary } from "./api.ts";
import { credentialManagerError, hostsOf } from "./store.ts";

/**
 * What `doctor` can learn of Credential Manager without reading a secret: whether it
 * answers (one enumeration, no blob read), and how close the entries of `service` are to
 * the 2560 bytes an entry holds. `list` is advapi32's under a deadline, given by the caller.
 */
export function probeCredentialManager(
  list: () => CredentialSummary[],
  service: string,
): ProbeResult {
  let credentials;
  try {
    credentials = list();
  } catch (error) {
    if (!(error instanceof Win32Error) && !(error instanceof CliError)) throw error;
    const problem =
      error instanceof Win32Error ? credentialManagerError("list the entries of", error) : error;
    return {
      status: "fail",
      summary: problem.message,
      fix: "add --backend pass to the helper's args",
      safeToOpen: false,
    };
  }
  const hosts = new Set<string>(hostsOf(credentials, service));
  const sizes = credentials
    .filter(({ userName }) => hosts.has(userName))
    .map(({ blobSize }) => blobSize);
  const largest =
    sizes.length === 0 ? "" : `; the largest of service "${service}" has ${Math.max(...sizes)}`;
  return {
    status: "ok",
    summary: `Windows Credential Manager answers (an entry holds at most ${CRED_MAX_CREDENTIAL_BLOB_SIZE} bytes${largest})`,
    safeToOpen: true,
  };
}
