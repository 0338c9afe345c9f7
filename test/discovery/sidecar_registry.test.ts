// The Node sidecar's registry, fed by disco-discovery: the configuration
// documents it is served over a real ADS stream (XdsConfigSource, as
// `disco-agent proxy --discoveryAddress` runs it) carry the Pods of every
// namespace with their status, so the sidecar's mesh model computes the same
// endpoints as the control plane's EDS, and a Pod that comes up later reaches
// it. Push scoping leaves other namespaces' policies out of its view, never
// the registry's documents.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { LoadedConfig } from "../../host/config/config_dir.ts";
import type { DiscoveryServer } from "../../host/discovery/server.ts";
import { serviceEndpoints } from "../../host/mesh/endpoints.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { buildRegistry, type MeshRegistry } from "../../host/mesh/registry.ts";
import { XdsConfigSource } from "../../host/proxy/xds_config.ts";
import { tempDir } from "../support/processes.ts";
import { denyPolicy, silent, startTestDiscovery, testChecks, until } from "./support/in_process.ts";

const pod = (name: string, app: string, ip: string, ready = true) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default, labels: {app: ${app}, security.mesh.io/tlsMode: mesh}}
spec: {serviceAccountName: ${app}, containers: [{name: app, ports: [{containerPort: 8080, name: http-web}]}]}
status: {phase: Running, podIP: ${ip}, conditions: [{type: Ready, status: "${ready ? "True" : "False"}"}]}
---
`;

const SERVICES = `apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: default}
spec: {clusterIP: 10.96.0.20, selector: {app: httpbin}, ports: [{name: http, port: 8000, targetPort: http-web}]}
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: default}
spec: {selector: {app: ratings}, ports: [{name: http, port: 9080, targetPort: 8080}]}
`;

/** Every service port's endpoints, as `host:port → address:port…`. */
function endpointTable(registry: MeshRegistry): Record<string, string[]> {
  return Object.fromEntries(
    registry.services.flatMap((s) =>
      s.ports.map((p) => [
        `${s.fqdn}:${p.port}`,
        serviceEndpoints(registry, s.fqdn, p.port).map((e) => `${e.address}:${e.port}${e.sidecar ? " sidecar" : ""} sa=${e.serviceAccount}`),
      ]),
    ),
  );
}

describe("the Node sidecar's registry from disco-discovery's documents", { timeout: 600_000 }, () => {
  const dir = tempDir("disco-sidecar-registry-");
  let discovery: DiscoveryServer;
  let sidecar: XdsConfigSource;
  const received: LoadedConfig[] = [];
  const sidecarRegistry = () => {
    const last = received.at(-1)!.mesh;
    return buildRegistry(last.byKind, { domain: last.domain });
  };

  before(async () => {
    writeFileSync(join(dir, "services.yaml"), SERVICES);
    writeFileSync(join(dir, "pods.yaml"), pod("httpbin-1", "httpbin", "10.244.1.5") + pod("httpbin-2", "httpbin", "10.244.1.6", false));
    // A policy of another namespace: push scoping keeps it from a sidecar of namespace foo, not the Pods.
    writeFileSync(join(dir, "policy.yaml"), denyPolicy("/admin").replace("namespace: foo", "namespace: default"));
    discovery = await startTestDiscovery(dir);
    // A sidecar in namespace foo, calling services of namespace default.
    sidecar = new XdsConfigSource(
      discovery.listeners.grpc!,
      { id: "sidecar~10.244.2.7~sleep-1.foo~foo.svc.cluster.local", cluster: "sleep.foo" },
      testChecks(),
      DEFAULT_DOMAIN,
      (c) => (received.push(c), true),
      () => {},
      silent,
    );
    assert.equal(await sidecar.start(), true);
  });
  after(async () => {
    sidecar?.stop();
    await discovery?.close();
  });

  it("receives the Pods of other namespaces (with their status), not their namespace's policies", () => {
    const byKind = received.at(-1)!.mesh.byKind;
    assert.deepEqual(
      byKind.Pod.map((p) => [p.namespace, p.name, p.spec.status.podIPs]),
      [
        ["default", "httpbin-1", ["10.244.1.5"]],
        ["default", "httpbin-2", ["10.244.1.6"]],
      ],
    );
    assert.deepEqual(byKind.AuthorizationPolicy, []);
  });

  it("its mesh model computes the endpoints the control plane serves", () => {
    const table = endpointTable(sidecarRegistry());
    assert.deepEqual(table, endpointTable(discovery.snapshot().registry));
    assert.deepEqual(table["httpbin.default.svc.cluster.local:8000"], ["10.244.1.5:8080 sidecar sa=httpbin"]);
    assert.deepEqual(table["ratings.default.svc.cluster.local:9080"], []);
  });

  it("a Pod that comes up later reaches it", async () => {
    writeFileSync(join(dir, "ratings-pod.yaml"), pod("ratings-1", "ratings", "10.244.1.9"));
    await until("the ratings endpoint at the sidecar", () =>
      endpointTable(sidecarRegistry())["ratings.default.svc.cluster.local:9080"].length === 1 ? true : undefined,
    );
    assert.deepEqual(endpointTable(sidecarRegistry()), endpointTable(discovery.snapshot().registry));
    assert.deepEqual(endpointTable(sidecarRegistry())["ratings.default.svc.cluster.local:9080"], ["10.244.1.9:8080 sidecar sa=ratings"]);
  });
});
