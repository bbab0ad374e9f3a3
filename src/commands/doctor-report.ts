import type { Machine } from "../system/io.ts";
import {
  describeSends,
  sends,
  type CredentialsEntry,
  type TerraformView,
  type Tool,
} from "../terraform/view.ts";
import { viewsOf } from "./read-view.ts";

// `doctor --json`: the view of terraform/view.ts as data, for scripts and for the referee.
// Everything here is read off the view; nothing is decided twice. Never a token: a host's
// entry says where its token comes from (a variable's name, a file and line), not what it is.

/** An entry of a file, by where it is and the label as written. */
interface EntryPlace {
  readonly file: string;
  readonly line: number;
  readonly label: string;
}

/** Where one tool takes a host's token from, and why in words. */
export type HostReport = { readonly host: string; readonly why: string } & (
  | { readonly from: "variable"; readonly variable: string }
  | ({ readonly from: "file" } & EntryPlace)
  /** An entry with no `token`: nothing is sent and the helper is not asked. */
  | ({ readonly from: "nothing" } & EntryPlace)
  /** What the tool sends cannot be told: one of these entries, or none of them. */
  | { readonly from: "unknown"; readonly entries: readonly EntryPlace[] }
  | { readonly from: "helper" }
);

export interface HelperReport {
  readonly name: string;
  /** `null` when the args are not a plain list of strings. */
  readonly args: readonly string[] | null;
  readonly file: string;
  readonly line: number;
}

export interface ToolReport {
  readonly mainFile: string;
  /** The variable that chose the main file, or `null`. */
  readonly override: string | null;
  readonly configDir: string | null;
  /**
   * The existing files, in merge order: `dropped` is the tool's diagnostic for a file it takes
   * nothing from; `unreadable` says why this helper cannot read a file as the tool does.
   */
  readonly files: ReadonlyArray<{
    readonly file: string;
    readonly role: "main" | "drop-in";
    readonly syntax: "native" | "json";
    readonly dropped: string | null;
    readonly unreadable: string | null;
  }>;
  /** Why the tool panics on these files (every command of it crashes), or `null`. */
  readonly panic: string | null;
  /** Files the tool would read by default but does not now (a variable chose the main file). */
  readonly unread: readonly string[];
  /** Credentials entries whose label names no host: the tool says so and ignores them. */
  readonly ignored: readonly EntryPlace[];
  /** Every credentials_helper label in effect (more than one makes the config invalid). */
  readonly helpers: readonly HelperReport[];
  /** The helper the tool runs for a host no variable or file names; `null` for none or unknown. */
  readonly helper: HelperReport | null;
  /**
   * How the tool picks it: `none` (no block), `runs` (its plugin found), `missing` (no plugin
   * of its name: no helper at all), `random` (several labels: one per run, each outcome with
   * its plugin or `null`).
   */
  readonly helperChoice:
    | { readonly kind: "none" }
    | { readonly kind: "runs"; readonly helper: HelperReport; readonly plugin: string }
    | { readonly kind: "missing"; readonly helper: HelperReport }
    | {
        readonly kind: "random";
        readonly outcomes: ReadonlyArray<{
          readonly helper: HelperReport;
          readonly plugin: string | null;
        }>;
      };
  /** Every host a variable or a file names; any other host goes to `helper`. */
  readonly hosts: readonly HostReport[];
}

export interface DoctorReport {
  readonly tools: Readonly<Record<Tool, ToolReport>>;
}

/** The report of what Terraform and OpenTofu read on this machine now. */
export function doctorReport(machine: Machine): DoctorReport {
  const views = viewsOf(machine);
  return {
    tools: { Terraform: toolReport(views.Terraform), OpenTofu: toolReport(views.OpenTofu) },
  };
}

function toolReport(view: TerraformView): ToolReport {
  const helperReport = ({
    name,
    args,
    file,
    line,
  }: TerraformView["helpers"][number]): HelperReport => ({
    name,
    args: args ?? null,
    file,
    line,
  });
  const choice = view.helperChoice;
  return {
    mainFile: view.mainFile,
    override: view.override ?? null,
    configDir: view.configDir ?? null,
    files: view.files.map(({ file, role, syntax, dropped, error }) => ({
      file,
      role,
      syntax,
      dropped: dropped ?? null,
      unreadable: error ?? null,
    })),
    panic: view.panic ?? null,
    unread: view.unread,
    ignored: view.files.flatMap(({ entries }) =>
      entries.filter(({ host }) => host === undefined).map(placeOf),
    ),
    helpers: view.helpers.map(helperReport),
    helper: choice.kind === "runs" ? helperReport(choice.helper) : null,
    helperChoice:
      choice.kind === "none"
        ? choice
        : choice.kind === "runs"
          ? { kind: "runs", helper: helperReport(choice.helper), plugin: choice.plugin }
          : choice.kind === "missing"
            ? { kind: "missing", helper: helperReport(choice.helper) }
            : {
                kind: "random",
                outcomes: choice.outcomes.map(({ helper, plugin }) => ({
                  helper: helperReport(helper),
                  plugin: plugin ?? null,
                })),
              },
    hosts: view.hosts.map((host): HostReport => {
      const sent = sends(host);
      const why = describeSends(sent);
      switch (sent.from) {
        case "variable":
          return { host: host.host, why, from: "variable", variable: sent.name };
        case "file":
          return { host: host.host, why, from: "file", ...placeOf(sent.entry) };
        case "nothing":
          return { host: host.host, why, from: "nothing", ...placeOf(sent.entry) };
        case "unknown":
          return { host: host.host, why, from: "unknown", entries: sent.entries.map(placeOf) };
        case "helper":
          return { host: host.host, why, from: "helper" };
      }
    }),
  };
}

function placeOf({ file, line, label }: CredentialsEntry): EntryPlace {
  return { file, line, label };
}
