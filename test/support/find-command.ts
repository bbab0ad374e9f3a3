import { accessSync, constants } from "node:fs";
import path from "node:path";

/** The path of `command` in a PATH directory, or undefined when none has it. */
export function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const found = executable(path.join(dir, command));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** `file` when it exists and may be run, else undefined. */
export function executable(file: string): string | undefined {
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    return undefined;
  }
}
