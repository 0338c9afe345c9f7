import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findDestinationRule, destinationFor, tlsForPort } from "../../host/mesh/destination_rules.ts";
import type { Catalog } from "../../host/config/catalog.ts";
import { DEFAULT_DOMAIN, canonicalHost, hostsIntersect, serviceDomains, splitAuthority, splitProxyDnsDomain } from "../../host/mesh/hosts.ts";
import { labelsMatch, labelsMatchKnown, selectorSelects } from "../../host/mesh/labels.ts";
import { effectiveMtls, policyApplies, selectingPolicies } from "../../host/mesh/policies.ts";
import { endpointsOf } from "../../host/mesh/endpoints.ts";
import { gatewayTlsServers, serverForSni } from "../../host/mesh/gateway_tls.ts";
import { buildRegistry, containerPortForServicePort, resolveAuthority } from "../../host/mesh/registry.ts";
import { virtualServiceHosts } from "../../host/mesh/routing.ts";
import { decode } from "../config/table.ts";

const ROOT = "mesh-system";

/** The mesh model's registry of a decoded configuration, in the DNS domain it was decoded in. */
const registryOf = (catalog: Catalog) => buildRegistry(catalog.byKind, { domain: catalog.domain });

// Upstream's httpbin sample (renamed): Service port 8000 → container port 80, with a cluster address.
const HTTPBIN = `
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo, labels: { app: httpbin } }
spec: { clusterIP: 10.96.0.20, selector: { app: httpbin }, ports: [{ name: http, port: 8000, targetPort: 80 }] }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: httpbin, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin, version: v1 } }
  template:
    metadata: { labels: { app: httpbin, version: v1 } }
    spec: { serviceAccountName: httpbin, containers: [{ name: httpbin, image: kennethreitz/httpbin, ports: [{ containerPort: 80 }] }] }
---
apiVersion: v1
kind: Service
metadata: { name: mesh-ingressgateway, namespace: mesh-system }
spec: { selector: { mesh: ingressgateway }, ports: [{ name: http2, port: 80, targetPort: 8080 }, { name: https, port: 443, targetPort: 8443 }] }
`;

describe("mesh model: host names in upstream's forms", () => {
  const registry = registryOf(decode(HTTPBIN));
  const forms: Array<[string, string | undefined, number]> = [
    ["httpbin", "foo", 80],
    ["httpbin:8000", "foo", 8000],
    ["httpbin.foo", "bar", 80],
    ["httpbin.foo:8000", "bar", 8000],
    ["httpbin.foo.svc", "bar", 80],
    ["httpbin.foo.svc:8000", "bar", 8000],
    ["httpbin.foo.svc.cluster.local", "bar", 80],
    ["HTTPBIN.foo.svc.cluster.local:8000", "bar", 8000],
    ["10.96.0.20:8000", "bar", 8000],
  ];
  for (const [authority, clientNs, port] of forms) {
    it(`${authority} from namespace ${clientNs} names httpbin.foo.svc.cluster.local:${port}`, () => {
      const r = resolveAuthority(registry, authority, clientNs);
      assert.equal(r.host, "httpbin.foo.svc.cluster.local");
      assert.equal(r.port, port);
      assert.equal(r.service?.name, "httpbin");
    });
  }

  it("a bare name from another namespace is a service of that namespace (the client's DNS search path), not httpbin.foo", () => {
    const r = resolveAuthority(registry, "httpbin:8000", "bar");
    assert.equal(r.host, "httpbin.bar.svc.cluster.local");
    assert.equal(r.service, undefined);
  });

  it("ServiceEntry hosts stay beside Services (upstream's egress-rule-google-apis with bookinfo): the sidecar, disco-discovery and analyze see both", () => {
    const entry = `
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: googleapis, namespace: default }
spec: { hosts: [www.googleapis.com], ports: [{ number: 80, name: http, protocol: HTTP }, { number: 443, name: https, protocol: HTTPS }], resolution: DNS }
`;
    const both = registryOf(decode(HTTPBIN + entry));
    assert.deepEqual(
      both.services.map((s) => [s.source, s.fqdn]),
      [
        ["Service", "httpbin.foo.svc.cluster.local"],
        ["Service", "mesh-ingressgateway.mesh-system.svc.cluster.local"],
        ["ServiceEntry", "www.googleapis.com"],
      ],
    );
    assert.equal(resolveAuthority(both, "www.googleapis.com:443", "default").service?.source, "ServiceEntry");
    assert.equal(resolveAuthority(both, "httpbin.foo:8000", "default").service?.source, "Service");
  });

  it("external names stay as written, lower case", () => {
    assert.equal(canonicalHost("Edition.CNN.com", "foo", DEFAULT_DOMAIN), "edition.cnn.com");
    assert.deepEqual(splitAuthority("[::1]:8080"), { host: "[::1]", port: 8080 });
  });

  it("wildcard hosts intersect as upstream's gateway binding does", () => {
    assert.equal(hostsIntersect("*.example.com", "httpbin.example.com"), true);
    assert.equal(hostsIntersect("*", "anything"), true);
    assert.equal(hostsIntersect("a.example.com", "b.example.com"), false);
  });

  it("translates a gateway Service port to the gateway's container port", () => {
    const gw = { namespace: ROOT, labels: { mesh: "ingressgateway" }, ports: [] };
    assert.equal(containerPortForServicePort(registry, gw, 80), 8080);
    assert.equal(containerPortForServicePort(registry, gw, 443), 8443);
    assert.equal(containerPortForServicePort(registry, gw, 8080), undefined);
  });
});

