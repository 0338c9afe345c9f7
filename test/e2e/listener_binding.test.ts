import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { AGENT_BIN } from "../../host/demo/binaries.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";
import { freePort, get } from "./sidecar_support.ts";

// Issue 25 item 3: what a stranger on the network can reach. The agent binds
// the inbound and status listeners to --bindAddress (the pod's address), the
// outbound listener to loopback (only the pod's app sends through it) and the
// admin listener to loopback unless --adminBindAddress says otherwise, with a
// warning. The "network" address is this machine's first non-loopback IPv4
// address (127.0.0.2, also not bound by a 127.0.0.1 listener, when it has none).

const NETWORK_ADDRESS =
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === "IPv4" && !a.internal)?.address ?? "127.0.0.2";

interface Listening {
  inbound: number;
  outbound: number;
  admin: number;
  status: number;
}

/** "open" when a TCP connection is accepted, else the error code (ECONNREFUSED for an address the port is not bound on). */
function tcpConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve("open");
    });
    socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

describe("listener bind addresses (issue 25 item 3)", { timeout: 300_000 }, () => {
  const dir = tempDir("mesh-listener-binding-");
  writeFileSync(join(dir, "empty.yaml"), "");
  const agents: Daemon<Listening>[] = [];
  const agent = async (args: string[]) => {
    const statusPort = await freePort();
    const a = await startDaemon<Listening>(
      AGENT_BIN,
      ["proxy", "--configDir", dir, "--inboundPort", "0", "--outboundPort", "0", "--proxyAdminPort", "0", "--statusPort", String(statusPort), ...args],
      "disco-agent listening ",
      undefined,
      { ...process.env, POD_NAME: "web", POD_NAMESPACE: "shop" },
    );
    agents.push(a);
    return a;
  };
  after(async () => {
    for (const a of agents) await a.stop();
  });

  it("--bindAddress <pod address>: inbound and status there; outbound and admin on loopback only", async () => {
    const a = await agent(["--bindAddress", NETWORK_ADDRESS]);
    const l = a.listening;
    assert.equal(await tcpConnect(NETWORK_ADDRESS, l.inbound), "open");
    assert.equal((await get(`http://${NETWORK_ADDRESS}:${l.status}/healthz/ready`)).status, 200, "the kubelet's probe reaches the status port");
    assert.equal(await tcpConnect(NETWORK_ADDRESS, l.outbound), "ECONNREFUSED", "a stranger cannot send through the outbound listener");
    assert.equal(await tcpConnect(NETWORK_ADDRESS, l.admin), "ECONNREFUSED", "nor reach the admin port");
    assert.equal(await tcpConnect("127.0.0.1", l.outbound), "open", "the pod's app can");
    assert.equal((await get(`http://127.0.0.1:${l.admin}/ready`)).status, 200);
    const listeners = JSON.parse((await get(`http://127.0.0.1:${l.admin}/listeners?format=json`)).body) as { listener_statuses: Array<{ name: string; local_address: { socket_address: { address: string } } }> };
    assert.deepEqual(
      Object.fromEntries(listeners.listener_statuses.map((s) => [s.name, s.local_address.socket_address.address])),
      { inbound: NETWORK_ADDRESS, outbound: "127.0.0.1", admin: "127.0.0.1", status: NETWORK_ADDRESS },
    );
    assert.doesNotMatch(a.output(), /--adminBindAddress/, "no warning");
  });

  it("--bindAddress 0.0.0.0 (every address) still keeps outbound and admin on loopback: no POST /quitquitquit from outside", async () => {
    const a = await agent(["--bindAddress", "0.0.0.0"]);
    const l = a.listening;
    assert.equal(await tcpConnect(NETWORK_ADDRESS, l.inbound), "open");
    assert.equal(await tcpConnect(NETWORK_ADDRESS, l.outbound), "ECONNREFUSED");
    assert.equal(await tcpConnect(NETWORK_ADDRESS, l.admin), "ECONNREFUSED");
    assert.equal((await get(`http://127.0.0.1:${l.admin}/ready`)).status, 200, "still serving");
  });

  it("--adminBindAddress opens the admin port to the network, with a warning", async () => {
    const a = await agent(["--bindAddress", "0.0.0.0", "--adminBindAddress", "0.0.0.0"]);
    assert.equal((await get(`http://${NETWORK_ADDRESS}:${a.listening.admin}/ready`)).status, 200);
    assert.match(a.output(), /warn\t--adminBindAddress 0\.0\.0\.0: the admin port \(POST \/quitquitquit.*\) is reachable from the network; upstream keeps it on localhost/);
    assert.equal(await tcpConnect(NETWORK_ADDRESS, a.listening.outbound), "ECONNREFUSED", "the outbound listener stays on loopback");
  });
});
