/**
 * Safe copy-paste: every fenced sh/bash/shell block in the user-facing Markdown stops at the
 * first failing step and never runs a file from a fixed temporary path (issue 18, item 8).
 * A block pasted into a terminal runs line by line: after a failed `mkdir /tmp/x && tar ...`
 * the next line would run whatever an earlier run, or another local user, left in /tmp/x.
 * So a block of several commands is one `&&` chain (or starts with `set -e`).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { DOCUMENTS } from "../../support/documents.ts";
import { ROOT } from "../../../scripts/packages.ts";

interface ShellBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly text: string;
}

const SHELL_LANGUAGES = new Set(["sh", "bash", "shell"]);

/** The fenced code blocks whose info string is sh, bash or shell. */
function shellBlocks(markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (open === null) continue;
    const fence = open[1]!;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence)) body.push(lines[j++]!);
    if (SHELL_LANGUAGES.has(open[2]!)) blocks.push({ line: i + 1, text: body.join("\n") });
    i = j;
  }
  return blocks;
}

/**
 * Splits shell text into top-level `commands` at newlines (a line that ends in `\`, `&&`,
 * `||` or `|`, or inside quotes or `$( )`, goes on), and notes each `;` and `&` that runs the
 * next step whatever the last one did. Comments are dropped. Enough shell for documentation, not a
 * parser: it knows quotes, `\`, `$( )` and `#` at the start of a word.
 */
function splitShell(text: string): { commands: string[]; separators: string[] } {
  const commands: string[] = [];
  const separators: string[] = [];
  let current = "";
  let quote: "'" | '"' | undefined;
  let depth = 0;
  const finish = () => {
    if (current.trim() !== "") commands.push(current.trim());
    current = "";
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      current += char;
      continue;
    }
    if (char === "\\") {
      if (text[i + 1] === "\n") {
        current += " ";
        i++;
      } else {
        current += char + (text[i + 1] ?? "");
        i++;
      }
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = undefined;
      current += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
    } else if (char === "#" && (current === "" || /\s$/.test(current))) {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
      continue;
    } else if (char === "(") {
      depth++;
    } else if (char === ")") {
      depth--;
    } else if (depth === 0 && char === ";") {
      separators.push(";");
    } else if (depth === 0 && char === "\n") {
      if (/(&&|\|\||\|)\s*$/.test(current)) {
        current += " ";
        continue;
      }
      finish();
      continue;
    } else if (depth === 0 && char === "&" && text[i + 1] !== "&" && text[i - 1] !== "&") {
      if (text[i - 1] !== ">" && text[i + 1] !== ">") separators.push("&");
    }
    current += char;
  }
  finish();
  return { commands, separators };
}

/** The simple commands of one command: split at `&&`, `||`, `|`, `;` and `&`, outside quotes. */
function steps(command: string): string[] {
  const out: string[] = [];
  let current = "";
  let quote: string | undefined;
  let depth = 0;
  for (let i = 0; i < command.length; i++) {
    const char = command[i]!;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === "(") {
      depth++;
    } else if (char === ")") {
      depth--;
    } else if (
      depth === 0 &&
      (char === "|" || char === ";" || (char === "&" && !/[<>]/.test(command[i - 1] ?? "")))
    ) {
      out.push(current.trim());
      current = "";
      if (command[i + 1] === char) i++;
      continue;
    }
    current += char;
  }
  out.push(current.trim());
  return out.filter((step) => step !== "");
}

