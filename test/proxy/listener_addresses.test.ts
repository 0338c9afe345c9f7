import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isLoopback, listenerAddresses } from "../../host/proxy/listener_addresses.ts";

// Issue 25 item 3: the bind address of each listener from the flags.

describe("listener addresses", () => {
  it("outbound and admin on the loopback of the pod address's family", () => {
    assert.deepEqual({ ...listenerAddresses("10.1.2.3") }, { pod: "10.1.2.3", outbound: "127.0.0.1", admin: "127.0.0.1", warnings: [] });
    assert.deepEqual({ ...listenerAddresses("fd00::7") }, { pod: "fd00::7", outbound: "::1", admin: "::1", warnings: [] });
    assert.deepEqual({ ...listenerAddresses("0.0.0.0") }, { pod: "0.0.0.0", outbound: "127.0.0.1", admin: "127.0.0.1", warnings: [] });
    assert.equal(listenerAddresses("::").outbound, "::1");
  });

  it("--adminBindAddress off loopback is honoured with a warning; on loopback without", () => {
    const open = listenerAddresses("10.1.2.3", "0.0.0.0");
    assert.equal(open.admin, "0.0.0.0");
    assert.match(open.warnings[0], /^--adminBindAddress 0\.0\.0\.0: the admin port .* is reachable from the network/);
    assert.deepEqual(listenerAddresses("10.1.2.3", "127.0.0.5").warnings, []);
    assert.deepEqual(listenerAddresses("10.1.2.3", "localhost").warnings, []);
  });

  it("loopback is 127/8, ::1 and localhost", () => {
    for (const a of ["127.0.0.1", "127.9.9.9", "::1", "localhost"]) assert.equal(isLoopback(a), true, a);
    for (const a of ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "fd00::1"]) assert.equal(isLoopback(a), false, a);
  });
});
