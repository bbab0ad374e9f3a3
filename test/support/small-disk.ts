import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";

/**
 * A private tmpfs of `kib` KiB, mounted for one test and unmounted after it: a disk that
 * can be filled without touching the machine's own. Mounting needs root (CI has it); a
 * test elsewhere is skipped with one line, unless CI demands the case.
 */
export interface SmallDisk {
  /** Where it is mounted. */
  readonly dir: string;
  /** Fills it so that at most `bytes` stay free (tmpfs counts whole 4 KiB pages). */
  fill(bytes: number): void;
}

export function smallDisk(t: TestContext, kib: number): SmallDisk | undefined {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tfck-disk-"));
  const mounted = spawnSync(
    "mount",
    ["-t", "tmpfs", "-o", `size=${kib}k,mode=0755`, "tmpfs", dir],
    {
      encoding: "utf8",
    },
  );
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    const why = `cannot mount a small tmpfs here (${(mounted.stderr || String(mounted.error)).trim()})`;
    if (process.env.CI === "true") throw new Error(`${why}; CI needs root for the full-disk tests`);
    t.skip(why);
    return undefined;
  }
  t.after(() => {
    spawnSync("umount", [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  let fillers = 0;
  return {
    dir,
    fill(bytes) {
      const free = () => {
        const stats = statfsSync(dir);
        return stats.bavail * stats.bsize;
      };
      const size = free() - bytes;
      if (size > 0) writeFileSync(path.join(dir, `filler-${fillers++}`), Buffer.alloc(size));
      if (free() > bytes + 4096) throw new Error(`could not fill ${dir} to ${bytes} bytes free`);
    },
  };
}
