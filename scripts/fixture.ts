// `npm run fixture [-- --backend pass] [-- --service NAME]`: starts the HTTPS registry
// fixture the e2e tests use, for trying the helper by hand against a real `terraform`.
// Prints the host, a CLI config whose credentials_helper block names the store of the
// options given here, else of the installed block (as the helper picks it), a main.tf that uses both the module
// registry and the provider mirror, and the CA to trust; then serves until Ctrl-C (which
// deletes its temporary CA and keys).
import os from "node:os";
import { parseArgs } from "node:util";
import { installedBlock } from "../src/commands/installed-block.ts";
import {
  followBlock,
  namesStore,
  optionsOfArgs,
  parseServiceName,
} from "../src/commands/options.ts";
import { parseBackend } from "../src/stores/registry.ts";
import { renderCredentialsHelper } from "../src/terraform/cli-config.ts";
import { newToken, startFixtureServer } from "../test/e2e/support/fixture-server.ts";

const { values } = parseArgs({
  options: { backend: { type: "string" }, service: { type: "string" } },
});
// The store as the helper's own rule picks it: these options when they name one, else the
// installed block's in effect, else the defaults; both written out, as install writes them.
const given = {
  ...(values.backend === undefined ? {} : { backend: parseBackend(values.backend) }),
  ...(values.service === undefined ? {} : { service: parseServiceName(values.service) }),
};
const block = namesStore(given)
  ? undefined
  : installedBlock({
      env: process.env,
      platform: process.platform,
      arch: process.arch,
      homedir: os.homedir(),
      execPath: process.execPath,
      isSea: false,
    });
const { options } = followBlock(given, optionsOfArgs(block?.args ?? []) ?? {});
const helperArgs = ["--backend", options.backend, "--service", options.service];
const token = process.env.FIXTURE_TOKEN || newToken();
const server = await startFixtureServer({ token });
const { module, provider } = server;

const lines = [
  `host:  ${server.host}`,
  `CA:    ${server.caFile}   (trust it: export SSL_CERT_FILE=${server.caFile})`,
  `token: ${token}   (a throwaway: paste it at "terraform login ${server.host}"; set FIXTURE_TOKEN to choose it)`,
  "",
  `CLI config (e.g. in a file named by TF_CLI_CONFIG_FILE; its block names the store ${block === undefined ? "the options given here or the defaults name" : `your installed block in ${block.file} names`}):`,
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
