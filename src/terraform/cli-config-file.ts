/* eslint-disable @typescript-eslint/switch-exhaustiveness-check -- these switches follow Go's, whose `default` cases are the point */
// What one CLI config file contributes to Terraform's config, after
// internal/command/cliconfig/cliconfig.go loadConfigFile: hcl.Parse (hcl/parser.ts), then
// hcl.DecodeObject into Terraform's Config (hcl/decoder.ts, with Config's Go types below).
// A file that fails to parse or decode adds a diagnostic and contributes nothing at all:
// Terraform decodes into `&result`, whose *Config decodePtr sets only on success.

import { HclError, keyValue, type Token, type ObjectList } from "./hcl/ast.ts";
import { decodeObject, Unmodelled, type Dynamic, type GoType } from "./hcl/decoder.ts";
import { isJsonSyntax, parse } from "./hcl/parser.ts";
import { equalFold, GoPanic } from "./hcl/strconv.ts";

const STRING: GoType = { kind: "string" };
const BOOL: GoType = { kind: "bool" };
const INTERFACE: GoType = { kind: "interface" };
const map = (elem: GoType): GoType => ({ kind: "map", stringKeys: true, elem });

/** cliconfig.Config as hcl decodes it: field order is the order decodeStruct visits. */
const CONFIG: GoType = {
  kind: "ptr",
  elem: {
    kind: "struct",
    fields: [
      { name: "Providers", type: map(STRING) },
      { name: "Provisioners", type: map(STRING) },
      { name: "DisableCheckpoint", tag: "disable_checkpoint", type: BOOL },
      { name: "DisableCheckpointSignature", tag: "disable_checkpoint_signature", type: BOOL },
      { name: "PluginCacheDir", tag: "plugin_cache_dir", type: STRING },
      {
        name: "PluginCacheMayBreakDependencyLockFile",
        tag: "plugin_cache_may_break_dependency_lock_file",
        type: BOOL,
      },
      {
        name: "Hosts",
        tag: "host",
        type: map({
          kind: "ptr",
          elem: {
            kind: "struct",
            fields: [{ name: "Services", tag: "services", type: map(INTERFACE) }],
          },
        }),
      },
      { name: "Credentials", tag: "credentials", type: map(map(INTERFACE)) },
      {
        name: "CredentialsHelpers",
        tag: "credentials_helper",
        type: map({
          kind: "ptr",
          elem: {
            kind: "struct",
            fields: [{ name: "Args", tag: "args", type: { kind: "slice", elem: STRING } }],
          },
        }),
      },
      // Untagged, so matched as "ProviderInstallation"; its element types are not modelled.
      {
        name: "ProviderInstallation",
        type: { kind: "unmodelled", name: "[]*cliconfig.ProviderInstallation" },
      },
    ],
  },
};

/** One `credentials` label of a file: its object, merged as the decoder merges repeats. */
export interface DecodedCredentials {
  readonly label: string;
  /** Its attributes as decoded into map[string]interface{} (`null`: Go's nil interface). */
  readonly attributes: ReadonlyMap<string, Dynamic | null>;
  /** The first line naming the label. */
  readonly line: number;
  /** True when every item giving the label is a `credentials "LABEL" { ... }` block. */
  readonly asBlocks: boolean;
}

export interface DecodedHelper {
  readonly label: string;
  readonly args: readonly string[];
  readonly line: number;
}

/** What Terraform makes of one file's text. */
export type FileReading =
  | {
      readonly kind: "read";
      readonly syntax: "native" | "json";
      readonly credentials: readonly DecodedCredentials[];
      readonly helpers: readonly DecodedHelper[];
    }
  /** loadConfigFile's diagnostic: the file contributes nothing. */
  | { readonly kind: "dropped"; readonly syntax: "native" | "json"; readonly diagnostic: string }
  /** HCL 1 panics reading it: Terraform crashes on every command. */
  | { readonly kind: "panic"; readonly syntax: "native" | "json"; readonly message: string }
  /** It reaches a part of Terraform's reading this tool does not model. */
  | { readonly kind: "unmodelled"; readonly syntax: "native" | "json"; readonly message: string };

/** cliconfig.go loadConfigFile, for a file whose text was read. */
export function loadConfigFile(file: string, text: string): FileReading {
  const syntax = isJsonSyntax(text) ? "json" : "native";
  try {
    const root = parse(text);
    const config = decodeObject(CONFIG, root) as Record<string, unknown> | null;
    return { kind: "read", syntax, ...contents(root, config) };
  } catch (error) {
    if (error instanceof GoPanic) {
      return { kind: "panic", syntax, message: withoutFileText(error.message) };
    }
    if (error instanceof Unmodelled) return { kind: "unmodelled", syntax, message: error.message };
    if (error instanceof HclError) {
      // Parse and decode errors alike: "Error parsing PATH: ERR".
      const diagnostic = `Error parsing ${file}: ${withoutFileText(error.message)}`;
      return { kind: "dropped", syntax, diagnostic };
    }
    throw error;
  }
}

