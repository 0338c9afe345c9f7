import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { closeServer } from "../../host/telemetry/http_listen.ts";
import { encodeProto3Json } from "../../host/wire/proto_json.ts";
import { envoyRoot } from "../support/envoy_protos.ts";
import { tempDir, waitFor } from "../support/processes.ts";
import { type Outcome, send } from "./security_support.ts";

// Issue 11: DestinationRule connectionPool and outlierDetection in the Node
// data path, after upstream's circuit-breaking task (a fortio-like burst of
// concurrent requests from sleep to httpbin through real sidecars with
// mutual TLS), plus outlier ejection against failing plain-text endpoints
// and maxRequestsPerConnection counted by the server's connections. The
// sleep sidecar writes Envoy's outlier detection event log (--outlierLogPath).

const config = `apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: httpbin, namespace: foo}
spec:
  host: httpbin
  trafficPolicy:
    connectionPool:
      tcp: {maxConnections: 1}
      http: {http1MaxPendingRequests: 1, maxRequestsPerConnection: 1}
    outlierDetection: {consecutive5xxErrors: 1, interval: 1s, baseEjectionTime: 3m, maxEjectionPercent: 100}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: flaky, namespace: foo}
spec:
  host: flaky.foo.svc.cluster.local
  trafficPolicy:
    outlierDetection: {consecutive5xxErrors: 1, interval: 1s, baseEjectionTime: 3m, maxEjectionPercent: 100}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: broken, namespace: foo}
spec:
  host: broken.foo.svc.cluster.local
  trafficPolicy:
    outlierDetection: {consecutiveGatewayErrors: 2, baseEjectionTime: 3m}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: counted, namespace: foo}
spec:
  host: counted.foo.svc.cluster.local
  trafficPolicy:
    connectionPool: {http: {maxRequestsPerConnection: 2}}
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: returning, namespace: foo}
spec:
  host: returning.foo.svc.cluster.local
  trafficPolicy:
    outlierDetection: {consecutiveGatewayErrors: 1, baseEjectionTime: 1s, maxEjectionPercent: 100}
`;