describe("mesh model: a DNS domain other than cluster.local (disco-discovery --domain)", () => {
  const DOMAIN = "example.internal";
  const SHORT_HOSTS = `
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: httpbin, namespace: foo }
spec: { host: httpbin, subsets: [{ name: v1, labels: { version: v1 } }] }
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: { name: httpbin, namespace: foo }
spec:
  hosts: [httpbin]
  http: [{ route: [{ destination: { host: httpbin, subset: v1 } }], mirror: { host: reviews } }]
`;
  const catalog = decode(HTTPBIN + SHORT_HOSTS, { domain: DOMAIN });
  const registry = registryOf(catalog);

  it("the model is built with the domain: services are <name>.<namespace>.svc.<domain>", () => {
    assert.equal(catalog.domain, DOMAIN);
    assert.equal(registry.domain, DOMAIN);
    assert.deepEqual(registry.services.map((s) => s.fqdn).sort(), ["httpbin.foo.svc.example.internal", "mesh-ingressgateway.mesh-system.svc.example.internal"]);
  });

  for (const [authority, clientNs] of [
    ["httpbin", "foo"],
    ["httpbin.foo", "bar"],
    ["httpbin.foo.svc", "bar"],
    ["httpbin.foo.svc.example.internal:8000", "bar"],
    ["10.96.0.20:8000", "bar"],
  ] as const) {
    it(`${authority} from namespace ${clientNs} names httpbin.foo.svc.example.internal`, () => {
      const r = resolveAuthority(registry, authority, clientNs);
      assert.equal(r.host, "httpbin.foo.svc.example.internal");
      assert.equal(r.service?.name, "httpbin");
    });
  }

  it("a short name from another namespace resolves in the client's namespace, in the mesh's domain", () => {
    assert.deepEqual(resolveAuthority(registry, "reviews", "bar"), { host: "reviews.bar.svc.example.internal", port: 80, service: undefined });
  });

  it("the cluster.local name of the service is not the service in this mesh: it is an external host", () => {
    const r = resolveAuthority(registry, "httpbin.foo.svc.cluster.local", "bar");
    assert.equal(r.host, "httpbin.foo.svc.cluster.local");
    assert.equal(r.service, undefined);
  });

  it("short hosts of DestinationRules and VirtualServices resolve in the resource's namespace and the domain", () => {
    const [rule] = catalog.byKind.DestinationRule;
    const [vs] = catalog.byKind.VirtualService;
    assert.equal(rule.spec.fqdn, "httpbin.foo.svc.example.internal");
    assert.deepEqual(virtualServiceHosts(vs), ["httpbin.foo.svc.example.internal"]);
    assert.equal(vs.spec.http[0].route[0].destination.fqdn, "httpbin.foo.svc.example.internal");
    assert.equal(vs.spec.http[0].mirror?.fqdn, "reviews.foo.svc.example.internal");
    assert.equal(findDestinationRule(catalog.byKind.DestinationRule, "httpbin.foo.svc.example.internal", "bar", ROOT)?.name, "httpbin");
  });

  it("the names a service answers on are those of its domain", () => {
    assert.deepEqual(serviceDomains("httpbin.foo.svc.example.internal", "foo", DOMAIN), [
      "httpbin.foo.svc.example.internal",
      "httpbin.foo.svc",
      "httpbin.foo",
      "httpbin",
    ]);
    assert.deepEqual(serviceDomains("httpbin.foo.svc.cluster.local", "foo", DOMAIN), ["httpbin.foo.svc.cluster.local"]);
  });

  it("without a domain the model is upstream's default cluster.local, unchanged", () => {
    const plain = decode(HTTPBIN + SHORT_HOSTS);
    assert.equal(plain.domain, DEFAULT_DOMAIN);
    assert.equal(plain.byKind.DestinationRule[0].spec.fqdn, "httpbin.foo.svc.cluster.local");
    assert.deepEqual(virtualServiceHosts(plain.byKind.VirtualService[0]), ["httpbin.foo.svc.cluster.local"]);
    assert.equal(resolveAuthority(registryOf(plain), "httpbin", "foo").host, "httpbin.foo.svc.cluster.local");
  });

  it("a proxy's DNS domain <namespace>.svc.<domain> (disco-agent --domain) gives the mesh's domain", () => {
    assert.deepEqual(splitProxyDnsDomain("foo.svc.example.internal"), { namespace: "foo", domain: DOMAIN });
    assert.deepEqual(splitProxyDnsDomain("foo.svc.cluster.local"), { namespace: "foo", domain: DEFAULT_DOMAIN });
    assert.equal(splitProxyDnsDomain("example.internal"), undefined);
    assert.equal(splitProxyDnsDomain("foo.svc."), undefined);
  });
});

