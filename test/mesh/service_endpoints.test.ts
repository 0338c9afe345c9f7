// A Service's endpoints when the configuration has no Endpoints document:
// what the orchestrator's endpoints controller would write from the Pods its
// selector matches (research mesh-runtime §9), EndpointSlices read when given,
// and the registry's endpoint API the Node sidecar routes by.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Catalog } from "../../host/config/catalog.ts";
import { clusterName, parseClusterName } from "../../host/mesh/cluster_names.ts";
import { endpointAt, endpointsOf, serviceEndpoints } from "../../host/mesh/endpoints.ts";
import { buildRegistry, type MeshService } from "../../host/mesh/registry.ts";
import { decode } from "../config/table.ts";

const registryOf = (catalog: Catalog) => buildRegistry(catalog.byKind, { domain: catalog.domain });

interface PodOptions {
  ip?: string | string[];
  labels?: Record<string, string>;
  phase?: string;
  ready?: boolean;
  deleting?: boolean;
  ports?: string;
  sa?: string;
}

/** A Pod document as `kubectl get pod -o yaml` shows it (status included). */
function pod(name: string, o: PodOptions = {}): string {
  const ips = o.ip === undefined ? [] : Array.isArray(o.ip) ? o.ip : [o.ip];
  const labels = JSON.stringify(o.labels ?? { app: "reviews", version: "v1" });
  const status = [
    `  phase: ${o.phase ?? "Running"}`,
    ...(ips.length > 0 ? [`  podIP: ${ips[0]}`, `  podIPs: [${ips.map((ip) => `{ip: "${ip}"}`).join(", ")}]`] : []),
    `  conditions: [{type: Initialized, status: "True"}, {type: Ready, status: "${o.ready === false ? "False" : "True"}"}]`,
  ].join("\n");
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default, labels: ${labels}${o.deleting ? ", deletionTimestamp: 2026-11-28T00:00:00Z" : ""}}
spec:
  serviceAccountName: ${o.sa ?? "bookinfo-reviews"}
  containers: [{name: app, ports: ${o.ports ?? "[{containerPort: 9080, name: http}]"}}]
status:
${status}
---
`;
}

const REVIEWS = `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {clusterIP: 10.96.0.7, selector: {app: reviews}, ports: [{name: http, port: 9080}]}
---
`;

function only(catalog: Catalog, name: string): MeshService {
  assert.deepEqual(catalog.errors, [], "documents must decode");
  return registryOf(catalog).services.find((s) => s.name === name)!;
}

const addresses = (s: MeshService, port = s.ports[0]) => endpointsOf(s, port).map((e) => `${e.address}:${e.port}`);

describe("registry: endpoints from Pods when a Service has no Endpoints document", () => {
  it("ready pods the selector matches, at their pod IP, on the numeric targetPort; the source says Pods", () => {
    const s = only(
      decode(REVIEWS + pod("reviews-v1", { ip: "10.1.0.1" }) + pod("reviews-v2", { ip: "10.1.0.2", labels: { app: "reviews", version: "v2" } })),
      "reviews",
    );
    assert.equal(s.endpointSource, "Pods");
    assert.deepEqual(addresses(s), ["10.1.0.1:9080", "10.1.0.2:9080"]);
    const e = endpointsOf(s, s.ports[0])[1];
    assert.deepEqual(e.labels, { app: "reviews", version: "v2" });
    assert.equal(e.serviceAccount, "bookinfo-reviews");
  });

  it("pods of other namespaces or other labels are not selected", () => {
    const other = pod("ratings", { ip: "10.1.0.3", labels: { app: "ratings" } });
    const elsewhere = pod("reviews-x", { ip: "10.1.0.4" }).replace("namespace: default", "namespace: other");
    assert.deepEqual(addresses(only(decode(REVIEWS + other + elsewhere), "reviews")), []);
  });

  it("terminal, address-less and deleting pods are left out; a not-ready pod is not ready", () => {
    const s = only(
      decode(
        REVIEWS +
          pod("done", { ip: "10.1.0.5", phase: "Succeeded" }) +
          pod("failed", { ip: "10.1.0.6", phase: "Failed" }) +
          pod("pending", { phase: "Pending" }) +
          pod("going", { ip: "10.1.0.7", deleting: true }) +
          pod("starting", { ip: "10.1.0.8", ready: false }) +
          pod("up", { ip: "10.1.0.9" }),
      ),
      "reviews",
    );
    assert.deepEqual(addresses(s), ["10.1.0.9:9080"]);
    assert.deepEqual(
      s.notReadyInstances?.map((i) => i.address),
      ["10.1.0.8"],
    );
  });

  it("publishNotReadyAddresses: not-ready and deleting pods are ready addresses (terminal ones still left out)", () => {
    const svc = REVIEWS.replace("selector: {app: reviews}", "publishNotReadyAddresses: true, selector: {app: reviews}");
    const s = only(
      decode(
        svc +
          pod("going", { ip: "10.1.0.7", deleting: true }) +
          pod("starting", { ip: "10.1.0.8", ready: false }) +
          pod("done", { ip: "10.1.0.5", phase: "Failed" }),
      ),
      "reviews",
    );
    assert.deepEqual(addresses(s), ["10.1.0.7:9080", "10.1.0.8:9080"]);
  });

  it("a named targetPort is the container port of that name and protocol; a pod without it is left out for that port", () => {
    const svc = `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec:
  selector: {app: reviews}
  ports: [{name: http, port: 9080, targetPort: web}, {name: tcp-metrics, port: 9090, targetPort: metrics}]
