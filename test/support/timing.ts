/**
 * The time bounds of the tests, in one place, so that none depends on how fast the machine
 * is: they must hold on a loaded 2-core machine with a second suite running beside them.
 */

/**
 * How long a test gives what it waits for (a helper run before it is killed, a daemon coming
 * up, a file appearing). Only keeps a hung test from hanging the suite: no test checks that
 * something was fast by it.
 */
export const PATIENCE_MS = 180_000;

/**
 * The bound for "ended at once, or at its own short deadline (at most 5 s), not later": what
 * the tests that use it catch is a call that waits for the default 30 s deadline, for a second
 * deadline, or for ever. Generous beside that, since on a loaded machine the start of a
 * process alone has taken seconds.
 */
export const PROMPT_MS = 20_000;

/** How long a whole test of several such steps may take before node:test stops it. */
export const TEST_PATIENCE_MS = 900_000;
