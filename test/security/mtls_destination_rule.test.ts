import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ClientTlsInput, clientTls, findDestinationRule } from "../../host/security/mtls/destination_rule.ts";
import { type ServerMtlsMode, namespaceMtls, serverMtls } from "../../host/security/mtls/peer_authn.ts";
import type { Workload } from "../../host/security/workload.ts";
import { catalogOf } from "./support.ts";

// Client side of spec rules 1–2 and 5–7 (security.md §2).

const HOST = "httpbin.foo.svc.cluster.local";

function dr(name: string, namespace: string, spec: Record<string, unknown>): string {
  return `---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: ${name}, namespace: ${namespace} }
spec: ${JSON.stringify(spec)}
`;
}

function tls(docs: string[], over: Partial<ClientTlsInput> = {}) {
  const c = docs.length ? catalogOf(docs.join("")) : undefined;
  return clientTls({
    host: HOST,
    servicePort: 8000,
    clientNamespace: "bar",
    destinationRules: c?.byKind.DestinationRule ?? [],
    destinationHasSidecar: true,
    ...over,
  });
}

const mutual = { tls: { mode: "MESH_MUTUAL" } };
const disable = { tls: { mode: "DISABLE" } };

describe("DestinationRule and auto mutual TLS", () => {
  it("rule 1: no DestinationRule, destination with a sidecar → mutual TLS (auto)", () => {
    assert.deepEqual(tls([]), { mode: "MESH_MUTUAL", source: "auto-mtls", destinationRule: null });
  });

  it("rule 2: destination without a sidecar → plain text", () => {
    assert.deepEqual(tls([], { destinationHasSidecar: false }), { mode: "DISABLE", source: "auto-mtls", destinationRule: null, plainTextReason: "no_sidecar" });
  });

  it("auto mutual TLS off, or the destination namespace DISABLE → plain text", () => {
    assert.equal(tls([], { enableAutoMtls: false }).plainTextReason, "auto_mtls_off");
    assert.equal(tls([], { destinationNamespaceMode: "DISABLE" }).plainTextReason, "destination_disable");
    assert.equal(tls([], { destinationNamespaceMode: "STRICT" }).mode, "MESH_MUTUAL");
  });

  it("rule 5: host-level MESH_MUTUAL", () => {
    const r = tls([dr("httpbin", "foo", { host: HOST, trafficPolicy: mutual })]);
    assert.deepEqual([r.mode, r.source, r.destinationRule], ["MESH_MUTUAL", "destination-rule", "foo/httpbin"]);
  });

  it("rule 7: host-level DISABLE sends plain text even to a proxied destination", () => {
    const r = tls([dr("httpbin", "foo", { host: HOST, trafficPolicy: disable })]);
    assert.deepEqual([r.mode, r.source], ["DISABLE", "destination-rule"]);
  });

  it("MESH_MUTUAL forces mutual TLS even to a destination without a sidecar", () => {
    assert.equal(tls([dr("httpbin", "foo", { host: HOST, trafficPolicy: mutual })], { destinationHasSidecar: false }).mode, "MESH_MUTUAL");
  });

  const portLevel = dr("httpbin", "foo", {
    host: HOST,
    trafficPolicy: { ...mutual, portLevelSettings: [{ port: { number: 8000 }, tls: { mode: "DISABLE" } }, { port: { number: 7000 } }] },
  });
  it("rule 6: portLevelSettings keyed by service port override the host level", () => {
    const r = tls([portLevel]);
    assert.deepEqual([r.mode, r.source], ["DISABLE", "port-level"]);
    const other = tls([portLevel], { servicePort: 9000 });
    assert.deepEqual([other.mode, other.source], ["MESH_MUTUAL", "destination-rule"]);
  });

  it("a port-level entry without tls replaces the host level: auto mutual TLS for that port", () => {
    const r = tls([portLevel], { servicePort: 7000, destinationHasSidecar: false });
    assert.deepEqual([r.mode, r.source, r.plainTextReason], ["DISABLE", "auto-mtls", "no_sidecar"]);
  });

  it("a short host is resolved in the rule's namespace", () => {
    assert.equal(tls([dr("short", "foo", { host: "httpbin", trafficPolicy: disable })]).mode, "DISABLE");
    assert.equal(tls([dr("short", "bar", { host: "httpbin", trafficPolicy: disable })]).mode, "MESH_MUTUAL", "httpbin in bar is another service");
  });

  it("lookup: client namespace, then the service's, then the root namespace; exact host beats wildcard", () => {
    const c = catalogOf(
      [
        dr("root", "mesh-system", { host: "*.local", trafficPolicy: disable }),
        dr("svc-wild", "foo", { host: "*.foo.svc.cluster.local", trafficPolicy: disable }),
        dr("svc-exact", "foo", { host: HOST, trafficPolicy: mutual }),
        dr("client", "bar", { host: HOST, trafficPolicy: disable }),
        dr("private", "baz", { host: HOST, trafficPolicy: disable, exportTo: ["."] }),
      ].join(""),
    );
    const rules = c.byKind.DestinationRule;
    assert.equal(findDestinationRule(rules, HOST, "bar")?.name, "client");
    assert.equal(findDestinationRule(rules, HOST, "qux")?.name, "svc-exact");
    assert.equal(findDestinationRule(rules, "reviews.foo.svc.cluster.local", "qux")?.name, "svc-wild");
    assert.equal(findDestinationRule(rules, "x.other.svc.cluster.local", "qux")?.name, "root");
    assert.equal(findDestinationRule(rules, HOST, "baz")?.name, "private", "exportTo . is visible in its own namespace");
    assert.equal(
      findDestinationRule(
        rules.filter((r) => r.name === "private"),
        HOST,
        "qux",
      ),
      undefined,
      "and nowhere else",
    );
  });
});

