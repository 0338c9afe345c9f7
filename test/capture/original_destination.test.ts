// originalDestination() on connections a real nat REDIRECT rule sent to a
// Node listener, in network namespaces this file creates: outbound (OUTPUT,
// the app's call to a service address), inbound (PREROUTING, a peer's call
// to the pod's port), IPv4 on an IPv4 and on a dual-stack socket, IPv6; and
// undefined for a connection no rule redirected.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createNamespace, defaultRoute, inNamespace, linkNamespaces, type NamespaceProcess, startInNamespace } from "./netns_fixture.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const PROBE = join(import.meta.dirname, "original_dst_probe.ts");

interface Answer {
  original: { address: string; port: number } | null;
  local: { address: string; port: number };
  peer: string;
}

function call(ns: string, host: string, port: number): Answer {
  const text = inNamespace(ns, process.execPath, ["--import", "tsx", PROBE, "connect", host, String(port)]);
  return JSON.parse(text) as Answer;
}

describe("the original destination of a redirected connection", () => {
  let client: string;
  let pod: string;
  let probe: NamespaceProcess<{ unavailable: string | null }>;
  before(async () => {
    client = createNamespace("cli");
    pod = createNamespace("pod");
    linkNamespaces({ ns: client, address: "10.77.0.1/24" }, { ns: pod, address: "10.77.0.2/24" });
    defaultRoute(pod, "10.77.0.1");
    for (const [ns, address] of [
      [client, "fd00:77::1/64"],
      [pod, "fd00:77::2/64"],
    ]) {
      const dev = inNamespace(ns, "ip", ["-o", "link", "show", "type", "veth"]).split(":")[1].trim().split("@")[0];
      inNamespace(ns, "ip", ["addr", "add", address, "dev", dev, "nodad"]);
    }
    inNamespace(pod, "ip", ["-6", "route", "add", "default", "via", "fd00:77::1"]);
    // As the capture rules do: the pod's calls to 198.51.100.7:80 go to 15001, calls to the pod's 9080 to 15006.
    inNamespace(pod, "iptables", ["-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", "198.51.100.7", "--dport", "80", "-j", "REDIRECT", "--to-ports", "15001"]);
    inNamespace(pod, "iptables", ["-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", "198.51.100.8", "--dport", "81", "-j", "REDIRECT", "--to-ports", "15006"]);
    inNamespace(pod, "iptables", ["-t", "nat", "-A", "PREROUTING", "-p", "tcp", "--dport", "9080", "-j", "REDIRECT", "--to-ports", "15006"]);
    inNamespace(pod, "ip6tables", ["-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", "2001:db8::7", "--dport", "443", "-j", "REDIRECT", "--to-ports", "15006"]);
    probe = await startInNamespace(pod, [process.execPath, "--import", "tsx", PROBE, "listen", "0.0.0.0,15001", "::,15006"], "probe listening ", { cwd: ROOT });
  });
  after(async () => {
    await probe?.stop();
  });

  it("the addon is built and loads", () => {
    assert.equal(probe.ready.unavailable, null);
  });

  it("outbound (OUTPUT REDIRECT): the service address the app called, on an IPv4 listener", () => {
    const a = call(pod, "198.51.100.7", 80);
    assert.deepEqual(a.original, { address: "198.51.100.7", port: 80 });
    assert.deepEqual(a.local, { address: "127.0.0.1", port: 15001 });
  });

  it("outbound to a dual-stack listener: the IPv4 destination of the IPv4-mapped connection", () => {
    const a = call(pod, "198.51.100.8", 81);
    assert.deepEqual(a.original, { address: "198.51.100.8", port: 81 });
    assert.equal(a.local.port, 15006);
  });

  it("inbound (PREROUTING REDIRECT): the pod's address and the port the peer called", () => {
    const a = call(client, "10.77.0.2", 9080);
    assert.deepEqual(a.original, { address: "10.77.0.2", port: 9080 });
    assert.deepEqual(a.local, { address: "::ffff:10.77.0.2", port: 15006 });
    assert.equal(a.peer, "::ffff:10.77.0.1");
  });

  it("IPv6 (ip6tables REDIRECT): IP6T_SO_ORIGINAL_DST", () => {
    const a = call(pod, "2001:db8::7", 443);
    assert.deepEqual(a.original, { address: "2001:db8::7", port: 443 });
    assert.deepEqual(a.local, { address: "::1", port: 15006 });
  });

  it("a connection no rule redirected has none (its destination is the address it reached)", () => {
    assert.equal(call(client, "10.77.0.2", 15006).original, null);
    assert.equal(call(pod, "127.0.0.1", 15001).original, null);
    assert.equal(call(client, "fd00:77::2", 15006).original, null);
  });
});
