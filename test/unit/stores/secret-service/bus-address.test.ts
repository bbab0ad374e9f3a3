import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SocketAddress } from "../../../../src/stores/secret-service/unix-socket.ts";
import {
  describeAddress,
  parseBusAddress,
  sessionBusAddresses,
} from "../../../../src/stores/secret-service/bus-address.ts";

const GUID = "guid=0123456789abcdef0123456789abcdef";

describe("parseBusAddress", () => {
  const cases: [string, string, SocketAddress[]][] = [
    ["a socket path", "unix:path=/run/user/1000/bus", [{ path: "/run/user/1000/bus" }]],
    [
      "an abstract socket, its guid ignored",
      `unix:abstract=/tmp/dbus-AbCdEf,${GUID}`,
      [{ abstract: "/tmp/dbus-AbCdEf" }],
    ],
    ["a guid before the path", `unix:${GUID},path=/tmp/bus`, [{ path: "/tmp/bus" }]],
    [
      "%-escapes, in either case",
      "unix:path=/tmp/with%20space%2cand%3Bmore%25",
      [{ path: "/tmp/with space,and;more%" }],
    ],
    ["a %-escaped UTF-8 name", "unix:path=/tmp/caf%c3%a9", [{ path: "/tmp/caf\u00e9" }]],
    ["a plus sign stays a plus sign", "unix:path=/tmp/a+b", [{ path: "/tmp/a+b" }]],
    [
      "several entries, in order, with the others skipped",
      `tcp:host=localhost,port=1234;unix:path=/a,${GUID};launchd:env=X;unix:abstract=b;autolaunch:`,
      [{ path: "/a" }, { abstract: "b" }],
    ],
    [
      "unix forms that only a server uses are skipped",
      "unix:dir=/tmp;unix:tmpdir=/tmp;unix:runtime=yes;unix:path=/c",
      [{ path: "/c" }],
    ],
    ["empty entries are skipped", ";;unix:path=/a;", [{ path: "/a" }]],
    [
      "the path wins over an abstract name in one entry",
      "unix:abstract=x,path=/y",
      [{ path: "/y" }],
    ],
    ["an empty path is no address", "unix:path=", []],
    ["a key without a value is no address", "unix:path", []],
    ["a bad escape drops that key only", "unix:path=/bad%zz,abstract=ok", [{ abstract: "ok" }]],
    ["a transport that merely starts with unix", "unixexec:path=/bin/true", []],
    ["a transport name must be exact", "UNIX:path=/a", []],
    ["nothing usable", "tcp:host=localhost,port=1234;nonce-tcp:host=x", []],
    ["an empty string", "", []],
  ];
  for (const [what, address, expected] of cases) {
    test(what, () => {
      assert.deepStrictEqual(parseBusAddress(address), expected);
    });
  }
});

describe("sessionBusAddresses", () => {
  const cases: [string, Record<string, string | undefined>, SocketAddress[]][] = [
    [
      "DBUS_SESSION_BUS_ADDRESS when it is set",
      { DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/bus", XDG_RUNTIME_DIR: "/run/user/1000" },
      [{ path: "/tmp/bus" }],
    ],
    [
      "unset: the systemd user bus in $XDG_RUNTIME_DIR",
      { XDG_RUNTIME_DIR: "/run/user/1000" },
      [{ path: "/run/user/1000/bus" }],
    ],
    [
      "empty counts as unset, and trailing slashes go",
      { DBUS_SESSION_BUS_ADDRESS: "", XDG_RUNTIME_DIR: "/run/user/1000//" },
      [{ path: "/run/user/1000/bus" }],
    ],
    [
      "an address with nothing usable does not fall back",
      { DBUS_SESSION_BUS_ADDRESS: "tcp:host=localhost,port=1", XDG_RUNTIME_DIR: "/run/user/1000" },
      [],
    ],
    ["neither set", {}, []],
    ["an empty XDG_RUNTIME_DIR", { XDG_RUNTIME_DIR: "" }, []],
  ];
  for (const [what, env, expected] of cases) {
    test(what, () => {
      assert.deepStrictEqual(sessionBusAddresses(env), expected);
    });
  }
});

describe("describeAddress", () => {
  test("shows the address as D-Bus writes it", () => {
    assert.equal(describeAddress({ path: "/run/user/1000/bus" }), "unix:path=/run/user/1000/bus");
    assert.equal(describeAddress({ abstract: "/tmp/dbus-x" }), "unix:abstract=/tmp/dbus-x");
  });
});