/**
 * A Go message with the file's own text left out, as `…`: a value Terraform quotes there
 * (an unexpected token, a key without a value, a string that does not unquote, a number)
 * may be a token, which never reaches the output. Names of fields and labels stay.
 */
export function withoutFileText(message: string): string {
  return message
    .replace(/(Unknown token: \S+ \S+) [\s\S]*$/, "$1 …")
    .replace(/(unknown token: \S+ \S+) [\s\S]*$/, "$1 …")
    .replace(/key '[\s\S]*' expected start of object/, "key '…' expected start of object")
    .replace(/^unquote [\s\S]* err: /, "unquote … err: ")
    .replace(/(strconv\.Parse\w+: parsing )"(?:[^"\\]|\\.)*"/, '$1"…"');
}

function contents(
  root: ObjectList,
  config: Record<string, unknown> | null,
): { credentials: DecodedCredentials[]; helpers: DecodedHelper[] } {
  const credentials =
    (config?.Credentials as Map<string, Map<string, Dynamic | null>> | null | undefined) ??
    new Map<string, Map<string, Dynamic | null>>();
  const helpers =
    (config?.CredentialsHelpers as Map<string, { Args: string[] | null }> | null | undefined) ??
    new Map<string, { Args: string[] | null }>();
  const credentialsAt = labelsOf(root, "credentials");
  const helpersAt = labelsOf(root, "credentials_helper");
  return {
    credentials: [...credentials].map(([label, attributes]) => ({
      label,
      attributes,
      line: credentialsAt.get(label)?.line ?? 1,
      asBlocks: credentialsAt.get(label)?.asBlocks ?? false,
    })),
    helpers: [...helpers].map(([label, helper]) => ({
      label,
      args: helper.Args ?? [],
      line: helpersAt.get(label)?.line ?? 1,
    })),
  };
}

/**
 * Where each label of a top-level map field stands: the first line naming it, and whether
 * every item giving it is a two-key block (`credentials "LABEL" { ... }`), the one form the
 * editor in cli-config.ts removes. Keys match as decodeStruct matches them.
 */
function labelsOf(
  root: ObjectList,
  field: string,
): Map<string, { line: number; asBlocks: boolean }> {
  const found = new Map<string, { line: number; asBlocks: boolean }>();
  const note = (label: string, line: number, asBlock: boolean) => {
    const before = found.get(label);
    found.set(label, {
      line: before?.line ?? line,
      asBlocks: (before?.asBlocks ?? true) && asBlock,
    });
  };
  for (const item of root.items) {
    const [key, label] = item.keys;
    if (key === undefined || !equalFold(valueOf(key) ?? "", field)) continue;
    if (label !== undefined) {
      note(valueOf(label) ?? "", label.line, item.keys.length === 2);
      continue;
    }
    const inner = item.val?.kind === "ObjectType" ? item.val.list : undefined;
    for (const member of inner?.items ?? []) {
      const [name] = member.keys;
      if (name !== undefined) note(valueOf(name) ?? "", name.line, false);
    }
  }
  return found;
}

/** A key's value; `undefined` where Go would panic (a key the decoder never compared). */
function valueOf(token: Token): string | undefined {
  try {
    return keyValue(token);
  } catch (error) {
    if (error instanceof GoPanic) return undefined;
    throw error;
  }
}

/**
 * hcl2shim.HCL2ValueFromConfigValue, which credentialsSource runs on each credentials
 * object of a valid host name: the message of its panic, when a value is of a type it does
 * not convert ([]map[string]interface{}: a nested block, or a second label).
 */
export function shimPanic(attributes: ReadonlyMap<string, Dynamic | null>): string | undefined {
  const check = (value: Dynamic | null): string | undefined => {
    if (value === null) return undefined;
    const { type } = value;
    switch (type.kind) {
      case "bool":
      case "string":
      case "int":
      case "float64":
        return undefined;
      case "slice":
        if (type.elem.kind === "interface") {
          for (const each of value.value as Array<Dynamic | null>) {
            const problem = check(each);
            if (problem !== undefined) return problem;
          }
          return undefined;
        }
        return `can't convert ${goTypeString(type)} to cty.Value`;
      case "map":
        for (const each of (value.value as Map<string, Dynamic | null>).values()) {
          const problem = check(each);
          if (problem !== undefined) return problem;
        }
        return undefined;
      default:
        return `can't convert ${goTypeString(type)} to cty.Value`;
    }
  };
  for (const value of attributes.values()) {
    const problem = check(value);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function goTypeString(type: GoType): string {
  switch (type.kind) {
    case "map":
      return `map[string]${goTypeString(type.elem)}`;
    case "slice":
      return `[]${goTypeString(type.elem)}`;
    case "interface":
      return "interface {}";
    default:
      return type.kind;
  }
}
