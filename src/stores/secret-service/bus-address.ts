import type { SocketAddress } from "./unix-socket.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Where the session bus listens, in the order to try: the Unix addresses (`unix:path=`,
 * `unix:abstract=`) of `DBUS_SESSION_BUS_ADDRESS`, or, when it is unset, the socket
 * `$XDG_RUNTIME_DIR/bus` that systemd's user bus provides (as libdbus and sd-bus do).
 * An empty list means there is no address we can use.
 */
export function sessionBusAddresses(env: Env): SocketAddress[] {
  const address = env.DBUS_SESSION_BUS_ADDRESS;
  if (address === undefined || address === "") {
    const runtime = env.XDG_RUNTIME_DIR;
    if (!runtime) return [];
    let end = runtime.length;
    while (end > 0 && runtime[end - 1] === "/") end--;
    return [{ path: `${runtime.slice(0, end)}/bus` }];
  }
  return parseBusAddress(address);
}

/**
 * The Unix socket addresses of a D-Bus address string (D-Bus specification, "Server
 * Addresses"): `;`-separated `transport:key=value,...`, values %-escaped. Transports other
 * than `unix` (tcp, launchd, autolaunch) and `unix:` forms that only a server uses
 * (`dir=`, `tmpdir=`, `runtime=`) are skipped.
 */
export function parseBusAddress(address: string): SocketAddress[] {
  const found: SocketAddress[] = [];
  for (const entry of address.split(";")) {
    const colon = entry.indexOf(":");
    if (colon < 0 || entry.slice(0, colon) !== "unix") continue;
    const keys = new Map<string, string>();
    for (const pair of entry.slice(colon + 1).split(",")) {
      const equals = pair.indexOf("=");
      if (equals <= 0) continue;
      const value = unescapeValue(pair.slice(equals + 1));
      if (value !== undefined) keys.set(pair.slice(0, equals), value);
    }
    const path = keys.get("path");
    const abstract = keys.get("abstract");
    if (path !== undefined && path !== "") found.push({ path });
    else if (abstract !== undefined && abstract !== "") found.push({ abstract });
  }
  return found;
}

function unescapeValue(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** Why sessionBusAddresses() found nothing, for the message. */
export function noAddressReason(env: Env): string {
  const address = env.DBUS_SESSION_BUS_ADDRESS;
  return address === undefined || address === ""
    ? "DBUS_SESSION_BUS_ADDRESS is not set"
    : "DBUS_SESSION_BUS_ADDRESS names no unix: socket";
}

/** For messages: the address as the user would recognise it. */
export function describeAddress(address: SocketAddress): string {
  return "path" in address ? `unix:path=${address.path}` : `unix:abstract=${address.abstract}`;
}