describe("mesh model: one selector matcher", () => {
  it("an empty policy selector selects everything; an empty Service selector selects nothing", () => {
    assert.equal(labelsMatch(undefined, { app: "a" }), true);
    assert.equal(labelsMatch({}, { app: "a" }), true);
    assert.equal(selectorSelects({}, { app: "a" }), false);
    assert.equal(selectorSelects({ app: "a" }, { app: "a", v: "1" }), true);
    assert.equal(labelsMatchKnown({ app: "a" }, undefined), undefined);
  });
});

describe("mesh model: DestinationRule lookup (client namespace, then service namespace, then root)", () => {
  const dr = (name: string, ns: string, host: string, extra = "") =>
    `---\napiVersion: networking.mesh.io/v1\nkind: DestinationRule\nmetadata: { name: ${name}, namespace: ${ns} }\nspec: { host: "${host}"${extra} }\n`;
  const rules = decode(
    dr("root", ROOT, "*.local") +
      dr("svc", "foo", "httpbin") +
      dr("client", "bar", "httpbin.foo.svc.cluster.local") +
      dr("hidden", "baz", "httpbin.foo.svc.cluster.local", ", exportTo: ['.']") +
      dr("subsets", "qux", "httpbin.foo.svc.cluster.local", ", subsets: [{ name: v1, labels: { version: v1 }, trafficPolicy: { tls: { mode: DISABLE } } }]"),
  ).byKind.DestinationRule;
  const host = "httpbin.foo.svc.cluster.local";
  it("the client's own namespace first", () => assert.equal(findDestinationRule(rules, host, "bar", ROOT)?.name, "client"));
  it("then the service's namespace", () => assert.equal(findDestinationRule(rules, host, "other", ROOT)?.name, "svc"));
  it("then the root namespace", () => assert.equal(findDestinationRule(rules, "reviews.x.svc.cluster.local", "other", ROOT)?.name, "root"));
  it("a rule exported only to its own namespace is not seen from elsewhere", () =>
    assert.equal(
      findDestinationRule(
        rules.filter((r) => r.name === "hidden"),
        host,
        "other",
        ROOT,
      ),
      undefined,
    ));
  it("a subset's traffic policy replaces the rule's; an unknown subset is named", () => {
    assert.equal(destinationFor(rules, host, 8000, "v1", "qux", ROOT).trafficPolicy?.tls?.mode, "DISABLE");
    assert.equal(destinationFor(rules, host, 8000, "v9", "qux", ROOT).missingSubset, "v9");
  });
  it("for one port, as upstream merges: the rule's port-level tls, then the subset's tls, then the subset's own port-level entry", () => {
    const merged = decode(
      dr(
        "m",
        "qux",
        host,
        `, trafficPolicy: { tls: { mode: DISABLE }, portLevelSettings: [{ port: { number: 9000 }, tls: { mode: SIMPLE } }] }, subsets: [` +
          `{ name: plain, labels: { v: p } }, { name: own, labels: { v: o }, trafficPolicy: { tls: { mode: MESH_MUTUAL } } }, { name: port, labels: { v: q }, trafficPolicy: { tls: { mode: MESH_MUTUAL }, portLevelSettings: [{ port: { number: 8000 } }] } }]`,
      ),
    ).byKind.DestinationRule;
    const tls = (subset: string, port: number) => tlsForPort(destinationFor(merged, host, port, subset, "qux", ROOT).trafficPolicy, port).tls?.mode;
    assert.deepEqual([tls("plain", 9000), tls("plain", 8000)], ["SIMPLE", "DISABLE"], "a subset without a policy keeps the rule's, port level included");
    assert.deepEqual([tls("own", 9000), tls("own", 8000)], ["MESH_MUTUAL", "MESH_MUTUAL"], "the subset's tls replaces the rule's, its port-level entry too");
    assert.deepEqual([tls("port", 9000), tls("port", 8000)], ["MESH_MUTUAL", undefined], "the subset's own entry for the port, without tls, leaves none");
  });
});

