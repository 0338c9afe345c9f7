import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startEchoApp } from "../../host/demo/echo_app.ts";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { get, send, stats, upstreamHeaders, writeConfigAndWait } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";

// Spec 1, request-handling rules 1–7 and the Errors row "plain-text request to
// a STRICT workload", on loopback with real processes: mesh_ca, one sidecar
// per workload (per container port for multi.baz), echo apps, real TLS with
// CA-issued certificates. Clients without a sidecar are this test process.

const svc = (name: string, ns: string, ports: string) => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec: {selector: {app: ${name.replace("-auto", "")}}, ports: ${ports}}
---
`;
const CONFIG =
  svc("httpbin", "foo", "[{name: http, port: 8000, targetPort: 80}]") +
  svc("httpbin", "strict-ns", "[{name: http, port: 8000, targetPort: 80}]") +
  svc("httpbin", "bar", "[{name: http, port: 8000, targetPort: 80}]") +
  svc("httpbin-auto", "bar", "[{name: http, port: 8000, targetPort: 80}]") +
  svc("multi", "baz", "[{name: http, port: 80, targetPort: 80}, {name: metrics, port: 9091, targetPort: 9090}]") +
  `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: default, namespace: strict-ns}
spec: {mtls: {mode: STRICT}}
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: default, namespace: bar}
spec: {mtls: {mode: STRICT}}
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: httpbin, namespace: bar}
spec: {selector: {matchLabels: {app: httpbin}}, mtls: {mode: DISABLE}}
---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: {name: httpbin, namespace: bar}
spec: {host: httpbin.bar.svc.cluster.local, trafficPolicy: {tls: {mode: DISABLE}}}
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: multi, namespace: baz}
spec:
  selector: {matchLabels: {app: multi}}
  mtls: {mode: STRICT}
  portLevelMtls: {"9090": {mode: DISABLE}, "7070": {mode: DISABLE}}
---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: {name: multi, namespace: baz}
spec:
  host: multi.baz.svc.cluster.local
  trafficPolicy:
    tls: {mode: MESH_MUTUAL}
    portLevelSettings: [{port: {number: 9091}, tls: {mode: DISABLE}}]
