// The sidecar under traffic capture, as an injected pod runs it: the pod is
// a network namespace with the capture rules `disco-agent mesh-iptables`
// writes (the injector's arguments), the sidecar (the built disco-agent) runs
// in it as uid 1337, the app beside it; a peer namespace holds the services'
// endpoints and a client. The app's calls to service addresses that exist
// nowhere on the network reach the endpoints only because the sidecar routes
// each captured connection by its original destination; a peer's call to the
// app's port reaches the app through the inbound listener.
import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { tempDir } from "../support/processes.ts";
import { createNamespace, defaultRoute, inNamespace, linkNamespaces, type NamespaceProcess, startInNamespace } from "./netns_fixture.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const AGENT = join(ROOT, "build", "out", "disco-agent.mjs");
const APPS = join(import.meta.dirname, "pod_apps.ts");
const POD_IP = "10.78.0.2";
const PEER_IP = "10.78.0.1";
const PROXY_UID = 1337;
/** orch-inject's init container arguments (MESH24 injection contract). */
const INIT_ARGS = ["-p", "15001", "-z", "15006", "-u", String(PROXY_UID), "-m", "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"];

const REGISTRY = `
apiVersion: v1
kind: Service
metadata: { name: db, namespace: default }
spec:
  clusterIP: 10.96.0.20
  selector: { app: db }
  ports: [{ name: tcp-db, port: 5432, targetPort: 7000 }]
---
apiVersion: v1
kind: Endpoints
metadata: { name: db, namespace: default }
subsets: [{ addresses: [{ ip: ${PEER_IP} }], ports: [{ name: tcp-db, port: 7000 }] }]
---
apiVersion: v1
kind: Service
metadata: { name: legacy, namespace: default }
spec:
  clusterIP: 10.96.0.30
  selector: { app: db }
  ports: [{ port: 7001, targetPort: 7000 }]
---
apiVersion: v1
kind: Endpoints
metadata: { name: legacy, namespace: default }
subsets: [{ addresses: [{ ip: ${PEER_IP} }], ports: [{ port: 7000 }] }]
---
apiVersion: v1
kind: Service
metadata: { name: appdb, namespace: default }
spec:
  clusterIP: 10.96.0.40
  selector: { app: app }
  ports: [{ name: tcp-appdb, port: 7071, targetPort: 7071 }]
---
apiVersion: v1
kind: Endpoints
metadata: { name: appdb, namespace: default }
subsets: [{ addresses: [{ ip: ${POD_IP} }], ports: [{ name: tcp-appdb, port: 7071 }] }]
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: default }
spec:
  clusterIP: 10.96.0.10
  selector: { app: web }
  ports: [{ name: http, port: 8000, targetPort: 8080 }]
---
apiVersion: v1
kind: Endpoints
metadata: { name: web, namespace: default }
subsets: [{ addresses: [{ ip: ${PEER_IP} }], ports: [{ name: http, port: 8080 }] }]
`;

/** The sidecar's listener.outbound.captured_* counters, from its admin port inside the pod. */
function capturedStats(pod: string): Record<string, number> {
  const text = inNamespace(pod, process.execPath, [AGENT, "request", "GET", "/stats", "--proxyAdminPort", "15000"]);
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^listener\.outbound\.captured_(\w+): (\d+)$/gm)) out[m[1]] = Number(m[2]);
  return out;
}
const tsx = (...args: string[]) => [process.execPath, "--import", "tsx", APPS, ...args];