---
`;
    const s = only(
      decode(
        svc +
          pod("a", { ip: "10.1.0.1", ports: "[{containerPort: 8080, name: web}, {containerPort: 9100, name: metrics}]" }) +
          // The right name under another protocol does not count (FindPort matches name and protocol).
          pod("b", { ip: "10.1.0.2", ports: "[{containerPort: 8081, name: web}, {containerPort: 9101, name: metrics, protocol: UDP}]" }) +
          pod("c", { ip: "10.1.0.3", ports: "[{containerPort: 8082, name: other}]" }),
      ),
      "reviews",
    );
    assert.deepEqual(addresses(s, s.ports[0]), ["10.1.0.1:8080", "10.1.0.2:8081"]);
    assert.deepEqual(addresses(s, s.ports[1]), ["10.1.0.1:9100"]);
  });

  it("ExternalName and selector-less Services get no endpoints from pods", () => {
    const external = `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {type: ExternalName, externalName: reviews.example.com, selector: {app: reviews}, ports: [{name: http, port: 9080}]}
---
`;
    const bare = `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {ports: [{name: http, port: 9080}]}
---
`;
    for (const svc of [external, bare]) {
      const s = only(decode(svc + pod("a", { ip: "10.1.0.1" })), "reviews");
      assert.equal(s.endpointSource, "none");
      assert.deepEqual(addresses(s), []);
    }
  });

  it("the pod's address is of the Service's IP family", () => {
    const v6 = REVIEWS.replace("clusterIP: 10.96.0.7", "clusterIP: fd00::7");
    assert.deepEqual(addresses(only(decode(v6 + pod("a", { ip: ["10.1.0.1", "fd00:1::1"] })), "reviews")), ["fd00:1::1:9080"]);
    assert.deepEqual(addresses(only(decode(REVIEWS + pod("a", { ip: ["10.1.0.1", "fd00:1::1"] })), "reviews")), ["10.1.0.1:9080"]);
  });

  it("an Endpoints document wins over the pods (the orchestrator's own answer)", () => {
    const endpoints = `apiVersion: v1