/** The lines of the outlier event log so far, parsed. */
function outlierEvents(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A plain HTTP server answering `status` and counting requests by client connection. */
async function startServer(status: number): Promise<{ server: Server; port: number; hits: number; byConnection: Map<string, number> }> {
  const s = { server: createServer(), port: 0, hits: 0, byConnection: new Map<string, number>() };
  s.server.on("request", (req, res) => {
    s.hits++;
    const conn = `${req.socket.remotePort}`;
    s.byConnection.set(conn, (s.byConnection.get(conn) ?? 0) + 1);
    res.writeHead(status, { "content-type": "text/plain" }).end(`status ${status}\n`);
  });
  await new Promise<void>((r) => s.server.listen(0, "127.0.0.1", () => r()));
  s.port = (s.server.address() as { port: number }).port;
  return s;
}

const http = (o: Outcome) => {
  if (o.outcome !== "http") throw new Error(`no HTTP answer: ${o.error}`);
  return o;
};

describe("circuit breaking and outlier detection (DestinationRule connectionPool, outlierDetection)", { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-circuit-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let httpbin: SecureWorkload;
  let sleep: SecureWorkload;
  const servers: Array<Awaited<ReturnType<typeof startServer>>> = [];
  let good: Awaited<ReturnType<typeof startServer>>;
  let bad: Awaited<ReturnType<typeof startServer>>;
  let gateway: Awaited<ReturnType<typeof startServer>>;
  let counted: Awaited<ReturnType<typeof startServer>>;
  let returning: Awaited<ReturnType<typeof startServer>>;
  const outlierLog = join(dir, "outlier.log");

  before(async () => {
    writeFileSync(join(dir, "resources.yaml"), config);
    [good, bad, gateway, counted, returning] = await Promise.all([startServer(200), startServer(500), startServer(502), startServer(200), startServer(503)]);
    servers.push(good, bad, gateway, counted, returning);
    ca = await startMeshCa();
    httpbin = await startSecureWorkload({ configDir: dir, ca, name: "httpbin", namespace: "foo", labels: { app: "httpbin" } });
    sleep = await startSecureWorkload({
      configDir: dir,
      ca,
      name: "sleep",
      namespace: "foo",
      labels: { app: "sleep" },
      endpoints: [
        `httpbin.foo.svc.cluster.local:8000=127.0.0.1:${httpbin.inbound},sidecar,sa=httpbin`,
        `flaky.foo.svc.cluster.local:8000=127.0.0.1:${good.port},label=instance=good`,
        `flaky.foo.svc.cluster.local:8000=127.0.0.1:${bad.port},label=instance=bad`,
        `broken.foo.svc.cluster.local:8000=127.0.0.1:${gateway.port}`,
        `counted.foo.svc.cluster.local:8000=127.0.0.1:${counted.port}`,
        `returning.foo.svc.cluster.local:8000=127.0.0.1:${returning.port}`,
      ],
      extraArgs: ["--outlierLogPath", outlierLog],
    });
  });
  after(async () => {
    await Promise.all([httpbin, sleep].filter(Boolean).map((w) => w.stop()));
    await ca?.stop();
    for (const s of servers) {
      s.server.closeAllConnections();
      await closeServer(s.server);
    }
  });

  it("over maxConnections 1 and http1MaxPendingRequests 1, concurrent requests get 503 with x-envoy-overloaded; the admitted ones succeed", async () => {
    // Six at once while each admitted one takes 5 s: one on the wire, one pending, the rest overflow.
    const answers = (
      await Promise.all(Array.from({ length: 6 }, (_, i) => send(sleep.outbound, { host: "httpbin:8000", path: `/get?delay=5000&i=${i}` })))
    ).map(http);
    const ok = answers.filter((a) => a.status === 200);
    const overflowed = answers.filter((a) => a.status === 503);
    assert.equal(ok.length + overflowed.length, 6, JSON.stringify(answers.map((a) => [a.status, a.body])));
    assert.ok(ok.length >= 2, `the request on the wire and the pending one are served (${ok.length})`);
    assert.ok(overflowed.length >= 1, "requests beyond the pending queue overflow");
    for (const a of overflowed) {
      assert.equal(a.headers["x-envoy-overloaded"], "true");
      assert.equal(a.body, "upstream connect error or disconnect/reset before headers. reset reason: overflow");
    }
    // Once the burst is over the cluster takes requests again.
    assert.equal(http(await send(sleep.outbound, { host: "httpbin.foo:8000", path: "/get" })).status, 200);
  });

  it("consecutive5xxErrors 1 ejects the failing endpoint: later requests go to the healthy one", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push(http(await send(sleep.outbound, { host: "flaky.foo:8000", path: `/${i}` })).status);
    assert.ok(bad.hits <= 1, `the failing endpoint was ejected after its first 500 (hits: ${bad.hits})`);
    assert.equal(statuses.filter((s) => s === 500).length, bad.hits);
    assert.equal(statuses.filter((s) => s === 200).length, 20 - bad.hits);
  });

  it("consecutiveGatewayErrors 2 ejects the only endpoint: then 503 no healthy upstream without reaching it", async () => {
    assert.equal(http(await send(sleep.outbound, { host: "broken.foo.svc.cluster.local:8000" })).status, 502);
    assert.equal(http(await send(sleep.outbound, { host: "broken.foo.svc.cluster.local:8000" })).status, 502);
    const third = http(await send(sleep.outbound, { host: "broken.foo.svc.cluster.local:8000" }));
    assert.equal(third.status, 503);
    assert.equal(third.body, "no healthy upstream");
    assert.equal(gateway.hits, 2);
  });

  it("maxRequestsPerConnection 2: no upstream connection serves more than two requests", async () => {
    for (let i = 0; i < 6; i++) assert.equal(http(await send(sleep.outbound, { host: "counted.foo:8000", path: `/${i}` })).status, 200);
    assert.equal(counted.hits, 6);
    assert.ok(
      [...counted.byConnection.values()].every((n) => n <= 2),
      JSON.stringify([...counted.byConnection]),
    );
    assert.ok(counted.byConnection.size >= 3);
  });
  it("--outlierLogPath: Envoy's OutlierDetectionEvent JSON lines for each ejection and, once the ejection time is over, the return", async () => {
    assert.equal(http(await send(sleep.outbound, { host: "returning.foo.svc.cluster.local:8000" })).status, 503);
    const cluster = "outbound|8000||returning.foo.svc.cluster.local";
    const ofCluster = () => outlierEvents(outlierLog).filter((e) => e.cluster_name === cluster);
    const [eject, uneject] = await waitFor("the ejection and the return in the log", () => (ofCluster().length >= 2 ? ofCluster() : undefined));
    assert.deepEqual(Object.keys(eject), [
      "type",
      "timestamp",
      "cluster_name",
      "upstream_url",
      "action",
      "num_ejections",
      "enforced",
      "eject_consecutive_event",
    ]);
    assert.equal(eject.type, "CONSECUTIVE_GATEWAY_FAILURE");
    assert.equal(eject.upstream_url, `127.0.0.1:${returning.port}`);
    assert.equal(eject.action, "EJECT");
    assert.equal(eject.num_ejections, 1);
    assert.equal(eject.enforced, true);
    assert.equal(uneject.action, "UNEJECT");
    assert.equal(uneject.num_ejections, 1);
    assert.equal(uneject.secs_since_last_action, "1", "the 1 s ejection");
    assert.equal(Date.parse(uneject.timestamp as string) - Date.parse(eject.timestamp as string), 1000);
    // Earlier ejections of the other tests are there too; every line is a valid envoy.data.cluster.v3.OutlierDetectionEvent.
    const all = outlierEvents(outlierLog);
    assert.ok(
      all.some((e) => e.cluster_name === "outbound|8000||broken.foo.svc.cluster.local" && e.action === "EJECT"),
      JSON.stringify(all),
    );
    for (const e of all) encodeProto3Json(envoyRoot(), "envoy.data.cluster.v3.OutlierDetectionEvent", e);
  });
});
