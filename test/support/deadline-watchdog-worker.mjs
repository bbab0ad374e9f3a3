// Node 20 gives a worker thread no tsx loader of its own: it registers one, then runs the
// TypeScript watchdog worker. (The built executable's Bun runs TypeScript itself.)
import { register } from "tsx/esm/api";

register();
await import("../../src/system/deadline-watchdog-worker.ts");
