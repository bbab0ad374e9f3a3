import path from "node:path";
import { CliError } from "../errors.ts";
import { hostnameForComparison, type Hostname } from "../protocol/hostname.ts";
import { findCredentialsBlockItems } from "./cli-config.ts";
import { loadConfigFile, shimPanic, type DecodedCredentials } from "./cli-config-file.ts";
import { parseCredentialsFile } from "./credentials-file.ts";
import { terraformLocations, type LocationInputs, type TerraformLocations } from "./locations.ts";
import { hostOfTokenVariable } from "./token-variables.ts";

// The one model of what Terraform (and OpenTofu) read for credentials, after Terraform's
// internal/command/cliconfig (cliconfig.go LoadConfig, loadConfigDir, Config.Merge;
// credentials.go credentialsSource, collectCredentialsFromEnv, ForHost); what each file
// contributes is cliconfig.go loadConfigFile over HCL 1 (cli-config-file.ts):
// - A file HCL 1 cannot parse, or Terraform cannot decode into its Config, contributes
//   nothing at all, its helper block included ("dropped", with Terraform's diagnostic).
// - Some layouts make Go panic: Terraform then crashes on every command ("panic").
// - The main file is $TF_CLI_CONFIG_FILE, else $TERRAFORM_CONFIG, else ~/.terraformrc
//   (%APPDATA%\terraform.rc); OpenTofu's default is ~/.tofurc or its fallbacks.
// - Unless a variable chose the main file, every *.tfrc and *.tfrc.json of the config
//   directory (credentials.tfrc.json included) is merged after it, in name order.
// - `credentials` blocks are keyed by their label as written. Within one file, blocks with
//   the same label are merged attribute by attribute (a later attribute wins); across files
//   a later file's object replaces the earlier one whole (Config.Merge is maps.Copy).
// - Labels are then compared as svchost.ForComparison does (case, punycode, :443); two
//   labels of one host land in a Go map in random order: Terraform picks either.
// - A host's token: a TF_TOKEN_ variable first, then its merged credentials object (whose
//   `token` attribute, exactly so spelled and a string, is the token; an object without one,
//   or with a token that is no string, sends nothing (svchost auth HostCredentialsFromObject)
//   and still keeps the helper from being asked), then the helper.
// - `credentials_helper` blocks merge by label like `credentials`; two labels in effect make
//   the config invalid, and Terraform then takes whichever its map yields first.
// - It runs that label's plugin, `terraform-credentials-NAME` in its plugin directories
//   (credentials.go CredentialsSource, plugin/discovery FindPlugins); with none it runs no
//   helper at all, whatever the other labels (see helperChoice).
// - Hosts: labels through svchost ForComparison (a lowercase `xn--` label is refused, ports
//   as strconv.Atoi reads them); TF_TOKEN_ names through ForDisplay (transitional IDNA), then
//   ForComparison (protocol/hostname.ts, terraform/token-variables.ts).

/** Which tool's view. */
export type Tool = "Terraform" | "OpenTofu";

/** How the view reads the file system: the caller (in commands/) does the I/O. */
export interface FileSource {
  /** Whether a path exists now (OpenTofu's choice of files depends on it). */
  readonly exists: (file: string) => boolean;
  /** The names in a directory; `undefined` when there is no such directory. */
  readonly list: (dir: string) => readonly string[] | undefined;
  /** The file's text; `undefined` when it does not exist. Throws when it cannot be read. */
  readonly read: (file: string) => string | undefined;
  /**
   * Whether a path is a file or a link to one (Go's `os.Stat`, not a directory), for the
   * plugin search; `exists` stands in where a source lists no directories as names.
   */
  readonly isFile?: (file: string) => boolean;
}

interface ViewInputs extends Omit<LocationInputs, "exists"> {
  readonly files: FileSource;
}

/** A `credentials_helper` block as one file has it. */
interface HelperEntry {
  readonly name: string;
  /** Its args; `undefined` when they are not a plain list of strings. */
  readonly args: readonly string[] | undefined;
  readonly file: string;
  readonly line: number;
}

