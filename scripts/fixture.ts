// `npm run fixture`: starts the HTTPS registry fixture the e2e tests use, for trying the
// helper by hand against a real `terraform`. Prints the host, a CLI config and the CA to
// trust, then serves until Ctrl-C (which deletes its temporary CA and keys).
import { newToken, startFixtureServer } from "../test/e2e/support/fixture-server.ts";

const token = process.env.FIXTURE_TOKEN || newToken();
const server = await startFixtureServer({ token });

const lines = [
  `host:  ${server.host}`,
  `CA:    ${server.caFile}   (trust it: export SSL_CERT_FILE=${server.caFile})`,
  `token: ${token}   (a throwaway: paste it at "terraform login ${server.host}"; set FIXTURE_TOKEN to choose it)`,
  "",
  "CLI config (e.g. in a file named by TF_CLI_CONFIG_FILE):",
  'credentials_helper "keychain" {}',
  "provider_installation {",
  `  network_mirror { url = "${server.mirrorUrl}" }`,
  "}",
  "",
  "main.tf:",
  `module "hello" {\n  source  = "${server.module.source}"\n  version = "${server.module.version}"\n}`,
  "",
  "serving until Ctrl-C",
];
process.stdout.write(`${lines.join("\n")}\n`);

let closing = false;
const stop = () => {
  if (closing) return;
  closing = true;
  void server.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
