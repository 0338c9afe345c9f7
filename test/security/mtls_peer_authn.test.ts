import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isPortBound, namespaceMtls, serverMtls } from "../../host/security/mtls/peer_authn.ts";
import { type Workload, workloadFromPod } from "../../host/security/workload.ts";
import { catalogOf } from "./support.ts";

// Spec rules 3–7 (server side): mesh → namespace → workload → port (security.md §1).

const ORCH = `
apiVersion: v1
kind: Pod
metadata: { name: httpbin, namespace: foo, labels: { app: httpbin } }
spec:
  serviceAccountName: httpbin
  containers: [{ name: app, ports: [{ containerPort: 80, name: http }, { containerPort: 8080, name: admin }, { containerPort: 9000, name: grpc }] }]
---
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec:
  selector: { app: httpbin }
  ports: [{ name: http, port: 8000, targetPort: 80 }, { name: grpc, port: 9001, targetPort: grpc }]
---
apiVersion: v1
kind: Pod
metadata: { name: sleep, namespace: foo, labels: { app: sleep } }
spec: { containers: [{ name: app, ports: [{ containerPort: 80 }] }] }
`;

function pa(name: string, namespace: string, spec: Record<string, unknown>): string {
  return `---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: ${name}, namespace: ${namespace} }
spec: ${JSON.stringify(spec)}
`;
}

const base = catalogOf(ORCH);
const httpbin = workloadFromPod(base.byKind.Pod.find((p) => p.name === "httpbin")!);
const sleep = workloadFromPod(base.byKind.Pod.find((p) => p.name === "sleep")!);
const barWorkload: Workload = {
  name: "sleep",
  namespace: "bar",
  labels: { app: "sleep" },
  serviceAccount: "sleep",
  ports: [{ containerPort: 80, protocol: "TCP" }],
  sidecar: true,
};
const STRICT = { mtls: { mode: "STRICT" } };
const DISABLE = { mtls: { mode: "DISABLE" } };
const sel = (app: string) => ({ matchLabels: { app } });

function mode(policies: string[], workload: Workload, port = 80) {
  const c = catalogOf(ORCH + policies.join(""));
  return serverMtls(c.byKind.PeerAuthentication, workload, port, c.byKind.Service);
}