/** Where an entry stands in its file, for an edit that removes it. */
type EntryPlace =
  | { readonly syntax: "native"; readonly start: number; readonly end: number }
  | { readonly syntax: "json"; readonly index: number };

/** One `credentials` entry: a native block or a JSON member, in a file the tool reads. */
export interface CredentialsEntry {
  readonly file: string;
  readonly line: number;
  /** The label as written. */
  readonly label: string;
  /** The label in comparison form; `undefined` for one Terraform rejects (and ignores). */
  readonly host: Hostname | undefined;
  /**
   * Its attributes in file order, string values decoded (`undefined` for any other value);
   * `undefined` as a whole when this tool cannot tell what HCL 1 reads from the entry.
   */
  readonly attributes: ReadonlyArray<readonly [string, string | undefined]> | undefined;
  /** Attribute names that spell `token` another way (`TOKEN`, `Token`): Terraform ignores them. */
  readonly misspelled: readonly string[];
  /** A JSON entry's object, exactly as written (white space between tokens dropped). */
  readonly object: string | undefined;
  readonly place: EntryPlace;
  /**
   * Whether the editor can take the entry out of its file: every item giving it is a
   * `credentials "LABEL" {...}` block (native) or a member of `{"credentials": {...}}` (JSON).
   */
  readonly editable: boolean;
  /** hcl2shim's panic on the label's object, when Terraform keeps it (see `TerraformView.panic`). */
  readonly panic: string | undefined;
}

/** What the files give a host, merged as Terraform merges them. */
export type FilesGive =
  /** A token: Terraform sends it. `object` is the merged object to store, when it can be. */
  | {
      readonly kind: "token";
      readonly token: string;
      readonly object: string | undefined;
      readonly from: CredentialsEntry;
    }
  /** An object without a string `token`: nothing is sent, and the helper is not asked. */
  | { readonly kind: "no-token"; readonly from: CredentialsEntry }
  /** Something this tool cannot read as HCL 1 does: what Terraform sends is unknown. */
  | { readonly kind: "unknown"; readonly from: CredentialsEntry }
  /** Several spellings of the host with different objects: Terraform picks one at random. */
  | { readonly kind: "ambiguous"; readonly labels: readonly CredentialsEntry[] };

/** One host as the tool sees it. */
interface HostView {
  readonly host: Hostname;
  /** The TF_TOKEN_ variable that names it (the last one, as Go's map keeps it). */
  readonly variable: { readonly name: string; readonly token: string } | undefined;
  /** Every entry naming the host in the files read, in merge order. */
  readonly entries: readonly CredentialsEntry[];
  /** What the files give it; `undefined` when no file names it. */
  readonly files: FilesGive | undefined;
}

/** A file the tool reads, as read. */
interface ConfigFile {
  readonly file: string;
  readonly role: "main" | "drop-in";
  readonly syntax: "native" | "json";
  /** Its text; `undefined` when it could not be read (`error`). */
  readonly text: string | undefined;
  /** Why this tool cannot read it as Terraform does: what Terraform takes from it is unknown. */
  readonly error: string | undefined;
  /** Terraform's diagnostic when it drops the file: then nothing in it counts. */
  readonly dropped: string | undefined;
  /** Why reading it makes Terraform panic, on every command. */
  readonly panic: string | undefined;
  readonly helpers: readonly HelperEntry[];
  /** Each `credentials` item the editor can take out, else one entry per label decoded. */
  readonly entries: readonly CredentialsEntry[];
  /** What Terraform decoded: per label, the object its items merge into (decodeMap). */
  readonly credentials: ReadonlyArray<{
    readonly label: string;
    readonly attributes: ReadonlyArray<readonly [string, string | undefined]>;
  }>;
}