describe("a sidecar under traffic capture (uid 1337 in a pod namespace)", () => {
  let pod: string;
  let peer: string;
  const running: NamespaceProcess<unknown>[] = [];
  before(async () => {
    pod = createNamespace("pod");
    peer = createNamespace("peer");
    linkNamespaces({ ns: pod, address: `${POD_IP}/24` }, { ns: peer, address: `${PEER_IP}/24` });
    defaultRoute(pod, PEER_IP);
    const dir = tempDir("capture-sidecar-");
    writeFileSync(join(dir, "registry.yaml"), REGISTRY);
    // The sidecar runs as uid 1337: its configuration must be readable to it.
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "registry.yaml"), 0o644);
    const init = inNamespace(pod, process.execPath, [AGENT, "mesh-iptables", ...INIT_ARGS]);
    assert.match(init, /^mesh-iptables: \d+ rules/);
    const start = <T>(ns: string, command: string[], prefix: string, asUser?: number) =>
      startInNamespace<T>(ns, command, prefix, { cwd: ROOT, ...(asUser === undefined ? {} : { asUser }) }).then((p) => {
        running.push(p as NamespaceProcess<unknown>);
        return p;
      });
    await Promise.all([
      start(peer, tsx("endpoints", "tcp:7000", "http:8080", "http:9090"), "apps listening "),
      start(pod, tsx("app", "http:8080", "http:8081", "tcp:7070", "tcp:7071"), "apps listening "),
      start(
        pod,
        [
          process.execPath,
          AGENT,
          "proxy",
          "--configDir",
          dir,
          "--bindAddress",
          "0.0.0.0",
          "--inboundPort",
          "15006",
          "--outboundPort",
          "15001",
          "--proxyAdminPort",
          "15000",
          "--appPort",
          "8080",
          "--cluster",
          `web.default.svc.cluster.local=${PEER_IP}:8080`,
        ],
        "disco-agent listening ",
        PROXY_UID,
      ),
    ]);
  });
  after(async () => {
    await Promise.all(running.map((p) => p.stop()));
  });

  it("TCP to a service's cluster address is proxied to its endpoint (the sidecar's own connection is not captured again)", () => {
    const out = inNamespace(pod, process.execPath, ["--import", "tsx", APPS, "connect", "10.96.0.20", "5432", "hello db"]);
    const [greeting, echo] = out.trim().split("\n");
    // The endpoint sees the pod's address: the sidecar dialled it (uid 1337 leaves uncaptured).
    assert.deepEqual(JSON.parse(greeting), { name: "endpoints", port: 7000, peer: POD_IP });
    assert.equal(echo, "hello db");
  });

  it("a TCP client's half-close is passed on, and the endpoint's answer after it still comes back", () => {
    const out = inNamespace(pod, process.execPath, ["--import", "tsx", APPS, "connect", "10.96.0.20", "5432", "last words|end"]);
    assert.equal(out.trim().split("\n")[1], "after fin: last words|end");
  });

  it("a port of no declared protocol is sniffed: the client's first bytes are not HTTP, so TCP to the endpoint", () => {
    const out = inNamespace(pod, process.execPath, ["--import", "tsx", APPS, "connect", "10.96.0.30", "7001", "hello legacy"]);
    const [greeting, echo] = out.trim().split("\n");
    assert.deepEqual(JSON.parse(greeting), { name: "endpoints", port: 7000, peer: POD_IP });
    assert.equal(echo, "hello legacy");
  });

  it("HTTP to a service's cluster address goes through the HTTP connection manager, routed by Host", () => {
    const out = inNamespace(pod, process.execPath, ["--import", "tsx", APPS, "get", "10.96.0.10", "8000", "web.default.svc.cluster.local:8000"]);
    assert.match(out, /^200 /);
    const body = JSON.parse(out.slice(4));
    assert.equal(body.name, "endpoints");
    assert.equal(body.port, 8080);
    assert.equal(body.peer, POD_IP);
  });

  it("an address not in the registry passes through to the original destination (ALLOW_ANY), counted in /stats", () => {
    const before = capturedStats(pod);
    const out = inNamespace(pod, process.execPath, ["--import", "tsx", APPS, "get", PEER_IP, "9090", `${PEER_IP}:9090`]);
    assert.match(out, /^200 /);
    assert.equal(JSON.parse(out.slice(4)).port, 9090);
    assert.equal(capturedStats(pod).passthrough, before.passthrough + 1);
  });

  it("/stats counts the captured connections by route", () => {
    const s = capturedStats(pod);
    assert.ok(s.tcp >= 2, JSON.stringify(s));
    assert.ok(s.http >= 1, JSON.stringify(s));
    assert.equal(s.blackhole, 0);
  });

  it("a peer's call to any port of the app is captured to the inbound listener and reaches the app on that port, from 127.0.0.6", () => {
    for (const port of [8080, 8081]) {
      const out = inNamespace(peer, process.execPath, ["--import", "tsx", APPS, "get", POD_IP, String(port), `${POD_IP}:${port}`]);
      assert.match(out, /^200 /);
      const body = JSON.parse(out.slice(4));
      assert.equal(body.name, "app");
      assert.equal(body.port, port);
      // upstream's inbound passthrough: the sidecar dials the pod's address from 127.0.0.6, which the capture rules leave alone.
      assert.equal(body.peer, "127.0.0.6");
    }
  });

  it("a peer's TCP to an undeclared app port: its first bytes are neither TLS nor HTTP, so TCP to the app from 127.0.0.6", () => {
    const out = inNamespace(peer, process.execPath, ["--import", "tsx", APPS, "connect", POD_IP, "7070", "hello app"]);
    const [greeting, echo] = out.trim().split("\n");
    assert.deepEqual(JSON.parse(greeting), { name: "app", port: 7070, peer: "127.0.0.6" });
    assert.equal(echo, "hello app");
  });

  it("a peer's TCP to a port the registry declares TCP is piped at once: a server-first protocol works", () => {
    // The client sends nothing: the app speaks first.
    const out = inNamespace(peer, process.execPath, ["--import", "tsx", APPS, "connect", POD_IP, "7071"]);
    assert.deepEqual(JSON.parse(out.trim()), { name: "app", port: 7071, peer: "127.0.0.6" });
    const tcp = inNamespace(pod, process.execPath, [AGENT, "request", "GET", "/stats", "--proxyAdminPort", "15000"]);
    assert.match(tcp, /^listener\.inbound\.captured_tcp: [2-9]\d*$/m);
  });

  it("a call to the inbound listener itself (not redirected) still goes to --appPort", () => {
    const out = inNamespace(pod, process.execPath, ["--import", "tsx", APPS, "get", "127.0.0.1", "15006", "app"]);
    assert.match(out, /^200 /);
    const body = JSON.parse(out.slice(4));
    assert.equal(body.port, 8080);
    assert.equal(body.peer, "127.0.0.1");
  });
});
