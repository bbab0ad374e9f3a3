import process from "node:process";

/**
 * Whether descriptor `fd` (0, 1 or 2) is a terminal. A pipe or a file is told apart with one
 * fstat (Bun's own off Windows: node:fs costs every call that loads it ~0.7 ms); only a
 * character device (a terminal, or /dev/null) costs the process stream that knows, whose
 * creation loads net, stream and tty (~2.5 ms of a store that only asked). Asked, never read
 * or written: the process still leaves at once.
 */
export async function isTerminal(fd: 0 | 1 | 2): Promise<boolean> {
  try {
    if (!(await descriptorStats(fd)).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return (fd === 0 ? process.stdin : fd === 1 ? process.stdout : process.stderr).isTTY;
}

interface Stats {
  isCharacterDevice(): boolean;
  isFIFO(): boolean;
}

/** What descriptor `fd` is: Bun's own fstat off Windows, else node:fs's. */
export async function descriptorStats(fd: number): Promise<Stats> {
  const bun = (globalThis as { Bun?: { file(fd: number): { stat(): Promise<Stats> } } }).Bun;
  if (bun !== undefined && process.platform !== "win32") return bun.file(fd).stat();
  return (await import("node:fs")).fstatSync(fd);
}