/** What one tool reads for credentials, and what it makes of it. */
export interface TerraformView {
  readonly tool: Tool;
  /** The main CLI config file, existing or not. */
  readonly mainFile: string;
  /** The variable that chose `mainFile`, when one did. */
  readonly override: TerraformLocations["configFileOverride"];
  /** The directory whose drop-ins are merged; `undefined` while `override` is set. */
  readonly configDir: string | undefined;
  /** The existing files read, in merge order. */
  readonly files: readonly ConfigFile[];
  /**
   * What the tool would read by default but does not now (`override` is set): its default
   * main file, and the config directory's files that exist.
   */
  readonly unread: readonly string[];
  /**
   * The credentials_helper in effect, per label (the last block of each); more than one
   * label makes Terraform's config invalid, and then it runs whichever comes first.
   */
  readonly helpers: readonly HelperEntry[];
  /** Every host a variable or a file names, in order of first mention. */
  readonly hosts: readonly HostView[];
  /** Why Terraform panics reading these files (every command crashes); `undefined` if not. */
  readonly panic: string | undefined;
  /** The directories the tool searches for `terraform-credentials-NAME`, in its order. */
  readonly pluginDirs: readonly string[];
  /** The helper the tool runs, from `helpers` and what its plugin directories hold. */
  readonly helperChoice: HelperChoice;
}

/**
 * Which helper Terraform runs: cliconfig `Config.CredentialsSource` walks the merged
 * `credentials_helper` map, takes the first label, and runs the newest plugin of that name;
 * when there is none it logs "Unable to find credentials helper" and stops (`break`), with
 * no helper at all. A Go map's order is random on every run, so with two labels either may
 * come first.
 */
export type HelperChoice =
  /** No credentials_helper block: Terraform asks no helper. */
  | { readonly kind: "none" }
  /** One block, and its plugin: Terraform runs `plugin` with the block's args. */
  | { readonly kind: "runs"; readonly helper: HelperEntry; readonly plugin: string }
  /** One block, no plugin of its name in the plugin directories: Terraform asks no helper. */
  | { readonly kind: "missing"; readonly helper: HelperEntry }
  /** Several labels: each run, one of them at random, with its plugin or, without one, none. */
  | {
      readonly kind: "random";
      readonly outcomes: ReadonlyArray<{
        readonly helper: HelperEntry;
        readonly plugin: string | undefined;
      }>;
    };

/** Each tool's view. */
export function terraformViews(inputs: ViewInputs): Record<Tool, TerraformView> {
  const locations = terraformLocations({ ...inputs, exists: (file) => inputs.files.exists(file) });
  return {
    Terraform: viewOf("Terraform", inputs, locations),
    OpenTofu: viewOf("OpenTofu", inputs, locations),
  };
}

function viewOf(tool: Tool, inputs: ViewInputs, locations: TerraformLocations): TerraformView {
  const mainFile = tool === "Terraform" ? locations.terraformConfigFile : locations.tofuConfigFile;
  const configDir = tool === "Terraform" ? locations.terraformConfigDir : locations.tofuConfigDir;
  const paths = filesOf(inputs, mainFile, configDir);
  const files = paths.flatMap(({ file, role }) => {
    const read = readConfigFile(inputs.files, file, role);
    return read === undefined ? [] : [read];
  });
  let unread: string[] = [];
  if (locations.configFileOverride !== undefined) {
    const { TF_CLI_CONFIG_FILE: _file, TERRAFORM_CONFIG: _legacy, ...env } = inputs.env;
    const defaults = terraformLocations({ ...inputs, env, exists: inputs.files.exists });
    const defaultMain =
      tool === "Terraform" ? defaults.terraformConfigFile : defaults.tofuConfigFile;
    const defaultDir = tool === "Terraform" ? defaults.terraformConfigDir : defaults.tofuConfigDir;
    // The default main file is named even when absent: creating it would change nothing.
    unread = filesOf(inputs, defaultMain, defaultDir)
      .map(({ file }) => file)
      .filter((file) => file !== mainFile && (file === defaultMain || inputs.files.exists(file)));
  }
  const helpers = helpersInEffect(files);
  // OpenTofu also searches $XDG_DATA_HOME/opentofu/plugins (locations.ts).
  const pluginDirs = tool === "Terraform" ? locations.terraformPluginDirs : locations.pluginDirs;
  return {
    tool,
    mainFile,
    override: locations.configFileOverride,
    configDir,
    files,
    unread,
    helpers,
    hosts: hostsOf(inputs.env, files),
    pluginDirs,
    helperChoice: helperChoice(helpers, findCredentialsPlugins(inputs, pluginDirs)),
    panic: panicOf(files),
  };
}

