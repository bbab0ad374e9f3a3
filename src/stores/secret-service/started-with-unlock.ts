import { BUS, type BusConnection } from "./connection.ts";
import { SECRETS } from "./secret-service.ts";

/**
 * Whether the process that owns org.freedesktop.secrets was started with `--unlock`, as
 * `echo -n PASSWORD | gnome-keyring-daemon --replace --unlock` starts it: it then unlocks the
 * login keyring with that password, or creates the keyring with it, so a login keyring that
 * is locked under it was most likely given the wrong password (or locked since). Asked only
 * after a call found the keyring locked: one bus call and one read of /proc. False where
 * either cannot be had (another PID namespace, no /proc): nothing is claimed then.
 */
export async function startedWithUnlock(connection: BusConnection): Promise<boolean> {
  try {
    const [pid] = (
      await connection.call({
        ...BUS,
        member: "GetConnectionUnixProcessID",
        signature: "s",
        body: [SECRETS],
      })
    ).body;
    if (typeof pid !== "number") return false;
    // node:fs only now: loaded on every call, it would cost each one ~0.7 ms.
    const { readFile } = await import("node:fs/promises");
    const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
    return (
      argv.some((word) => /^gnome-keyring-daemon$|\/gnome-keyring-daemon$/.test(word)) &&
      argv.includes("--unlock")
    );
  } catch {
    return false;
  }
}
