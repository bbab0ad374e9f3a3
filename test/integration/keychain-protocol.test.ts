import { KEYCHAIN_BACKENDS } from "../support/keychain-backends.ts";
import { describeProtocol } from "../support/protocol-suite.ts";

for (const backend of KEYCHAIN_BACKENDS) {
  describeProtocol(backend.name, () => backend.start());
}