/**
 * Whether Terraform panics on these files: a file HCL 1 panics on (loadConfigFile), else a
 * credentials object hcl2shim cannot convert that survives Config.Merge under a host name
 * svchost accepts (credentialsSource skips the others before converting).
 */
function panicOf(files: readonly ConfigFile[]): string | undefined {
  const file = files.find(({ panic }) => panic !== undefined);
  if (file !== undefined) return `${file.file}: ${file.panic ?? ""}`;
  const kept = new Map<string, CredentialsEntry>();
  for (const { entries } of files) {
    const labels = new Set(entries.map(({ label }) => label));
    for (const label of labels) kept.delete(label);
    for (const entry of entries) if (!kept.has(entry.label)) kept.set(entry.label, entry);
  }
  const entry = [...kept.values()].find(
    ({ host, panic }) => host !== undefined && panic !== undefined,
  );
  return entry === undefined ? undefined : `${whereIs(entry)}: ${entry.panic ?? ""}`;
}

/** The files Terraform drops or panics on, each with Terraform's reason, for doctor. */
export function readingProblems(
  views: Readonly<Record<Tool, TerraformView>>,
): Array<{ file: string; tools: Tool[]; kind: "dropped" | "panic"; reason: string }> {
  const problems: Array<{
    file: string;
    tools: Tool[];
    kind: "dropped" | "panic";
    reason: string;
  }> = [];
  for (const view of [views.Terraform, views.OpenTofu]) {
    const found = view.files.flatMap(
      ({ file, dropped }): Array<{ file: string; kind: "dropped" | "panic"; reason: string }> =>
        dropped === undefined ? [] : [{ file, kind: "dropped", reason: dropped }],
    );
    if (view.panic !== undefined) {
      found.push({
        file: view.panic.slice(0, view.panic.indexOf(": ")),
        kind: "panic",
        reason: view.panic,
      });
    }
    for (const problem of found) {
      const same = problems.find(
        (each) => each.file === problem.file && each.kind === problem.kind,
      );
      if (same === undefined) problems.push({ ...problem, tools: [view.tool] });
      else if (!same.tools.includes(view.tool)) same.tools.push(view.tool);
    }
  }
  return problems;
}

/** The main file, then the directory's *.tfrc and *.tfrc.json in Go's sorted ReadDir order. */
function filesOf(
  inputs: ViewInputs,
  mainFile: string,
  configDir: string | undefined,
): Array<{ file: string; role: ConfigFile["role"] }> {
  const paths = inputs.platform === "win32" ? path.win32 : path.posix;
  const names = configDir === undefined ? [] : [...(inputs.files.list(configDir) ?? [])];
  return [
    { file: mainFile, role: "main" as const },
    ...names
      .filter((name) => name.endsWith(".tfrc") || name.endsWith(".tfrc.json"))
      .sort(byBytes)
      .map((name) => ({ file: paths.join(configDir ?? "", name), role: "drop-in" as const })),
  ];
}

/** Go's ReadDir sorts names byte by byte, as UTF-8; JavaScript's sort compares UTF-16. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/**
 * One CLI config file's helpers and credentials entries, in native syntax or JSON as HCL 1
 * decides by content; `error` says why it cannot be read as Terraform reads it.
 */
export function readCliConfigFile(file: string, text: string): ConfigFile {
  const read = readConfigFile(
    { exists: () => true, list: () => [], read: () => text },
    file,
    "main",
  );
  if (read === undefined) throw new Error("a text read as no file");
  return read;
}

