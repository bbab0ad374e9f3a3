/**
 * Work that must be undone even when the process is interrupted (Ctrl-C, SIGTERM, SIGHUP):
 * endOnSignals (signal-forwarding.ts) runs what is registered here before it lets such a
 * signal end the process. Each
 * cleanup is synchronous, since nothing asynchronous runs after the signal.
 */
const cleanups = new Set<() => void>();

/** Registers `cleanup`; the returned function unregisters it once the work is undone. */
export function registerCleanup(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/** Runs every registered cleanup once; one that throws does not stop the others. */
export function runCleanups(): void {
  for (const cleanup of [...cleanups]) {
    cleanups.delete(cleanup);
    try {
      cleanup();
    } catch {
      // Nothing more can be done while the process is ending.
    }
  }
}
