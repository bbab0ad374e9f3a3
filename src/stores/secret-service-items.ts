import { outputOf } from "../processes.ts";

type Env = Readonly<Record<string, string | undefined>>;

const TIMEOUT_MS = 5000;

/**
 * Deletes every Secret Service item whose `service` and `username` attributes are these,
 * with `dbus-send`: the binding refuses to touch an entry that several items match (another
 * program may have stored one with extra attributes), and offers no way to name one item.
 * Returns how many were deleted, or `undefined` when the bus could not be asked. Items in a
 * locked collection are left alone (deleting them would need an unlock prompt).
 */
export async function deleteMatchingItems(
  env: Env,
  service: string,
  username: string,
): Promise<number | undefined> {
  // Neither a service name nor a hostname holds a comma, which dbus-send's dict syntax splits on.
  if (/,/.test(service + username)) return undefined;
  const found = await dbusSend(env, [
    "/org/freedesktop/secrets",
    "org.freedesktop.Secret.Service.SearchItems",
    `dict:string:string:service,${service},username,${username}`,
  ]);
  if (found === undefined) return undefined;
  // The reply is two arrays of object paths, unlocked first, then locked.
  const unlocked = found.split(/\n\s*array \[/)[1] ?? "";
  const paths = [...unlocked.matchAll(/object path "([^"]+)"/g)].map((match) => match[1] ?? "");
  let deleted = 0;
  for (const item of paths) {
    const reply = await dbusSend(env, [item, "org.freedesktop.Secret.Item.Delete"]);
    // "/" as the prompt: deleted without one.
    if (reply !== undefined && /object path "\/"/.test(reply)) deleted++;
  }
  return deleted;
}

function dbusSend(env: Env, args: string[]): Promise<string | undefined> {
  return outputOf(
    "dbus-send",
    ["--session", "--print-reply", "--dest=org.freedesktop.secrets", ...args],
    env,
    TIMEOUT_MS,
  );
}