function readConfigFile(
  source: FileSource,
  file: string,
  role: ConfigFile["role"],
): ConfigFile | undefined {
  let text;
  try {
    text = source.read(file);
  } catch (error) {
    return {
      file,
      role,
      syntax: "native",
      text: undefined,
      error: named(file, (error as Error).message, "cannot be read"),
      dropped: undefined,
      panic: undefined,
      helpers: [],
      entries: [],
      credentials: [],
    };
  }
  if (text === undefined) return undefined;
  const reading = loadConfigFile(file, text);
  const base = {
    file,
    role,
    syntax: reading.syntax,
    text,
    error: undefined,
    dropped: undefined,
    panic: undefined,
    helpers: [],
    entries: [],
    credentials: [],
  };
  switch (reading.kind) {
    case "dropped":
      return { ...base, dropped: reading.diagnostic };
    case "panic":
      return { ...base, panic: reading.message };
    case "unmodelled":
      return { ...base, error: `${file} cannot be read as Terraform reads it: ${reading.message}` };
    case "read":
      return {
        ...base,
        helpers: reading.helpers.map(({ label, args, line }) => ({
          name: label,
          args,
          file,
          line,
        })),
        entries: entriesOf(file, text, reading.syntax, reading.credentials),
        credentials: reading.credentials.map(({ label, attributes }) => ({
          label,
          attributes: stringsOf(attributes),
        })),
      };
  }
}

/** A message that names `file`, as it is when it does already. */
function named(file: string, message: string, what: string): string {
  return message.includes(file) ? message : `${file} ${what}: ${message}`;
}

/**
 * The credentials Terraform decoded from a file, one entry per label, with where the editor
 * finds them (cli-config.ts for native syntax, credentials-file.ts for JSON) when it can.
 */
function entriesOf(
  file: string,
  text: string,
  syntax: ConfigFile["syntax"],
  decoded: readonly DecodedCredentials[],
): CredentialsEntry[] {
  const blocks = syntax === "native" ? tryRead(() => findCredentialsBlockItems(text)) : undefined;
  const members =
    syntax === "json" ? tryRead(() => parseCredentialsFile(text, file).hosts) : undefined;
  return decoded.flatMap((credentials): CredentialsEntry[] => {
    const { label, line, asBlocks } = credentials;
    const common = {
      file,
      label,
      host: hostOrUndefined(label),
      panic: shimPanic(credentials.attributes),
    };
    // One entry per item the editor finds, each with what that item holds, for import.
    if (syntax === "native") {
      const found = asBlocks ? (blocks ?? []).filter((block) => block.host === label) : [];
      if (found.length > 0) {
        return found.map((block) => ({
          ...common,
          line: block.line,
          attributes: block.attributes,
          misspelled: misspellings(block.attributes),
          object: undefined,
          place: { syntax: "native", start: block.start, end: block.end },
          editable: true,
        }));
      }
    } else {
      const found = asBlocks
        ? (members ?? []).flatMap((member, index) =>
            member.name === label ? [{ member, index }] : [],
          )
        : [];
      if (found.length > 0) {
        return found.map(({ member, index }) => {
          const attributes = jsonAttributes(member.object);
          return {
            ...common,
            line: member.line,
            attributes,
            misspelled: misspellings(attributes),
            object: member.object,
            place: { syntax: "json", index },
            editable: true,
          };
        });
      }
    }
    // A form the editor does not take apart: the label as decoded, left to the person.
    const attributes = stringsOf(credentials.attributes);
    const start = offsetOfLine(text, line);
    return [
      {
        ...common,
        line,
        attributes,
        misspelled: misspellings(attributes),
        object: undefined,
        place: syntax === "native" ? { syntax, start, end: start } : { syntax, index: -1 },
        editable: false,
      },
    ];
  });
}

/** Decoded attributes with their string values (a value of another type is `undefined`). */
function stringsOf(
  attributes: DecodedCredentials["attributes"],
): Array<[string, string | undefined]> {
  return [...attributes].map(([name, value]) => [
    name,
    value?.type.kind === "string" ? (value.value as string) : undefined,
  ]);
}