`;

const XFCC = /^By=spiffe:\/\/cluster\.local\/ns\/([a-z-]+)\/sa\/([a-z-]+);Hash=[0-9a-f]{64};Subject="";URI=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep$/;

describe("security: mutual TLS (rules 1–7)", () => {
  const dir = tempDir("mesh-sec-mtls-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let legacy: Awaited<ReturnType<typeof startEchoApp>>;
  let multiApp: Awaited<ReturnType<typeof startEchoApp>>;
  const w: Record<string, SecureWorkload> = {};
  const all = () => Object.values(w);

  before(async () => {
    writeFileSync(join(dir, "mesh.yaml"), CONFIG);
    ca = await startMeshCa();
    legacy = await startEchoApp();
    multiApp = await startEchoApp();
    const base = { configDir: dir, ca };
    const [httpbinFoo, httpbinStrict, httpbinBar, multi80, multi9090, multi7070] = await Promise.all([
      startSecureWorkload({ ...base, name: "httpbin", namespace: "foo" }),
      startSecureWorkload({ ...base, name: "httpbin", namespace: "strict-ns" }),
      startSecureWorkload({ ...base, name: "httpbin", namespace: "bar" }),
      startSecureWorkload({ ...base, name: "multi", namespace: "baz", app: multiApp, containerPort: 80 }),
      startSecureWorkload({ ...base, name: "multi", namespace: "baz", app: multiApp, containerPort: 9090 }),
      startSecureWorkload({ ...base, name: "multi", namespace: "baz", app: multiApp, containerPort: 7070 }),
    ]);
    Object.assign(w, { httpbinFoo, httpbinStrict, httpbinBar, multi80, multi9090, multi7070 });
    const at = (x: SecureWorkload) => `127.0.0.1:${x.inbound}`;
    w.sleep = await startSecureWorkload({
      ...base,
      name: "sleep",
      namespace: "foo",
      endpoints: [
        `httpbin.foo.svc.cluster.local:8000=${at(httpbinFoo)},sidecar,sa=httpbin`,
        `impostor.foo.svc.cluster.local:8000=${at(httpbinFoo)},sidecar,sa=impostor`,
        `httpbin.legacy.svc.cluster.local:8000=127.0.0.1:${legacy.port}`,
        `mtls-to-legacy.legacy.svc.cluster.local:8000=127.0.0.1:${legacy.port}`,
        `httpbin.strict-ns.svc.cluster.local:8000=${at(httpbinStrict)},sidecar`,
        `httpbin.bar.svc.cluster.local:8000=${at(httpbinBar)},sidecar`,
        `httpbin-auto.bar.svc.cluster.local:8000=${at(httpbinBar)},sidecar`,
        `multi.baz.svc.cluster.local:80=${at(multi80)},sidecar,sa=multi`,
        `multi.baz.svc.cluster.local:9091=${at(multi9090)},sidecar,sa=multi`,
      ],
    });
  });
  after(async () => {
    await Promise.all(all().map((x) => x.stop()));
    await ca?.stop();
    for (const app of [legacy, multiApp]) app?.server.close();
  });

  const viaSleep = (host: string, headers: Record<string, string> = {}) => send(w.sleep.outbound, { host, path: "/headers", headers });

  it("identity: the certificate comes from mesh_ca and /config_dump shows it and the root", async () => {
    const dump = JSON.parse((await get(`${w.httpbinFoo.adminUrl}/config_dump`)).body);
    const [leaf, root] = dump.secrets.certificates;
    assert.equal(leaf.identity, "spiffe://cluster.local/ns/foo/sa/httpbin");
    assert.equal(leaf.subjectAltName, "URI:spiffe://cluster.local/ns/foo/sa/httpbin");
    assert.ok(Date.parse(leaf.notAfter) > Date.now());
    assert.equal(root.name, "ROOTCA");
    assert.equal(dump.configuration.enforced, true);
    assert.equal(dump.security.serverMtls.mode, "PERMISSIVE");
  });

  it("rule 1: proxied client to proxied server is mutual TLS and the server sets X-Forwarded-Client-Cert; a forged one never passes", async () => {
    const h = upstreamHeaders(await viaSleep("httpbin.foo.svc.cluster.local:8000", { "x-forwarded-client-cert": "By=forged" }));
    assert.match(h["x-forwarded-client-cert"], XFCC);
    assert.ok(h["x-forwarded-client-cert"].startsWith("By=spiffe://cluster.local/ns/foo/sa/httpbin;"));
    // A plain-text caller (PERMISSIVE) gets through, but its forged header is removed and nothing is added.
    const plain = upstreamHeaders(
      await send(w.httpbinFoo.inbound, { headers: { "x-forwarded-client-cert": "By=forged;URI=spiffe://cluster.local/ns/foo/sa/admin" } }),
    );
    assert.equal(plain["x-forwarded-client-cert"], undefined);
    const s = await stats(w.sleep.adminUrl);
    assert.ok((s.get("outbound.mtls") ?? 0) >= 1);
  });

  it("rule 1 (secure naming): the client refuses a server that does not present the expected identity", async () => {
    const res = await viaSleep("impostor.foo.svc.cluster.local:8000");
    assert.equal(res.outcome, "http");
    assert.equal(res.outcome === "http" && res.status, 503);
  });

  it("rule 2: to a workload without a sidecar the client sends plain text; no XFCC", async () => {
    const h = upstreamHeaders(await viaSleep("httpbin.legacy.svc.cluster.local:8000", { "x-forwarded-client-cert": "By=forged" }));
    assert.equal(h["x-forwarded-client-cert"], undefined, "the outbound side drops the app's XFCC too");
  });

  it("rule 4: a namespace-wide STRICT policy applies only to that namespace", async () => {
    const plainStrict = await send(w.httpbinStrict.inbound);
    assert.equal(plainStrict.outcome, "connection-failure", "plain text to STRICT: no HTTP status");
    assert.equal((await send(w.httpbinFoo.inbound)).outcome, "http", "another namespace still takes plain text");
    assert.match(upstreamHeaders(await viaSleep("httpbin.strict-ns.svc.cluster.local:8000"))["x-forwarded-client-cert"], /ns\/strict-ns\/sa\/httpbin/);
  });

  it("rule 5: a workload policy needs its DestinationRule: DISABLE without one fails (503), STRICT with MESH_MUTUAL works", async () => {
    const auto = await viaSleep("httpbin-auto.bar.svc.cluster.local:8000");
    assert.equal(auto.outcome === "http" && auto.status, 503, "auto mTLS to a workload DISABLE under a STRICT namespace");
    assert.match(upstreamHeaders(await viaSleep("multi.baz.svc.cluster.local:80"))["x-forwarded-client-cert"], /ns\/baz\/sa\/multi/);
    assert.equal((await send(w.multi80.inbound)).outcome, "connection-failure");
  });

  it("rule 6: portLevelMtls overrides the container port; the DestinationRule's portLevelSettings uses the service port; unbound ports ignore it", async () => {
    const h = upstreamHeaders(await viaSleep("multi.baz.svc.cluster.local:9091"));
    assert.equal(h["x-forwarded-client-cert"], undefined, "port 9091 → container 9090 is plain text");
    assert.equal((await send(w.multi9090.inbound)).outcome, "http", "container port 9090 is DISABLE");
    assert.equal((await send(w.multi7070.inbound)).outcome, "connection-failure", "7070 is bound to no service: its DISABLE is ignored, STRICT stays");
    const dump = JSON.parse((await get(`${w.multi7070.adminUrl}/config_dump`)).body);
    assert.equal(dump.security.serverMtls.ignoredPortLevel, "baz/multi");
  });

  it("rule 7: a workload DISABLE plus a DestinationRule DISABLE wins over the namespace STRICT", async () => {
    const h = upstreamHeaders(await viaSleep("httpbin.bar.svc.cluster.local:8000"));
    assert.equal(h["x-forwarded-client-cert"], undefined);
    assert.equal((await send(w.httpbinBar.inbound)).outcome, "http");
  });

  it("DestinationRule MESH_MUTUAL to a workload without a sidecar fails with 503 at the client", async () => {
    await writeConfigAndWait(
      dir,
      "dr-legacy.yaml",
      `apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: {name: mtls-to-legacy, namespace: legacy}
