/**
 * Keeps tokens out of core dumps and away from other processes of the same user, as
 * ssh-agent and gpg-agent do: a process that reads a token is made non-dumpable on Linux
 * (`prctl(PR_SET_DUMPABLE, 0)`: no core file, no same-user ptrace, /proc/<pid>/mem and
 * environ owned by root), and on macOS gets a core limit of zero and `PT_DENY_ATTACH`.
 * Windows writes no core files of its own accord; nothing is done there.
 *
 * Through Bun's FFI, only in the built executable: from source (Node) there is no FFI, and
 * a failure here (a libc not found) leaves the process as it was rather than stopping a
 * call that would otherwise work.
 */
export async function forbidCoreDumps(platform: NodeJS.Platform): Promise<void> {
  if (platform !== "linux" && platform !== "darwin") return;
  if ((globalThis as { Bun?: unknown }).Bun === undefined) return;
  try {
    const { dlopen } = await import("bun:ffi");
    if (platform === "linux") {
      // int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4,
      //           unsigned long arg5);
      const PR_SET_DUMPABLE = 4;
      const libc = dlopen("libc.so.6", {
        prctl: {
          args: ["i32", "u64", "u64", "u64", "u64"],
          returns: "i32",
        },
      });
      libc.symbols.prctl(PR_SET_DUMPABLE, 0n, 0n, 0n, 0n);
      libc.close();
      return;
    }
    // int setrlimit(int resource, const struct rlimit *rlp);  struct rlimit { rlim_t cur, max; }
    // int ptrace(int request, pid_t pid, caddr_t addr, int data);
    const RLIMIT_CORE = 4;
    const PT_DENY_ATTACH = 31;
    const system = dlopen("/usr/lib/libSystem.B.dylib", {
      setrlimit: { args: ["i32", "ptr"], returns: "i32" },
      ptrace: { args: ["i32", "i32", "ptr", "i32"], returns: "i32" },
    });
    system.symbols.setrlimit(RLIMIT_CORE, new BigUint64Array([0n, 0n]));
    system.symbols.ptrace(PT_DENY_ATTACH, 0, null, 0);
    system.close();
  } catch {
    // No FFI or no libc here: the process stays as it was.
  }
}