describe("mesh model: policy selection", () => {
  const c = decode(`
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: root-wide, namespace: mesh-system }
spec: { selector: { matchLabels: { app: httpbin } } }
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: other-ns, namespace: bar }
spec: {}
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: default, namespace: mesh-system }
spec: { mtls: { mode: STRICT } }
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: httpbin, namespace: foo }
spec: { selector: { matchLabels: { app: httpbin } }, portLevelMtls: { "80": { mode: DISABLE } } }
`);
  const w = { namespace: "foo", labels: { app: "httpbin" } };
  it("AuthorizationPolicy: a root-namespace selector matches in every namespace; another namespace's policy does not", () => {
    assert.deepEqual(
      selectingPolicies(c.byKind.AuthorizationPolicy, w, ROOT).map((p) => p.name),
      ["root-wide"],
    );
    assert.equal(policyApplies(c.byKind.AuthorizationPolicy[0], { namespace: "foo", labels: undefined }, ROOT), undefined);
  });
  it("PeerAuthentication: port level beats the mesh, only when a Service binds the port", () => {
    const bound = effectiveMtls(c.byKind.PeerAuthentication, w, ROOT, 80, true);
    assert.deepEqual([bound.mode, bound.scope, bound.policy, bound.namespaceMode], ["DISABLE", "port", "foo/httpbin", "STRICT"]);
    const unbound = effectiveMtls(c.byKind.PeerAuthentication, w, ROOT, 80, false);
    assert.deepEqual([unbound.mode, unbound.scope, unbound.ignoredPortLevel], ["STRICT", "mesh", "foo/httpbin"]);
  });
});

describe("mesh model: orchestrator Endpoints as a source of endpoints", () => {
  // A Service without selector and its hand-made Endpoints (upstream's way to put an outside database behind a Service),
  // and a selected Service whose Endpoints name their Pods.
  const DOCS = `
apiVersion: v1
kind: Service
metadata: { name: db, namespace: foo }
spec: { ports: [{ name: tcp-postgres, port: 5432 }, { name: http-admin, port: 8080 }] }
---
apiVersion: v1
kind: Endpoints
metadata: { name: db, namespace: foo }
subsets:
- addresses: [{ ip: 10.1.2.3 }, { ip: 10.1.2.4 }]
  notReadyAddresses: [{ ip: 10.1.2.9 }]
  ports: [{ name: tcp-postgres, port: 15432 }, { name: http-admin, port: 18080 }]
---
apiVersion: v1
kind: Service
metadata: { name: reviews, namespace: default }
spec: { selector: { app: reviews }, ports: [{ port: 9080 }] }
---
apiVersion: v1
kind: Endpoints
metadata: { name: reviews, namespace: default }
subsets:
- addresses: [{ ip: 10.2.0.1, targetRef: { kind: Pod, name: reviews-v2-abc } }, { ip: 10.2.0.2 }]
  ports: [{ port: 9080 }]
---
apiVersion: v1
kind: Pod
metadata: { name: reviews-v2-abc, namespace: default, labels: { app: reviews, version: v2 } }
spec: { serviceAccountName: bookinfo-reviews, containers: [{ name: reviews, ports: [{ containerPort: 9080 }] }] }
`;
  const registry = registryOf(decode(DOCS));
  const service = (fqdn: string) => registry.services.find((s) => s.fqdn === fqdn)!;

  it("ready addresses on the endpoint port named like the service port; not-ready ones left out", () => {
    const db = service("db.foo.svc.cluster.local");
    assert.deepEqual(
      endpointsOf(db, db.ports[0]).map((e) => `${e.address}:${e.port}`),
      ["10.1.2.3:15432", "10.1.2.4:15432"],
    );
    assert.deepEqual(
      endpointsOf(db, db.ports[1]).map((e) => `${e.address}:${e.port}`),
      ["10.1.2.3:18080", "10.1.2.4:18080"],
    );
  });

  it("a targetRef Pod lends its labels and service account (subsets select by them); unnamed single ports match", () => {
    const reviews = service("reviews.default.svc.cluster.local");
    const eps = endpointsOf(reviews, reviews.ports[0]);
    assert.deepEqual(
      eps.map((e) => [e.address, e.port, e.labels, e.serviceAccount]),
      [
        ["10.2.0.1", 9080, { app: "reviews", version: "v2" }, "bookinfo-reviews"],
        ["10.2.0.2", 9080, {}, undefined],
      ],
    );
  });

  it("a Service without an Endpoints document has none; a bad address names its field", () => {
    const bare = registryOf(decode(HTTPBIN)).services.find((s) => s.name === "httpbin")!;
    assert.deepEqual(endpointsOf(bare, bare.ports[0]), []);
    const bad = decode(
      "apiVersion: v1\nkind: Endpoints\nmetadata: { name: db, namespace: foo }\nsubsets: [{ addresses: [{ ip: not-an-ip }], ports: [{ port: 1 }] }]\n",
    );
    assert.match(bad.errors.map((e) => `${e.fieldPath}: ${e.message}`).join("\n"), /subsets\[0\]\.addresses\[0\]\.ip.*IPv4 or IPv6/);
  });
});

