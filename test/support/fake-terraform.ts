import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * A directory under `root` holding a `terraform` that answers `terraform version` as
 * Terraform `version` does, to put on PATH: whether `terraform stacks` exists (1.16+)
 * decides whether the stacks note applies.
 */
export function fakeTerraformDir(root: string, version: string): string {
  const dir = path.join(root, `terraform-${version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "terraform"),
    `#!/bin/sh\nprintf 'Terraform v${version}\\non linux_amd64\\n'\n`,
    { mode: 0o755 },
  );
  return dir;
}
