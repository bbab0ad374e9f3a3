// `npm run fixture [-- --backend pass] [-- --service NAME]`: starts the HTTPS registry
// fixture the e2e tests use, for a round trip by hand with the real `terraform` and the
// installed helper. Writes into a new directory it names a CLI config (the credentials_helper
// block names the store of the options given here, else of the installed block, as the helper
// picks it; providers come from the fixture's mirror) and a main.tf that uses the module
// registry and the provider; prints the lines to paste in another shell (the exports, then
// terraform login, init and logout) and serves until Ctrl-C, which removes the directory and
// the fixture's temporary CA and keys.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { installedBlock } from "../src/commands/installed-block.ts";
import {
  blockArgs,
  followBlock,
  namesStore,
  optionsOfArgs,
  parseServiceName,
} from "../src/commands/options.ts";
import { commandLine } from "../src/commands/command-line.ts";
import { HELPER_BLOCK_NAME } from "../src/commands/cli-config-edits.ts";
import { parseBackend } from "../src/stores/registry.ts";
import { renderCredentialsHelper } from "../src/terraform/cli-config.ts";
import {
  fixtureConfiguration,
  newToken,
  startFixtureServer,
} from "../test/e2e/support/fixture-server.ts";

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
const token = process.env.FIXTURE_TOKEN || newToken();
const server = await startFixtureServer({ token });

const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-fixture-"));
const cliConfig = path.join(dir, "terraformrc");
writeFileSync(
  cliConfig,
  [
    renderCredentialsHelper(HELPER_BLOCK_NAME, blockArgs(options)),
    "provider_installation {",
    `  network_mirror { url = "${server.mirrorUrl}" }`,
    "}",
    "",
  ].join("\n"),
  { mode: 0o600 },
);
writeFileSync(path.join(dir, "main.tf"), fixtureConfiguration(server));

const sh = (...words: string[]) => commandLine(words, "linux");
const lines = [
  `fixture: ${server.host}, an HTTPS registry that accepts only the token below`,
  `wrote ${cliConfig} (a CLI config whose credentials_helper block names --backend ${options.backend} --service ${options.service}${block === undefined ? "" : `, as your installed block in ${block.file} does`}) and ${path.join(dir, "main.tf")}`,
  `token: ${token}   (a throwaway: paste it when terraform login asks; FIXTURE_TOKEN chooses it)`,
  "",
  "with the helper installed (npm run setup), paste these lines in another shell, one by one:",
  sh("export", `SSL_CERT_FILE=${server.caFile}`, `TF_CLI_CONFIG_FILE=${cliConfig}`),
  sh("cd", dir),
  sh("terraform", "login", server.host),
  sh("terraform", "init"),
  sh("terraform", "logout", server.host),
  "",
  `serving until Ctrl-C, which removes ${dir}`,
];
process.stdout.write(`${lines.join("\n")}\n`);

let closing = false;
const stop = () => {
  if (closing) return;
  closing = true;
  void server.close().then(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
