import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";

/** A private temporary directory with a `home` inside, removed when the test ends. */
export interface TempHome {
  /** The temporary directory; `home` and anything outside HOME live in it. */
  readonly root: string;
  /** The directory to use as HOME. */
  readonly home: string;
  /** A path under HOME. */
  inHome(...parts: string[]): string;
  /** Writes `content` to `file` (creating its directory) with exactly `mode`. */
  write(file: string, content: string | Uint8Array, mode?: number): void;
  /** The file's bytes, or `undefined` when it does not exist. */
  bytes(file: string): Buffer | undefined;
  /** The file's text, or `undefined` when it does not exist. */
  text(file: string): string | undefined;
  /** The file's permission bits. */
  mode(file: string): number;
}

export function createTempHome(t: TestContext, prefix = "tfck-test-"): TempHome {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  t.after(() => {
    rmSync(root, { recursive: true, force: true });
  });
  const home = path.join(root, "home");
  mkdirSync(home);
  const bytes = (file: string): Buffer | undefined => {
    try {
      return readFileSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  };
  return {
    root,
    home,
    inHome: (...parts) => path.join(home, ...parts),
    write(file, content, mode = 0o644) {
      mkdirSync(path.dirname(file), { recursive: true });
      rmSync(file, { force: true });
      writeFileSync(file, content, { mode });
      // writeFileSync's mode is narrowed by the umask; the tests need it exact.
      chmodSync(file, mode);
    },
    bytes,
    text: (file) => bytes(file)?.toString("utf8"),
    mode: (file) => statSync(file).mode & 0o7777,
  };
}