function jsonAttributes(object: string): CredentialsEntry["attributes"] {
  const value: unknown = JSON.parse(object);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  return Object.entries(value).map(([name, attribute]) => [
    name,
    typeof attribute === "string" ? attribute : undefined,
  ]);
}

function tryRead<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof CliError) return undefined;
    throw error;
  }
}

function offsetOfLine(text: string, line: number): number {
  let at = 0;
  for (let current = 1; current < line && at !== -1; current++) at = text.indexOf("\n", at) + 1;
  return Math.max(at, 0);
}

function misspellings(attributes: CredentialsEntry["attributes"]): string[] {
  return (attributes ?? [])
    .map(([name]) => name)
    .filter((name) => name !== "token" && name.toLowerCase() === "token");
}

/** svchost `ForComparison`, as `credentialsSource` applies it: a label it refuses is ignored. */
function hostOrUndefined(label: string): Hostname | undefined {
  try {
    return hostnameForComparison(label);
  } catch {
    return undefined;
  }
}

function helpersInEffect(files: readonly ConfigFile[]): HelperEntry[] {
  const byName = new Map<string, HelperEntry>();
  for (const { helpers } of files) for (const helper of helpers) byName.set(helper.name, helper);
  return [...byName.values()];
}

/** A credentials helper plugin as Terraform's plugin discovery names it. */
interface Plugin {
  readonly name: string;
  readonly version: string;
  readonly path: string;
}

/**
 * plugin/discovery `FindPlugins("credentials", GlobalPluginDirs())`: `findPluginPaths` takes
 * each directory's entries in name order whose name starts with "terraform-credentials-"
 * (case-sensitive) and that `os.Stat` finds and is no directory (whether it can be executed
 * is not asked); `ResolvePluginPaths` then lowercases the base name, drops "terraform-",
 * the kind and its dash, and a ".exe" suffix, splits at the first "_v" into name and version
 * (no "_v": "0.0.0"), cuts the version at "_x", and keeps the first path per name and version.
 */
function findCredentialsPlugins(inputs: ViewInputs, dirs: readonly string[]): Plugin[] {
  const paths = inputs.platform === "win32" ? path.win32 : path.posix;
  const isFile = inputs.files.isFile ?? inputs.files.exists;
  const found: Plugin[] = [];
  for (const dir of dirs) {
    for (const entry of [...(inputs.files.list(dir) ?? [])].sort(byBytes)) {
      if (!entry.startsWith("terraform-credentials-")) continue;
      const file = paths.join(dir, entry);
      if (!isFile(file)) continue;
      let base = entry.toLowerCase().slice("terraform-credentials-".length);
      if (base === "") continue;
      if (base.endsWith(".exe")) base = base.slice(0, -".exe".length);
      const split = base.indexOf("_v");
      const name = split === -1 ? base : base.slice(0, split);
      let version = split === -1 ? "0.0.0" : base.slice(split + 2);
      const underX = version.indexOf("_x");
      if (underX !== -1) version = version.slice(0, underX);
      if (found.some((plugin) => plugin.name === name && plugin.version === version)) continue;
      found.push({ name, version, path: file });
    }
  }
  return found;
}

/**
 * cliconfig `Config.CredentialsSource`: per label, `PluginMetaSet.WithName` (the label
 * exactly, against names lowercased above) and `Newest`.
 */
function helperChoice(helpers: readonly HelperEntry[], plugins: readonly Plugin[]): HelperChoice {
  const pluginOf = (helper: HelperEntry) =>
    newest(plugins.filter((plugin) => plugin.name === helper.name))?.path;
  const [only, ...others] = helpers;
  if (only === undefined) return { kind: "none" };
  if (others.length === 0) {
    const plugin = pluginOf(only);
    return plugin === undefined
      ? { kind: "missing", helper: only }
      : { kind: "runs", helper: only, plugin };
  }
  return {
    kind: "random",
    outcomes: helpers.map((helper) => ({ helper, plugin: pluginOf(helper) })),
  };
}

