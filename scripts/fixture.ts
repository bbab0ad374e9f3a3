// `npm run fixture [-- --backend pass] [-- --service NAME]`: starts the HTTPS registry
// fixture the e2e tests use, for trying the helper by hand against a real `terraform`.
// Prints the host, a CLI config whose credentials_helper block carries the helper options
// given here (use those of your installed block), a main.tf that uses both the module
// registry and the provider mirror, and the CA to trust; then serves until Ctrl-C (which
// deletes its temporary CA and keys).
import { parseArgs } from "node:util";
import { renderCredentialsHelper } from "../src/terraform/cli-config.ts";
import { newToken, startFixtureServer } from "../test/e2e/support/fixture-server.ts";

const { values } = parseArgs({
  options: { backend: { type: "string" }, service: { type: "string" } },
});
const helperArgs = [
  ...(values.service === undefined ? [] : ["--service", values.service]),
  ...(values.backend === undefined ? [] : ["--backend", values.backend]),
];
const token = process.env.FIXTURE_TOKEN || newToken();
const server = await startFixtureServer({ token });
const { module, provider } = server;

const lines = [
  `host:  ${server.host}`,
  `CA:    ${server.caFile}   (trust it: export SSL_CERT_FILE=${server.caFile})`,
  `token: ${token}   (a throwaway: paste it at "terraform login ${server.host}"; set FIXTURE_TOKEN to choose it)`,
  "",
  "CLI config (e.g. in a file named by TF_CLI_CONFIG_FILE; the block's args must be your installed block's:",
  "npm run fixture -- --backend pass when you installed with --backend pass):",
  renderCredentialsHelper("keychain", helperArgs).trimEnd(),
  "provider_installation {",
  `  network_mirror { url = "${server.mirrorUrl}" }`,
  "}",
  "",
  "main.tf (terraform init fetches the module with the token and the provider from the mirror):",
  `terraform {\n  required_providers {\n    ${provider.type} = {\n      source  = "${provider.source}"\n      version = "${provider.version}"\n    }\n  }\n}\n`,
  `module "hello" {\n  source  = "${module.source}"\n  version = "${module.version}"\n}`,
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
