/**
 * Prints the build targets as a JSON array, for the workflow: a Windows job runs only once
 * its target is here (win-arm64 before it lands).
 */
import { TARGET_NAMES } from "./targets.ts";

console.log(JSON.stringify(TARGET_NAMES));