kind: Endpoints
metadata: {name: reviews, namespace: default}
subsets: [{addresses: [{ip: 10.9.9.9}], ports: [{name: http, port: 9080}]}]
---
`;
    const s = only(decode(REVIEWS + endpoints + pod("a", { ip: "10.1.0.1" })), "reviews");
    assert.equal(s.endpointSource, "Endpoints");
    assert.deepEqual(addresses(s), ["10.9.9.9:9080"]);
  });

  it("Deployment pod templates give workloads (labels, ports, service account) but no addresses", () => {
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: reviews-v1, namespace: default}
spec:
  selector: {matchLabels: {app: reviews, version: v1}}
  template:
    metadata: {labels: {app: reviews, version: v1}}
    spec: {serviceAccountName: bookinfo-reviews, containers: [{name: reviews, ports: [{containerPort: 9080}]}]}
`;
    const catalog = decode(REVIEWS + deployment);
    const registry = registryOf(catalog);
    const w = registry.workloads.find((x) => x.kind === "Deployment")!;
    assert.deepEqual(
      [w.labels, w.serviceAccount, w.ports.map((p) => p.containerPort), w.addresses ?? []],
      [{ app: "reviews", version: "v1" }, "bookinfo-reviews", [9080], []],
    );
    assert.deepEqual(addresses(only(catalog, "reviews")), []);
  });

  it("where Pods of a Deployment are given, they are its workloads (the template is not counted again)", () => {
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: reviews-v1, namespace: default}
spec:
  selector: {matchLabels: {app: reviews, version: v1}}
  template:
    metadata: {labels: {app: reviews, version: v1}}
    spec: {serviceAccountName: bookinfo-reviews, containers: [{name: reviews, ports: [{containerPort: 9080}]}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: reviews-v2, namespace: default}
spec:
  selector: {matchLabels: {app: reviews, version: v2}}
  template:
    metadata: {labels: {app: reviews, version: v2}}
    spec: {serviceAccountName: bookinfo-reviews, containers: [{name: reviews, ports: [{containerPort: 9080}]}]}
---
`;
    const registry = registryOf(decode(REVIEWS + deployment + pod("reviews-v1-abc", { ip: "10.1.0.1" })));
    assert.deepEqual(
      registry.workloads.map((w) => `${w.kind} ${w.name} ${(w.addresses ?? []).join(",")}`),
      ["Pod reviews-v1-abc 10.1.0.1", "Deployment reviews-v2 "],
    );
  });

  it("a bad pod IP in status names its field", () => {
    const bad = decode(REVIEWS + pod("a", { ip: "10.1.0.999" }));
    assert.match(bad.errors.map((e) => `${e.fieldPath}: ${e.message}`).join("\n"), /status\.podIPs\[0\]\.ip.*IPv4 or IPv6/);
  });
});

describe("registry: EndpointSlices", () => {
  const slice = (name: string, body: string) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${name}, namespace: default, labels: {kubernetes.io/service-name: reviews}}
${body}
---
`;
  it("the slices labelled with the Service's name: ready (or unset) conditions serve, targetRef pods lend labels", () => {
    const docs =
      REVIEWS +
      slice(
        "reviews-abc",
        `addressType: IPv4
ports: [{name: http, port: 9080, protocol: TCP}]
endpoints:
- {addresses: [10.2.0.1], conditions: {ready: true}, targetRef: {kind: Pod, name: reviews-v2, namespace: default}}
- {addresses: [10.2.0.2]}
- {addresses: [10.2.0.3], conditions: {ready: false, serving: true, terminating: true}}`,
      ) +
      slice("reviews-fqdn", "addressType: FQDN\nports: [{name: http, port: 9080}]\nendpoints: [{addresses: [db.example.com]}]") +
      pod("reviews-v2", { ip: "10.2.0.1", labels: { app: "reviews", version: "v2" } }) +
      pod("unrelated", { ip: "10.1.0.1" });
    const s = only(decode(docs), "reviews");
    assert.equal(s.endpointSource, "EndpointSlice");
    assert.deepEqual(addresses(s), ["10.2.0.1:9080", "10.2.0.2:9080"]);
    assert.deepEqual(endpointsOf(s, s.ports[0])[0].labels, { app: "reviews", version: "v2" });
    assert.deepEqual(
      s.notReadyInstances?.map((i) => i.address),
      ["10.2.0.3"],
    );
  });

  it("a slice without addressType or with a bad address is refused naming the field; one without the service-name label is a warning", () => {
    const bad = decode(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: x, namespace: default}
addressType: IPv4
endpoints: [{addresses: [nope]}]
`);
    const text = bad.problems.map((p) => `${p.severity} ${p.fieldPath}: ${p.message}`).join("\n");
    assert.match(text, /error endpoints\[0\]\.addresses\[0\].*IPv4 or IPv6/);
    assert.match(text, /warning metadata\.labels\.kubernetes\.io\/service-name: absent/);
    assert.match(decode("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: y}\nendpoints: []\n").errors[0].fieldPath, /addressType/);
  });
});

describe("registry: the endpoint API outbound routing uses", () => {
  const DOCS =
    REVIEWS +
    pod("reviews-v1", { ip: "10.1.0.1", labels: { app: "reviews", version: "v1", "security.mesh.io/tlsMode": "mesh" } }) +
    pod("reviews-v2", { ip: "10.1.0.2", labels: { app: "reviews", version: "v2" } });
  const registry = registryOf(decode(DOCS));

  it("serviceEndpoints(host, port): address, port, labels, service account, whether a sidecar runs in front", () => {
    assert.deepEqual(
      serviceEndpoints(registry, "reviews.default.svc.cluster.local", 9080).map((e) => [e.address, e.port, e.serviceAccount, e.sidecar, e.weight]),
      [
        ["10.1.0.1", 9080, "bookinfo-reviews", true, 1],
        ["10.1.0.2", 9080, "bookinfo-reviews", false, 1],
      ],
    );
  });

  it("a subset's labels select among them; an unknown host or port has none", () => {
    assert.deepEqual(
      serviceEndpoints(registry, "reviews.default.svc.cluster.local", 9080, { version: "v2" }).map((e) => e.address),
      ["10.1.0.2"],
    );
    assert.deepEqual(serviceEndpoints(registry, "reviews.default.svc.cluster.local", 9081), []);
    assert.deepEqual(serviceEndpoints(registry, "ratings.default.svc.cluster.local", 9080), []);
  });
});

describe("registry: which service a pod address serves", () => {
  it("endpointAt(address, port): the service port and endpoint; an address of no endpoint is none", () => {
    const registry = registryOf(decode(REVIEWS + pod("reviews-v2", { ip: "10.1.0.2", labels: { app: "reviews", version: "v2" } })));
    const found = endpointAt(registry, "10.1.0.2", 9080)!;
    assert.deepEqual([found.service.fqdn, found.port.port, found.endpoint.labels.version], ["reviews.default.svc.cluster.local", 9080, "v2"]);
    assert.equal(endpointAt(registry, "10.1.0.2", 9081), undefined);
    assert.equal(endpointAt(registry, "10.1.0.3", 9080), undefined);
  });
});

describe("cluster names: outbound|port|subset|host", () => {
  it("built and parsed back; other names are not outbound clusters", () => {
    assert.equal(clusterName("reviews.default.svc.cluster.local", 9080, "v1"), "outbound|9080|v1|reviews.default.svc.cluster.local");
    assert.equal(clusterName("reviews.default.svc.cluster.local", 9080), "outbound|9080||reviews.default.svc.cluster.local");
    assert.deepEqual(parseClusterName("outbound|9080|v1|reviews.default.svc.cluster.local"), {
      host: "reviews.default.svc.cluster.local",
      port: 9080,
      subset: "v1",
    });
    assert.deepEqual(parseClusterName(clusterName("api.example.com", 443)), { host: "api.example.com", port: 443, subset: "" });
    for (const other of ["inbound|8080||", "PassthroughCluster", "outbound|0||h", "outbound|x||h", "outbound|80||", "hub_server"]) {
      assert.equal(parseClusterName(other), undefined, other);
    }
  });
});
