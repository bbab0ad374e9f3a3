import { readdirSync } from "node:fs";
import path from "node:path";
import { ROOT } from "../../scripts/packages.ts";

/** The documents people read, relative to the repository: what the docs tests check. */
export const DOCUMENTS: readonly string[] = [
  "README.md",
  "packaging/archive-README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
