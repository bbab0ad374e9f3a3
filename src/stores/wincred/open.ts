import type { CredentialStore } from "../../protocol/credential-store.ts";
import { protectingGets, type StoreContext } from "../store-description.ts";
import { findWindowsHelper, type WindowsHelper } from "./windows-helper.ts";
import { createWincredStore } from "./store.ts";

/**
 * `--backend wincred`: Windows Credential Manager from WSL, through the Windows helper. It
 * is looked for at the first call, not before: a store opened and never used runs nothing
 * on the Windows side.
 */
export function openWincredStore({
  service,
  io,
  deadline,
  beforeSecret,
}: StoreContext): CredentialStore {
  let helper: Promise<WindowsHelper> | undefined;
  const store = createWincredStore(
    () => (helper ??= findWindowsHelper(io.env, deadline)),
    service,
    deadline,
  );
  // The Windows helper reads the secret there, but it comes back through this process's pipe.
  return protectingGets(store, beforeSecret);
}
