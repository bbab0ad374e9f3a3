/**
 * The linux-arm64 build, run under qemu-user against a real gnome-keyring: the protocol
 * suite, as for the host's build. Skipped, with one line naming the package, where qemu or
 * the arm64 runtime libraries are missing.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { startKeyringSession } from "../support/keyring-session.ts";
import { describeProtocol } from "../support/protocol-suite.ts";
import { onPath } from "../support/find-command.ts";
import { PATIENCE_MS } from "../support/timing.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const ARM64_BUILD = path.join(ROOT, "dist/linux-arm64/terraform-credentials-keychain");
/** Debian's cross packages put the arm64 loader and libraries here. */
const ARM64_ROOT = "/usr/aarch64-linux-gnu";

/** One SKIP line naming the package that is missing, or undefined when all is there. */
function qemuMissing(): string | undefined {
  if (onPath("qemu-aarch64") === undefined) {
    return "SKIP: qemu-aarch64 is not installed, so the linux-arm64 build is not run (apt-get install qemu-user)";
  }
  const needs: Array<[string, string]> = [
    ["lib/ld-linux-aarch64.so.1", "libc6-arm64-cross"],
    // The keyring addon is Rust, linked against libgcc_s for unwinding.
    ["lib/libgcc_s.so.1", "libgcc-s1-arm64-cross"],
  ];
  for (const [file, pkg] of needs) {
    if (!existsSync(path.join(ARM64_ROOT, file))) {
      return `SKIP: ${ARM64_ROOT}/${file} is missing, so the linux-arm64 build is not run (apt-get install ${pkg})`;
    }
  }
  return undefined;
}

const missing = qemuMissing();
if (missing !== undefined) {
  test("the linux-arm64 build under qemu", { skip: missing }, () => {});
} else {
  describeProtocol(
    "the Secret Service (gnome-keyring), linux-arm64 under qemu",
    async () => {
      // Built here, as the host's build is by scripts/test.sh: a stale binary proves nothing.
      execFileSync("npx", ["tsx", "scripts/build.ts", "--target", "linux-arm64"], {
        cwd: ROOT,
        stdio: "pipe",
      });
      const session = await startKeyringSession();
      return {
        env: session.env,
        args: [],
        command: ["qemu-aarch64", "-L", ARM64_ROOT, ARM64_BUILD],
        close: () => session.close(),
      };
    },
    // Each emulated call costs ~0.8 s of CPU instead of ~30 ms, so 60 processes at once
    // (the suite's default) would take minutes on a 2-core machine: the parallel case uses
    // 4 hosts (12 processes at once, still overlapping), and a call may take up to 60 s.
    { parallel: 4, timeoutMs: PATIENCE_MS },
  );
}