describe("mesh model: HTTPS gateway servers and their credentials", () => {
  const DOCS = `
apiVersion: v1
kind: Service
metadata: { name: mesh-ingressgateway, namespace: mesh-system }
spec: { selector: { mesh: ingressgateway }, ports: [{ name: https, port: 443, targetPort: 8443 }] }
---
apiVersion: v1
kind: Secret
metadata: { name: httpbin-credential, namespace: mesh-system }
type: kubernetes.io/tls
data: { tls.crt: ${Buffer.from("CERT").toString("base64")}, tls.key: ${Buffer.from("KEY").toString("base64")} }
---
apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: { name: mygateway, namespace: mesh-system }
spec:
  selector: { mesh: ingressgateway }
  servers:
  - { port: { number: 443, name: https, protocol: HTTPS }, tls: { mode: SIMPLE, credentialName: httpbin-credential }, hosts: [httpbin.example.com] }
  - { port: { number: 443, name: https-other, protocol: HTTPS }, tls: { mode: SIMPLE, credentialName: missing }, hosts: ["*.example.org"] }
`;
  const catalog = decode(DOCS);
  const registry = registryOf(catalog);
  const w = { namespace: "mesh-system", labels: { mesh: "ingressgateway" } };
  const servers = gatewayTlsServers(catalog.byKind.Gateway, catalog.byKind.Secret, w, 8443, (p) =>
    containerPortForServicePort(registry, { ...w, ports: [] }, p),
  );

  it("a SIMPLE server on the Service port translated to the container port gets its Secret's certificate and key", () => {
    assert.deepEqual(
      servers.map((s) => [s.hosts, s.cert, s.key, s.problem]),
      [
        [["httpbin.example.com"], "CERT", "KEY", undefined],
        [["*.example.org"], undefined, undefined, "no Secret mesh-system/missing"],
      ],
    );
    assert.deepEqual(
      gatewayTlsServers(catalog.byKind.Gateway, catalog.byKind.Secret, w, 8080, () => undefined),
      [],
    );
  });

  it("SNI picks the server; a name none covers gets none; no SNI gets the first usable one", () => {
    assert.equal(serverForSni(servers, "httpbin.example.com")?.credentialName, "httpbin-credential");
    assert.equal(serverForSni(servers, "other.example.com"), undefined);
    assert.equal(serverForSni(servers, undefined)?.credentialName, "httpbin-credential");
  });

  it("a kubernetes.io/tls Secret without tls.key is refused naming the field", () => {
    const bad = decode("apiVersion: v1\nkind: Secret\nmetadata: { name: s, namespace: x }\ntype: kubernetes.io/tls\nstringData: { tls.crt: c }\n");
    assert.match(bad.errors.map((e) => `${e.fieldPath}: ${e.message}`).join("\n"), /data\.tls\.key: .*tls\.crt and tls\.key/);
  });
});
