/**
 * Whether a process listens on a Unix socket address, from the kernel's table of Unix
 * sockets (/proc/net/unix, Linux only): a socket bound there (its path, or `@` and its
 * abstract name) with __SO_ACCEPTCON in its flags. Only the failure path of a connect asks,
 * so the table is read, and node:fs loaded, only then.
 *
 * Resolves `undefined` when the table cannot be read (not Linux, no /proc).
 */
export async function listensAt(
  address: { readonly path: string } | { readonly abstract: string },
): Promise<boolean | undefined> {
  const { readFile, realpath } = await import("node:fs/promises");
  let table: string;
  try {
    table = await readFile("/proc/net/unix", "latin1");
  } catch {
    return undefined;
  }
  // A path as bound: dbus-daemon binds an absolute path, which a symlink may lead to.
  const names = new Set<string>();
  if ("path" in address) {
    names.add(address.path);
    const real = await realpath(address.path).catch(() => undefined);
    if (real !== undefined) names.add(real);
  } else {
    names.add(`@${address.abstract}`);
  }
  // "Num: RefCount Protocol Flags Type St Inode Path", the flags in hex.
  for (const line of table.split("\n")) {
    const fields =
      /^\s*[0-9a-f]+: [0-9a-f]+ [0-9a-f]+ ([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ \d+ (.+)$/i.exec(line);
    const [, flags = "0", name = ""] = fields ?? [];
    if (names.has(name) && (parseInt(flags, 16) & SO_ACCEPTCON) !== 0) return true;
  }
  return false;
}

/** __SO_ACCEPTCON (include/linux/net.h): the socket is listening. */
const SO_ACCEPTCON = 0x10000;