spec: {host: mtls-to-legacy.legacy.svc.cluster.local, trafficPolicy: {tls: {mode: MESH_MUTUAL}}}
`,
      [w.sleep.adminUrl],
    );
    const res = await viaSleep("mtls-to-legacy.legacy.svc.cluster.local:8000");
    assert.equal(res.outcome === "http" && res.status, 503);
  });

  // Last: it changes the mesh for every sidecar.
  it("rule 3 / Errors: mesh-wide STRICT: plain text to any proxied workload fails at the connection; proxied and no-proxy-to-no-proxy calls still work", async () => {
    await writeConfigAndWait(
      dir,
      "zz-mesh-strict.yaml",
      `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: default, namespace: mesh-system}
spec: {mtls: {mode: STRICT}}
`,
      all().map((x) => x.adminUrl),
    );
    const plain = await send(w.httpbinFoo.inbound);
    assert.equal(plain.outcome, "connection-failure");
    assert.match(upstreamHeaders(await viaSleep("httpbin.foo.svc.cluster.local:8000"))["x-forwarded-client-cert"], XFCC);
    upstreamHeaders(await viaSleep("httpbin.legacy.svc.cluster.local:8000"));
    upstreamHeaders(await send(legacy.port));
    const s = await stats(w.httpbinFoo.adminUrl);
    assert.ok((s.get("listener.inbound.tls_handshake_failures") ?? 0) >= 1);
  });
});