/** The program a simple command runs: its first word after `VAR=value` assignments, unquoted. */
function program(step: string): string {
  const words = step.split(/\s+/);
  const first = words.find((word) => !/^[A-Za-z_]\w*=/.test(word)) ?? "";
  return first.replace(/["']/g, "");
}

const FIXED_TEMP = /^(?:\/tmp|\/var\/tmp|\$TMPDIR|\$\{TMPDIR[^}]*\})\//;

/** What is unsafe about pasting `text` into a terminal; empty when nothing is. */
function problemsOf(text: string): string[] {
  const problems: string[] = [];
  const { commands, separators } = splitShell(text);
  const stopsOnFailure = /^set\s+-[a-z]*e/.test(commands[0] ?? "");
  if (!stopsOnFailure) {
    if (commands.length > 1) {
      problems.push(
        `${commands.length} commands that run even when the one before failed: join them with && or start with set -e`,
      );
    }
    if (separators.length > 0) {
      problems.push(`"${separators[0]}" runs the next step even when one failed: use &&`);
    }
  }
  const fixedDirs: string[] = [];
  for (const step of commands.flatMap(steps)) {
    const words = step.split(/\s+/);
    if (program(step) === "mkdir") {
      for (const word of words.slice(1)) {
        const dir = word.replace(/["']/g, "");
        if (FIXED_TEMP.test(`${dir}/`)) fixedDirs.push(dir.replace(/\/$/, ""));
      }
      continue;
    }
    const runs = program(step);
    const fromMkdir = fixedDirs.find((dir) => runs.startsWith(`${dir}/`));
    if (fromMkdir !== undefined) {
      problems.push(
        `runs ${runs} from ${fromMkdir}, a fixed directory that may already exist with someone else's files: use d=$(mktemp -d)`,
      );
    } else if (FIXED_TEMP.test(runs)) {
      problems.push(`runs ${runs} from a fixed temporary path: use d=$(mktemp -d)`);
    }
  }
  return problems;
}

describe("the safe copy-paste check", () => {
  test("the README's old archive block fails: unjoined steps and a program from a fixed /tmp directory", () => {
    const old = [
      "grep _linux-x64. SHA256SUMS | sha256sum -c          # macOS: ... | shasum -a 256 -c",
      "",
      "mkdir /tmp/tfck && tar -xJf terraform-credentials-keychain_*_linux-x64.tar.xz -C /tmp/tfck",
      "/tmp/tfck/terraform-credentials-keychain install",
      "rm -r /tmp/tfck",
    ].join("\n");
    const problems = problemsOf(old);
    assert.match(problems[0]!, /^4 commands that run even when the one before failed/);
    assert.match(problems[1]!, /runs \/tmp\/tfck\/terraform-credentials-keychain from \/tmp\/tfck/);
  });

  test("even joined with &&, a program from a fixed temporary path fails", () => {
    assert.deepEqual(problemsOf('"$TMPDIR/x/tool" install'), [
      "runs $TMPDIR/x/tool from a fixed temporary path: use d=$(mktemp -d)",
    ]);
    assert.equal(problemsOf("mkdir -p /tmp/x && tar -xf a.tar -C /tmp/x && /tmp/x/tool").length, 1);
  });

  test("; and & run the next step after a failure", () => {
    assert.match(problemsOf("make; make install")[0]!, /";" runs the next step/);
    assert.match(problemsOf("server & client")[0]!, /"&" runs the next step/);
  });

  test("an && chain over several lines, with comments, passes", () => {
    const chain = [
      "# verify first",
      "grep _linux-x64. SHA256SUMS | sha256sum -c &&   # macOS: shasum -a 256 -c",
      '  d=$(mktemp -d) && tar -xJf a.tar.xz -C "$d" &&',
      '  "$d/terraform-credentials-keychain" install && rm -r "$d"',
    ].join("\n");
    assert.deepEqual(problemsOf(chain), []);
    assert.deepEqual(problemsOf("npm ci \\\n  && npm run build"), []);
    assert.deepEqual(problemsOf("echo '; # not a comment' \"a;b\" 2>&1"), []);
  });

  test("a block that starts with set -e passes", () => {
    assert.deepEqual(problemsOf("set -euo pipefail\nnpm ci\nnpm run build"), []);
  });

  test("only sh, bash and shell blocks are read", () => {
    const markdown =
      "```sh\na\n```\n\n```powershell\nb\nc\n```\n\n```\nd\ne\n```\n```bash\nf\n```\n";
    assert.deepEqual(shellBlocks(markdown), [
      { line: 1, text: "a" },
      { line: 14, text: "f" },
    ]);
  });
});

describe("the shell blocks people copy", () => {
  for (const document of DOCUMENTS) {
    test(`${document}: every shell block stops at the first failing step`, () => {
      const markdown = readFileSync(path.join(ROOT, document), "utf8");
      const found = shellBlocks(markdown).flatMap((block) =>
        problemsOf(block.text).map((problem) => `${document}:${block.line}: ${problem}`),
      );
      assert.deepEqual(found, []);
    });
  }
});
