/**
 * Runs deadline-watchdog.ts's guard the way the Windows store does, with a synchronous call
 * that blocks the thread as a hung native call would.
 *   deadline-watchdog-fixture.ts hang SECONDS     a call that never returns
 *   deadline-watchdog-fixture.ts idle SECONDS     a quick call, then another past the deadline
 */
import { CliError } from "../../src/errors.ts";
import { deadlineIn } from "../../src/system/deadline.ts";
import { startDeadlineWatchdog } from "../../src/system/deadline-watchdog.ts";

const [mode, seconds] = process.argv.slice(2);
const watchdog = startDeadlineWatchdog(
  deadlineIn(Number(seconds)),
  `deadline of ${seconds} s`,
  new URL("./deadline-watchdog-worker.mjs", import.meta.url),
);

if (mode === "hang") {
  watchdog.guard(() => {
    for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
  });
} else {
  process.stdout.write(`${watchdog.guard(() => "answered")}\n`);
  // Past the deadline, idle: the watchdog must not end the process, and no call may start.
  setTimeout(
    () => {
      try {
        watchdog.guard(() => process.stdout.write("a call started after the deadline\n"));
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        process.stdout.write(`refused: ${error.message}\n`);
      }
    },
    Number(seconds) * 1000 + 500,
  );
}
