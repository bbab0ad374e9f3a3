#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with a real, unlocked gnome-keyring,
# so that tests and benchmarks never touch the user's own keyring.
#
#   scripts/with-keyring.sh COMMAND [ARGS...]
#
# HOME and the XDG dirs point into a temp dir *before* dbus-run-session starts, because
# services the bus activates inherit its environment. The daemon is started by hand with
# --unlock and a password on stdin: that creates and unlocks the "login" collection
# without any prompt.
set -euo pipefail

if [[ "${1:-}" != "--inside" ]]; then
  for tool in dbus-run-session gnome-keyring-daemon dbus-send; do
    command -v "$tool" >/dev/null || { echo "with-keyring: $tool is missing (apt-get install dbus dbus-x11 gnome-keyring)" >&2; exit 127; }
  done
  sandbox=$(mktemp -d "${TMPDIR:-/tmp}/tfck-keyring.XXXXXX")
  trap 'rm -rf "$sandbox"' EXIT
  mkdir -p "$sandbox"/{home,config,data,cache,runtime}
  chmod 700 "$sandbox/runtime"
  export HOME="$sandbox/home" XDG_CONFIG_HOME="$sandbox/config" XDG_DATA_HOME="$sandbox/data" \
    XDG_CACHE_HOME="$sandbox/cache" XDG_RUNTIME_DIR="$sandbox/runtime"
  export TFCK_KEYRING_SANDBOX="$sandbox"
  # Not exec: the EXIT trap must run to remove the sandbox.
  dbus-run-session -- "$0" --inside "$@"
  exit $?
fi
shift

bus_call() { # method, args... -> prints the reply
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "org.freedesktop.DBus.$1" "${@:2}"
}

printf 'test-keyring-password' | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
daemon_pid=$!
trap 'kill "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true' EXIT

# Ask the bus, not the service: a call addressed to org.freedesktop.secrets before the
# daemon owns the name would make the bus auto-start a second daemon.
for _ in $(seq 1 100); do
  if bus_call NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then
    break
  fi
  kill -0 "$daemon_pid" 2>/dev/null || { echo "with-keyring: gnome-keyring-daemon exited early" >&2; exit 1; }
  sleep 0.05
done
for _ in $(seq 1 100); do
  locked=$(dbus-send --session --print-reply --dest=org.freedesktop.secrets \
    /org/freedesktop/secrets/collection/login org.freedesktop.DBus.Properties.Get \
    string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null || true)
  if grep -q 'boolean false' <<<"$locked"; then
    ready=1
    break
  fi
  sleep 0.05
done
[[ "${ready:-}" == 1 ]] || { echo "with-keyring: the login collection did not come up unlocked" >&2; exit 1; }

export TFCK_KEYRING_DAEMON_PID="$daemon_pid"
"$@"
