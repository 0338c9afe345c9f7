// Where a captured outbound connection goes by its original destination
// (host/proxy/listener/capture_routing.ts), over a registry built from
// orchestrator documents as the sidecar builds it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildRegistry } from "../../host/mesh/registry.ts";
import { capturedInboundProtocol, looksLikeHttp, routeCapturedOutbound } from "../../host/proxy/listener/capture_routing.ts";
import { decode } from "../config/table.ts";

const DOCS = `
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec:
  clusterIP: 10.96.0.10
  selector: { app: httpbin }
  ports: [{ name: http, port: 8000, targetPort: 80 }]
---
apiVersion: v1
kind: Service
metadata: { name: db, namespace: foo }
spec:
  clusterIP: 10.96.0.20
  selector: { app: db }
  ports: [{ name: tcp-db, port: 5432, targetPort: 15432 }]
---
apiVersion: v1
kind: Service
metadata: { name: plain, namespace: foo }
spec:
  clusterIP: 10.96.0.30
  ports: [{ port: 9000 }]
---
apiVersion: v1
kind: Endpoints
metadata: { name: httpbin, namespace: foo }
subsets: [{ addresses: [{ ip: 10.1.0.5 }], ports: [{ name: http, port: 80 }] }]
---
apiVersion: v1
kind: Endpoints
metadata: { name: db, namespace: foo }
subsets: [{ addresses: [{ ip: 10.1.0.7 }, { ip: 10.1.0.8 }], ports: [{ name: tcp-db, port: 15432 }] }]
`;

function registry() {
  const catalog = decode(DOCS);
  return buildRegistry(catalog.byKind, { domain: catalog.domain });
}

describe("routeCapturedOutbound", () => {
  const r = registry();
  it("a Service's cluster address and HTTP port → the HTTP connection manager, naming the service", () => {
    assert.deepEqual(routeCapturedOutbound(r, { address: "10.96.0.10", port: 8000 }, "ALLOW_ANY"), { kind: "http", service: "httpbin.foo.svc.cluster.local" });
  });
  it("a TCP port → proxied as TCP to the service's endpoints on the Endpoints port of the same name, naming the service port (the cluster manager's choice)", () => {
    assert.deepEqual(routeCapturedOutbound(r, { address: "10.96.0.20", port: 5432 }, "REGISTRY_ONLY"), {
      kind: "tcp",
      cluster: "outbound|5432||db.foo.svc.cluster.local",
      endpoints: [
        { address: "10.1.0.7", port: 15432 },
        { address: "10.1.0.8", port: 15432 },
      ],
      service: { fqdn: "db.foo.svc.cluster.local", port: 5432 },
    });
  });
  it("a port of no declared protocol → sniffed, TCP to the numeric targetPort otherwise (no endpoints here)", () => {
    assert.deepEqual(routeCapturedOutbound(r, { address: "10.96.0.30", port: 9000 }, "ALLOW_ANY"), {
      kind: "sniff",
      service: "plain.foo.svc.cluster.local",
      otherwise: {
        kind: "tcp",
        cluster: "outbound|9000||plain.foo.svc.cluster.local",
        endpoints: [],
        service: { fqdn: "plain.foo.svc.cluster.local", port: 9000 },
      },
    });
  });
  it("an endpoint's own address and port → that endpoint, with its service port's protocol", () => {
    assert.deepEqual(routeCapturedOutbound(r, { address: "10.1.0.5", port: 80 }, "REGISTRY_ONLY"), { kind: "http", service: "httpbin.foo.svc.cluster.local" });
    assert.deepEqual(routeCapturedOutbound(r, { address: "10.1.0.8", port: 15432 }, "REGISTRY_ONLY"), {
      kind: "tcp",
      cluster: "outbound|5432||db.foo.svc.cluster.local",
      endpoints: [{ address: "10.1.0.8", port: 15432 }],
    });
  });
  it("a cluster address on a port the service does not have, or an unknown address: the original destination (ALLOW_ANY) or nothing (REGISTRY_ONLY)", () => {
    for (const d of [
      { address: "10.96.0.10", port: 9999 },
      { address: "203.0.113.9", port: 443 },
    ]) {
      assert.deepEqual(routeCapturedOutbound(r, d, "ALLOW_ANY"), { kind: "tcp", cluster: "PassthroughCluster", endpoints: [d] });
      assert.deepEqual(routeCapturedOutbound(r, d, "REGISTRY_ONLY"), { kind: "blackhole" });
    }
  });
  it("endpoints known otherwise (--endpoint) are routed to, whatever the mode", () => {
    const d = { address: "10.1.9.9", port: 8080 };
    assert.deepEqual(routeCapturedOutbound({ services: [], endpoints: [{ ...d, protocol: "http" }] }, d, "REGISTRY_ONLY"), { kind: "http" });
  });
});

describe("capturedInboundProtocol", () => {
  const r = registry();
  it("the protocol of the service port an endpoint address serves; undefined when undeclared or unknown", () => {
    assert.equal(capturedInboundProtocol(r, { address: "10.1.0.5", port: 80 }), "http");
    assert.equal(capturedInboundProtocol(r, { address: "10.1.0.7", port: 15432 }), "tcp");
    assert.equal(capturedInboundProtocol(r, { address: "10.1.0.7", port: 9 }), undefined);
    assert.equal(capturedInboundProtocol(r, { address: "10.9.9.9", port: 80 }), undefined);
  });
});

describe("looksLikeHttp", () => {
  it("a request line or the HTTP/2 preface, also cut short; anything else is not", () => {
    for (const yes of ["GET / HTTP/1.1\r\n", "POST /x HTTP/1.1", "PRI * HTTP/2.0\r\n\r\nSM", "DEL", "OPTIONS * HTTP/1.1"])
      assert.ok(looksLikeHttp(Buffer.from(yes)), yes);
    for (const no of ["\x16\x03\x01\x02", "SELECT 1", "get / HTTP/1.1", "\u0000\u0000\u0000\u0008"]) assert.ok(!looksLikeHttp(Buffer.from(no, "latin1")), no);
  });
});