// Rules 3, 5 and 7 end to end: client TLS choice against the server mode, as the 1.5/1.6-era table of security.md §2.3.
type Outcome = "mtls" | "plain" | "connection-failure" | "503";
function outcome(clientHasSidecar: boolean, clientMode: "MESH_MUTUAL" | "DISABLE" | string, server: { sidecar: boolean; mode: ServerMtlsMode }): Outcome {
  const sendsMtls = clientHasSidecar && clientMode === "MESH_MUTUAL";
  if (!server.sidecar) return sendsMtls ? "503" : "plain";
  if (server.mode === "STRICT" && !sendsMtls) return clientHasSidecar ? "503" : "connection-failure";
  if (server.mode === "DISABLE" && sendsMtls) return "503";
  return sendsMtls ? "mtls" : "plain";
}

describe("rules 3, 5, 7: client choice against server mode", () => {
  const ORCH = `
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec: { selector: { app: httpbin }, ports: [{ port: 8000, targetPort: 80 }] }
`;
  const server: Workload = {
    name: "httpbin",
    namespace: "foo",
    labels: { app: "httpbin" },
    serviceAccount: "httpbin",
    ports: [{ containerPort: 80, protocol: "TCP" }],
    sidecar: true,
  };
  function run(docs: string, clientHasSidecar: boolean): Outcome {
    const c = catalogOf(ORCH + docs);
    const pas = c.byKind.PeerAuthentication;
    const s = serverMtls(pas, server, 80, c.byKind.Service);
    const client = clientTls({
      host: HOST,
      servicePort: 8000,
      clientNamespace: "bar",
      destinationRules: c.byKind.DestinationRule,
      destinationHasSidecar: true,
      destinationNamespaceMode: namespaceMtls(pas, "foo").mode,
    });
    return outcome(clientHasSidecar, client.mode, { sidecar: true, mode: s.mode });
  }
  const pa = (name: string, ns: string, spec: Record<string, unknown>) => `---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: ${name}, namespace: ${ns} }
spec: ${JSON.stringify(spec)}
`;
  const nsStrict = pa("default", "foo", { mtls: { mode: "STRICT" } });
  const wlDisable = pa("httpbin", "foo", { selector: { matchLabels: { app: "httpbin" } }, mtls: { mode: "DISABLE" } });

  it("rule 1: no policy: proxied client → mTLS; plain client → plain", () => {
    assert.equal(run("", true), "mtls");
    assert.equal(run("", false), "plain");
  });
  it("rule 3: mesh STRICT: plain client fails at connection level; proxied client still succeeds", () => {
    const mesh = pa("default", "mesh-system", { mtls: { mode: "STRICT" } });
    assert.equal(run(mesh, false), "connection-failure");
    assert.equal(run(mesh, true), "mtls");
  });
  it("rule 5: workload DISABLE without its DestinationRule: proxied clients still send mTLS → 503", () => {
    assert.equal(run(nsStrict + wlDisable, true), "503");
  });
  it("rule 7: workload DISABLE + DestinationRule DISABLE: plain text succeeds despite namespace STRICT", () => {
    const drDisable = dr("httpbin", "foo", { host: HOST, trafficPolicy: disable });
    assert.equal(run(nsStrict + wlDisable + drDisable, true), "plain");
    assert.equal(run(nsStrict + wlDisable + drDisable, false), "plain");
  });
  it("DestinationRule DISABLE towards a STRICT workload → 503", () => {
    assert.equal(run(nsStrict + dr("httpbin", "foo", { host: HOST, trafficPolicy: disable }), true), "503");
  });
});
