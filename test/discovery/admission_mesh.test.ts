import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fastJsonPatch from "fast-json-patch";
import { decodeInjectionSettings } from "../../host/inject/settings.ts";
import { REVISION_LABEL, inject } from "../../host/discovery/admission.ts";
import { orchSchemaErrors } from "../support/orch_schema.ts";

// The injection webhook injects what `meshctl orch-inject` does (issue 24):
// applied to the Pod the orchestrator is creating (a generateName, the
// ReplicaSet as its controller), its patch adds the capture init container and
// the sidecar joined to the revision's disco-discovery, points the probes at
// the agent, and names the Deployment as the workload.

type Obj = Record<string, any>;

const pod = (labels: Record<string, string>): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    generateName: "productpage-v1-6b746f74dc-",
    labels: { app: "productpage", version: "v1", "pod-template-hash": "6b746f74dc", ...labels },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "productpage-v1-6b746f74dc", uid: "1", controller: true }],
  },
  spec: {
    serviceAccountName: "bookinfo-productpage",
    containers: [
      { name: "productpage", image: "productpage:1", ports: [{ containerPort: 9080 }], readinessProbe: { httpGet: { path: "/health", port: 9080 } } },
    ],
  },
});

function patched(request: Obj, revision = ""): Obj {
  const settings = decodeInjectionSettings({}, [], undefined, revision || undefined);
  const r = inject(request as Parameters<typeof inject>[0], settings, revision);
  assert.equal(r.outcome, "success", r.reason);
  const patch = JSON.parse(Buffer.from(r.response.patch!, "base64").toString("utf8"));
  return fastJsonPatch.applyPatch(structuredClone(request.object), patch).newDocument as Obj;
}

describe("the injection webhook joins pods to the mesh", () => {
  it("a Deployment's pod: mesh-init, mesh-proxy with the control plane, probes at the agent, the Deployment as workload; valid against the schema", async () => {
    const out = patched({ uid: "u", kind: { kind: "Pod" }, namespace: "bookinfo", object: pod({}) });
    assert.deepEqual(
      out.spec.initContainers.map((c: Obj) => [c.name, c.args.slice(0, 3)]),
      [["mesh-init", ["mesh-iptables", "-p", "15001"]]],
    );
    const sidecar = out.spec.containers.find((c: Obj) => c.name === "mesh-proxy");
    const env = Object.fromEntries(sidecar.env.filter((e: Obj) => "value" in e).map((e: Obj) => [e.name, e.value]));
    assert.equal(sidecar.args[sidecar.args.indexOf("--discoveryAddress") + 1], "disco-discovery.mesh-system.svc:15012");
    assert.equal(env.MESH_META_WORKLOAD_NAME, "productpage-v1");
    assert.equal(env.MESH_META_OWNER, "orch://apis/apps/v1/namespaces/bookinfo/deployments/productpage-v1");
    assert.deepEqual(JSON.parse(env.MESH_ORCH_APP_PROBERS), { "/app-health/productpage/readyz": { httpGet: { path: "/health", port: 9080 } } });
    assert.deepEqual(out.spec.containers[0].readinessProbe, { httpGet: { path: "/app-health/productpage/readyz", port: 15020 } });
    assert.equal(out.metadata.namespace, undefined, "the namespace stays the request's");
    assert.deepEqual(await orchSchemaErrors({ ...out, metadata: { ...out.metadata, name: "productpage-v1-6b746f74dc-x1" } }), []);
  });

  it("REVISION: the revision's disco-discovery and the revision annotation", () => {
    const out = patched({ uid: "u", kind: { kind: "Pod" }, namespace: "bookinfo", object: pod({ [REVISION_LABEL]: "canary" }) }, "canary");
    const sidecar = out.spec.containers.find((c: Obj) => c.name === "mesh-proxy");
    assert.equal(sidecar.args[sidecar.args.indexOf("--discoveryAddress") + 1], "disco-discovery-canary.mesh-system.svc:15012");
    assert.equal(out.metadata.annotations["mesh.io/rev"], "canary");
  });
});
