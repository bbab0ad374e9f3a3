import { KEYCHAIN_BACKENDS } from "../support/keychain-backends.ts";
import { describeExec } from "../support/exec-suite.ts";

for (const backend of KEYCHAIN_BACKENDS) {
  describeExec(backend.name, () => backend.start());
}
