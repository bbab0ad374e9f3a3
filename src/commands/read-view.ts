import { existsSync, readdirSync, statSync } from "node:fs";
import { readTextIfExists } from "../system/files.ts";
import type { Machine } from "../system/io.ts";
import {
  terraformViews,
  type FileSource,
  type TerraformView,
  type Tool,
} from "../terraform/view.ts";

/** The file system as the view reads it: each file read once per view. */
const machineFiles: FileSource = {
  exists: (file) => existsSync(file),
  list(dir) {
    try {
      return readdirSync(dir);
    } catch {
      return undefined; // No directory: nothing merged from it.
    }
  },
  read: (file) => readTextIfExists(file),
  // Go's os.Stat: links followed; what cannot be stat'ed is no plugin.
  isFile: (file) => statSync(file, { throwIfNoEntry: false })?.isDirectory() === false,
};

/** What Terraform and OpenTofu read on this machine now (see `terraformViews`). */
export function viewsOf(machine: Machine): Record<Tool, TerraformView> {
  return terraformViews({ ...machine, files: machineFiles });
}