/**
 * `PluginMetaSet.Newest`: the highest version (go-version order: numeric segments, a
 * prerelease below its release), the first found on a tie.
 */
function newest(plugins: readonly Plugin[]): Plugin | undefined {
  let winner: Plugin | undefined;
  for (const plugin of plugins) {
    if (winner === undefined || compareVersions(plugin.version, winner.version) > 0) {
      winner = plugin;
    }
  }
  return winner;
}

function compareVersions(a: string, b: string): number {
  const parse = (version: string) => {
    const match = /^v?([0-9]+(?:\.[0-9]+)*)(?:-([0-9A-Za-z.-]+))?/.exec(version);
    const numbers = (match?.[1] ?? "0").split(".").map(Number);
    return { numbers, pre: match?.[2] };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.numbers.length, y.numbers.length, 3); i++) {
    const diff = (x.numbers[i] ?? 0) - (y.numbers[i] ?? 0);
    if (diff !== 0) return diff;
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/** A label's object after the merge: its attributes, and the entries it came from. */
interface Merged {
  readonly attributes: Map<string, string | undefined> | undefined;
  /** The entries of the one file whose object won. */
  readonly from: readonly CredentialsEntry[];
}

function hostsOf(env: ViewInputs["env"], files: readonly ConfigFile[]): HostView[] {
  const variables = new Map<Hostname, { name: string; token: string }>();
  for (const [name, token] of Object.entries(env)) {
    const host = token === undefined ? undefined : hostOfTokenVariable(name);
    if (host !== undefined && token !== undefined) variables.set(host, { name, token });
  }
  // Per label: merged within a file, replaced whole by a later file.
  const labels = new Map<string, Merged>();
  for (const { entries, credentials } of files) {
    for (const { label, attributes } of credentials) {
      const from = entries.filter((entry) => entry.label === label);
      labels.set(label, { attributes: new Map(attributes), from });
    }
  }
  const order: Hostname[] = [...variables.keys()];
  const entriesOf = new Map<Hostname, CredentialsEntry[]>();
  for (const { entries } of files) {
    for (const entry of entries) {
      if (entry.host === undefined) continue;
      if (!order.includes(entry.host)) order.push(entry.host);
      entriesOf.set(entry.host, [...(entriesOf.get(entry.host) ?? []), entry]);
    }
  }
  return order.map((host) => {
    const entries = entriesOf.get(host) ?? [];
    const merged = [...labels.entries()]
      .filter(([label]) => hostOrUndefined(label) === host)
      .map(([, value]) => value);
    return { host, variable: variables.get(host), entries, files: filesGive(merged) };
  });
}

function filesGive(merged: readonly Merged[]): FilesGive | undefined {
  const gives = merged.map(give);
  const [first, ...others] = gives;
  if (first === undefined) return undefined;
  const same = (a: FilesGive, b: FilesGive) =>
    a.kind === b.kind && (a.kind !== "token" || (b.kind === "token" && a.token === b.token));
  if (others.every((other) => same(first, other))) return first;
  return { kind: "ambiguous", labels: merged.map(({ from }) => from.at(-1)).filter(isEntry) };
}

function give({ attributes, from }: Merged): FilesGive {
  const last = from.at(-1);
  if (last === undefined) throw new Error("a merged label without entries");
  if (attributes === undefined) return { kind: "unknown", from: last };
  if (!attributes.has("token")) return { kind: "no-token", from: last };
  const token = attributes.get("token");
  // A token that is no string: HostCredentialsFromObject gives no credentials.
  if (token === undefined) return { kind: "no-token", from: last };
  const [only] = from;
  const object =
    from.length === 1 && only?.object !== undefined
      ? only.object
      : [...attributes.values()].every((value) => value !== undefined)
        ? JSON.stringify(Object.fromEntries(attributes))
        : undefined;
  return { kind: "token", token, object, from: last };
}

function isEntry(entry: CredentialsEntry | undefined): entry is CredentialsEntry {
  return entry !== undefined;
}

/** What the tool sends for a host: a token, the helper's answer, or nothing. */
export type Sends =
  | { readonly from: "variable"; readonly token: string; readonly name: string }
  | { readonly from: "file"; readonly token: string; readonly entry: CredentialsEntry }
  | { readonly from: "nothing"; readonly entry: CredentialsEntry }
  | { readonly from: "unknown"; readonly entries: readonly CredentialsEntry[] }
  | { readonly from: "helper" };

/** Terraform's `CredentialsSource.ForHost` for one host of a view. */
export function sends(host: HostView | undefined): Sends {
  if (host?.variable !== undefined) return { from: "variable", ...host.variable };
  const files = host?.files;
  if (files === undefined) return { from: "helper" };
  switch (files.kind) {
    case "token":
      return { from: "file", token: files.token, entry: files.from };
    case "no-token":
      return { from: "nothing", entry: files.from };
    case "unknown":
      return { from: "unknown", entries: [files.from] };
    case "ambiguous":
      return { from: "unknown", entries: files.labels };
  }
}

/** The host's view, when a variable or file names it. */
export function hostIn(view: TerraformView, host: Hostname): HostView | undefined {
  return view.hosts.find((entry) => entry.host === host);
}

/** `file:line`, for messages. */
export function whereIs(entry: Pick<CredentialsEntry, "file" | "line">): string {
  return `${entry.file}:${entry.line}`;
}

/**
 * The `credentials_helper NAME` block in effect: Terraform's, else OpenTofu's (the same
 * files, unless OpenTofu reads a file of its own). `undefined` when neither has one.
 */
export function helperInEffect(
  views: Readonly<Record<Tool, TerraformView>>,
  name: string,
): HelperEntry | undefined {
  for (const view of [views.Terraform, views.OpenTofu]) {
    const helper = view.helpers.find((entry) => entry.name === name);
    if (helper !== undefined) return helper;
  }
  return undefined;
}

/** A host whose credentials Terraform (or OpenTofu) takes from elsewhere than the helper. */
interface Shadow {
  readonly host: Hostname;
  /** What the tool sends instead of asking the helper. */
  readonly sends: Exclude<Sends, { from: "helper" }>;
  /** The tools that do so. */
  readonly tools: readonly Tool[];
  /** Every entry in a file read that names the host, the one that wins included. */
  readonly entries: readonly CredentialsEntry[];
}

/**
 * The hosts the helper is not asked for, one account per host across both tools: from
 * Terraform's view, then OpenTofu's where it reads other files and decides otherwise.
 */
export function shadowsOf(views: Readonly<Record<Tool, TerraformView>>): Shadow[] {
  const shadows: Shadow[] = [];
  for (const view of [views.Terraform, views.OpenTofu]) {
    for (const host of view.hosts) {
      const sent = sends(host);
      if (sent.from === "helper") continue;
      const same = shadows.find(
        (shadow) =>
          shadow.host === host.host && describeSends(shadow.sends) === describeSends(sent),
      );
      if (same !== undefined) {
        if (!same.tools.includes(view.tool))
          shadows[shadows.indexOf(same)] = { ...same, tools: [...same.tools, view.tool] };
        continue;
      }
      shadows.push({ host: host.host, sends: sent, tools: [view.tool], entries: host.entries });
    }
  }
  return shadows;
}

/** Where a tool takes a host's credentials from, in words; never the token. */
export function describeSends(sent: Sends): string {
  switch (sent.from) {
    case "variable":
      return `the variable ${sent.name}`;
    case "file":
      return `the token in ${whereIs(sent.entry)}`;
    case "nothing":
      return `an entry with no token in ${whereIs(sent.entry)} (${sent.entry.misspelled.length > 0 ? `it spells ${sent.entry.misspelled.map((name) => `"${name}"`).join(", ")}, not "token"; ` : ""}nothing is sent)`;
    case "unknown":
      return `${sent.entries.map(whereIs).join(" or ")}${sent.entries.length > 1 ? ", spellings of the host with different credentials that it picks from at random" : ", which this tool cannot read as Terraform does"}`;
    case "helper":
      return "the helper";
  }
}