describe("PeerAuthentication: effective server mode", () => {
  const rows: Array<[string, string[], Workload, number, string, string, string | null]> = [
    ["no policy: PERMISSIVE", [], httpbin, 80, "PERMISSIVE", "default", null],
    ["rule 3: mesh STRICT covers every namespace", [pa("default", "mesh-system", STRICT)], barWorkload, 80, "STRICT", "mesh", "mesh-system/default"],
    ["rule 3: mesh STRICT covers foo", [pa("default", "mesh-system", STRICT)], httpbin, 80, "STRICT", "mesh", "mesh-system/default"],
    [
      "mesh UNSET is PERMISSIVE, set by the mesh policy (as tls-check reports it)",
      [pa("default", "mesh-system", {})],
      httpbin,
      80,
      "PERMISSIVE",
      "mesh",
      "mesh-system/default",
    ],
    [
      "a selector policy in the root namespace is ignored for other namespaces",
      [pa("x", "mesh-system", { selector: sel("httpbin"), ...STRICT })],
      httpbin,
      80,
      "PERMISSIVE",
      "default",
      null,
    ],
    ["rule 4: namespace STRICT applies in its namespace", [pa("default", "foo", STRICT)], sleep, 80, "STRICT", "namespace", "foo/default"],
    ["rule 4: … and not in another", [pa("default", "foo", STRICT)], barWorkload, 80, "PERMISSIVE", "default", null],
    [
      "namespace UNSET inherits the mesh",
      [pa("default", "mesh-system", STRICT), pa("default", "foo", {})],
      httpbin,
      80,
      "STRICT",
      "mesh",
      "mesh-system/default",
    ],
    [
      "namespace DISABLE overrides mesh STRICT",
      [pa("default", "mesh-system", STRICT), pa("default", "foo", DISABLE)],
      httpbin,
      80,
      "DISABLE",
      "namespace",
      "foo/default",
    ],
    [
      "rule 5: workload STRICT selects by labels",
      [pa("httpbin", "foo", { selector: sel("httpbin"), ...STRICT })],
      httpbin,
      80,
      "STRICT",
      "workload",
      "foo/httpbin",
    ],
    ["rule 5: … other workloads unaffected", [pa("httpbin", "foo", { selector: sel("httpbin"), ...STRICT })], sleep, 80, "PERMISSIVE", "default", null],
    [
      "rule 7: workload DISABLE beats namespace STRICT",
      [pa("default", "foo", STRICT), pa("httpbin", "foo", { selector: sel("httpbin"), ...DISABLE })],
      httpbin,
      80,
      "DISABLE",
      "workload",
      "foo/httpbin",
    ],
    [
      "rule 7: workload PERMISSIVE beats namespace STRICT",
      [pa("default", "foo", STRICT), pa("httpbin", "foo", { selector: sel("httpbin"), mtls: { mode: "PERMISSIVE" } })],
      httpbin,
      80,
      "PERMISSIVE",
      "workload",
      "foo/httpbin",
    ],
    [
      "workload UNSET inherits the namespace",
      [pa("default", "foo", STRICT), pa("httpbin", "foo", { selector: sel("httpbin") })],
      httpbin,
      80,
      "STRICT",
      "namespace",
      "foo/default",
    ],
    [
      "rule 6: portLevelMtls overrides the workload mode for a bound container port",
      [pa("httpbin", "foo", { selector: sel("httpbin"), ...STRICT, portLevelMtls: { 80: { mode: "DISABLE" } } })],
      httpbin,
      80,
      "DISABLE",
      "port",
      "foo/httpbin",
    ],
    [
      "rule 6: keyed by container port, not service port",
      [pa("httpbin", "foo", { selector: sel("httpbin"), ...STRICT, portLevelMtls: { 8000: { mode: "DISABLE" } } })],
      httpbin,
      80,
      "STRICT",
      "workload",
      "foo/httpbin",
    ],
    [
      "rule 6: a port bound by name (targetPort: grpc)",
      [pa("httpbin", "foo", { selector: sel("httpbin"), ...STRICT, portLevelMtls: { 9000: { mode: "DISABLE" } } })],
      httpbin,
      9000,
      "DISABLE",
      "port",
      "foo/httpbin",
    ],
    [
      "rule 6: port level over a namespace STRICT",
      [pa("default", "foo", STRICT), pa("httpbin", "foo", { selector: sel("httpbin"), portLevelMtls: { 80: { mode: "DISABLE" } } })],
      httpbin,
      80,
      "DISABLE",
      "port",
      "foo/httpbin",
    ],
    [
      "port UNSET inherits the workload level",
      [pa("httpbin", "foo", { selector: sel("httpbin"), ...STRICT, portLevelMtls: { 80: { mode: "UNSET" } } })],
      httpbin,
      80,
      "STRICT",
      "workload",
      "foo/httpbin",
    ],
    [
      "several namespace policies: the first given wins (upstream: the oldest)",
      [pa("a", "foo", STRICT), pa("b", "foo", DISABLE)],
      httpbin,
      80,
      "STRICT",
      "namespace",
      "foo/a",
    ],
  ];
  for (const [name, policies, workload, port, expected, scope, policy] of rows) {
    it(name, () => {
      const m = mode(policies, workload, port);
      assert.deepEqual([m.mode, m.scope, m.policy], [expected, scope, policy]);
    });
  }

  it("rule 6: a portLevelMtls entry for a port no Service binds is ignored, and said so", () => {
    const m = mode([pa("httpbin", "foo", { selector: sel("httpbin"), ...STRICT, portLevelMtls: { 8080: { mode: "DISABLE" } } })], httpbin, 8080);
    assert.deepEqual(m, { mode: "STRICT", scope: "workload", policy: "foo/httpbin", ignoredPortLevel: "foo/httpbin" });
  });

  it("port binding: Service selector and targetPort by number or name", () => {
    const services = base.byKind.Service;
    assert.equal(isPortBound(httpbin, 80, services), true);
    assert.equal(isPortBound(httpbin, 9000, services), true);
    assert.equal(isPortBound(httpbin, 8080, services), false);
    assert.equal(isPortBound(sleep, 80, services), false);
  });

  it("namespaceMtls (what auto mutual TLS infers) ignores workload and port policies", () => {
    const c = catalogOf(ORCH + pa("default", "foo", STRICT) + pa("httpbin", "foo", { selector: sel("httpbin"), ...DISABLE }));
    assert.equal(namespaceMtls(c.byKind.PeerAuthentication, "foo").mode, "STRICT");
    assert.equal(namespaceMtls(c.byKind.PeerAuthentication, "bar").mode, "PERMISSIVE");
  });
});
