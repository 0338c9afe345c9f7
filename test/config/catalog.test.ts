import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { findResource } from "../../host/config/catalog.ts";
import { parseSourceText } from "../../host/config/sources.ts";
import { FILE, decode } from "./table.ts";

const DEMO = join(import.meta.dirname, "..", "..", "host", "demo");

describe("catalog: decodeDocuments", () => {
  it("decodes the demo's hub client and hub documents (delegating to the existing decoders)", () => {
    const text = `${readFileSync(join(DEMO, "petstore.yaml"), "utf8")}\n---\n${readFileSync(join(DEMO, "hub-rules.yaml"), "utf8")}`;
    const c = decode(text);
    assert.deepEqual(c.errors, []);
    const kinds = c.resources.map((r) => r.kind);
    for (const k of ["HttpClientConfig", "HTTPAPISpec", "HTTPAPISpecBinding", "QuotaSpec", "QuotaSpecBinding", "HubRule", "HubQuota"])
      assert.ok(kinds.includes(k as never), k);
    const quota = c.byKind.HubQuota[0];
    assert.equal(quota.spec.maxAmount, 5);
    assert.equal(quota.id, "HubQuota mesh-system/requestcount");
  });

  it("collects every error of a document and of every document, in order", () => {
    const c = decode(`
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: a, namespace: foo }
spec:
  action: REJECT
  rules:
    - from: [{ source: { ipBlocks: ["1.2.3.4/40"] } }]
      to: [{ operation: { ports: ["0"] } }]
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: b, namespace: foo }
spec: { mtls: { mode: strict } }
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: ok, namespace: foo }
spec: { mtls: { mode: STRICT } }
`);
    assert.deepEqual(
      c.errors.map((p) => [p.resource, p.fieldPath]),
      [
        ["AuthorizationPolicy foo/a", "spec.action"],
        ["AuthorizationPolicy foo/a", "spec.rules[0].from[0].source.ipBlocks[0]"],
        ["AuthorizationPolicy foo/a", "spec.rules[0].to[0].operation.ports[0]"],
        ["PeerAuthentication foo/b", "spec.mtls.mode"],
      ],
    );
    assert.equal(c.invalidDocuments, 2);
    assert.equal(c.documents, 3);
    assert.deepEqual(
      c.resources.map((r) => r.id),
      ["PeerAuthentication foo/ok"],
    );
  });

  it("warns about unknown kinds and unknown fields without refusing the document", () => {
    const c = decode(`
apiVersion: example.com/v1
kind: Widget
metadata: { name: w, namespace: foo }
---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: d, namespace: foo }
spec: { host: a.foo.svc.cluster.local, trafficPolicy: { tls: { mode: DISABLE } } }
status: {}
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpec
metadata: { name: q, namespace: foo }
spec: { rules: [], rulez: [] }
`);
    assert.deepEqual(c.errors, []);
    assert.deepEqual(
      c.warnings.map((w) => [w.resource, w.fieldPath, w.message.split(" (")[0]]),
      [
        ["Widget foo/w", "kind", 'unknown kind "Widget"'],
        ["DestinationRule foo/d", "status", "unknown field"],
        ["QuotaSpec foo/q", "spec.rulez", "unknown field"],
      ],
    );
    assert.equal(c.byKind.DestinationRule.length, 1);
  });

  it("a kind of the same name in another API group (the Gateway API's Gateway) is not the mesh's: an unknown kind", () => {
    const c = decode(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: httpbin-gateway, namespace: foo }
spec: { gatewayClassName: mesh, listeners: [{ name: http, port: 80, protocol: HTTP }] }
`);
    assert.deepEqual(c.errors, []);
    assert.deepEqual(c.byKind.Gateway, []);
    assert.match(c.warnings[0].message, /^unknown kind "Gateway" \(apiVersion gateway.networking.k8s.io\/v1\)/);
  });

  it("refuses a known kind under the wrong apiVersion", () => {
    const c = decode(`
apiVersion: security.istio.io/v1beta1
kind: PeerAuthentication
metadata: { name: a, namespace: foo }
spec: {}
`);
    assert.equal(c.errors[0].fieldPath, "apiVersion");
    assert.equal(
      c.errors[0].message,
      'expected one of security.mesh.io/v1beta1, security.mesh.io/v1 for kind PeerAuthentication, got "security.istio.io/v1beta1"',
    );
  });

  it("accepts every version upstream serves (networking v1alpha3, v1beta1, v1; security v1beta1, v1) with one schema", () => {
    const docs = ["v1alpha3", "v1beta1", "v1"].map(
      (v) =>
        `apiVersion: networking.mesh.io/${v}\nkind: DestinationRule\nmetadata: { name: d-${v}, namespace: foo }\nspec: { host: reviews, subsets: [{ name: v1, labels: { version: v1 } }] }\n`,
    );
    docs.push(
      ...["v1beta1", "v1"].map(
        (v) => `apiVersion: security.mesh.io/${v}\nkind: PeerAuthentication\nmetadata: { name: p-${v}, namespace: foo }\nspec: { mtls: { mode: STRICT } }\n`,
      ),
    );
    const c = decode(docs.join("---\n"));
    assert.deepEqual(c.problems, []);
    assert.deepEqual(
      c.resources.map((r) => r.apiVersion),
      ["networking.mesh.io/v1alpha3", "networking.mesh.io/v1beta1", "networking.mesh.io/v1", "security.mesh.io/v1beta1", "security.mesh.io/v1"],
    );
    assert.ok(c.byKind.DestinationRule.every((d) => d.spec.subsets[0].labels.version === "v1"));
  });

  it("names the served versions when a networking version is unknown", () => {
    const c = decode(`apiVersion: networking.mesh.io/v2\nkind: VirtualService\nmetadata: { name: v, namespace: foo }\nspec: { hosts: [a] }\n`);
    assert.equal(c.errors[0].fieldPath, "apiVersion");
    assert.equal(
      c.errors[0].message,
      'expected one of networking.mesh.io/v1alpha3, networking.mesh.io/v1beta1, networking.mesh.io/v1 for kind VirtualService, got "networking.mesh.io/v2"',
    );
  });

  it("a second definition of the same kind/namespace/name replaces the first, with a warning naming both", () => {
    const v = (mode: string) =>
      `apiVersion: security.mesh.io/v1\nkind: PeerAuthentication\nmetadata: { name: default, namespace: foo }\nspec: { mtls: { mode: ${mode} } }\n`;
    const c = decode(`${v("STRICT")}---\n${v("PERMISSIVE")}`);
    assert.deepEqual(c.errors, []);
    assert.equal(c.byKind.PeerAuthentication.length, 1);
    assert.equal(c.byKind.PeerAuthentication[0].spec.mtlsMode, "PERMISSIVE");
    assert.equal(c.warnings.length, 1);
    assert.equal(c.warnings[0].fieldPath, "metadata.name");
    assert.match(
      c.warnings[0].message,
      /PeerAuthentication foo\/default is defined again: this definition \(table.yaml, document 2\) replaces the one in table.yaml, document 1/,
    );
  });

  it("names namespaced resources by the default namespace (-n) and Namespaces by name alone", () => {
    const c = decode(`apiVersion: v1\nkind: Namespace\nmetadata: { name: foo }\n---\napiVersion: v1\nkind: Service\nmetadata: { name: s }\n`, {
      defaultNamespace: "bar",
    });
    assert.deepEqual(
      c.resources.map((r) => [r.id, r.namespace]),
      [
        ["Namespace foo", ""],
        ["Service bar/s", "bar"],
      ],
    );
    assert.ok(findResource(c, "Service", "bar", "s"));
    assert.equal(findResource(c, "Service", "default", "s"), undefined);
  });

  it("returns deeply frozen values with their origin", () => {
    const c = decode(`
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: a, namespace: foo, labels: { team: x } }
spec: { rules: [{ to: [{ operation: { paths: ["/a"] } }] }] }
`);
    const r = c.byKind.AuthorizationPolicy[0];
    assert.deepEqual(r.origin, { file: FILE, index: 0 });
    assert.deepEqual(r.labels, { team: "x" });
    for (const v of [c, c.resources, r, r.spec, r.spec.rules, r.spec.rules[0].to[0], r.spec.rules[0].to[0].paths, r.labels, r.origin])
      assert.ok(Object.isFrozen(v));
    assert.throws(() => (r.spec.rules[0].to[0].paths as string[]).push("/b"), TypeError);
  });

  it("refuses a uriTemplate and a regex the filter refuses", () => {
    const c = decode(`
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: { name: s, namespace: foo }
spec: { patterns: [{ uriTemplate: "/a/{b" }] }
---
apiVersion: config.mesh.io/v1alpha2
kind: HubRule
metadata: { name: r, namespace: foo }
spec: { match: [{ clause: { request.path: { regex: "(a)\\\\1" } } }], actions: [{ deny: {} }] }
`);
    assert.deepEqual(
      c.errors.map((e) => [e.resource, e.fieldPath]),
      [
        ["HTTPAPISpec foo/s", "spec.patterns[0].uriTemplate"],
        ["HubRule foo/r", "spec.match[0].clause[request.path].regex"],
      ],
    );
  });

  it("decodes TcpClientConfig (the hub client's decoder) and warns under the spec's 1s report interval floor", () => {
    const c = decode(`
apiVersion: config.mesh.io/v1alpha2
kind: TcpClientConfig
metadata: { name: tcp, namespace: foo }
spec: { reportInterval: 100ms, disableCheckCalls: true }
`);
    assert.deepEqual(c.errors, []);
    assert.equal(c.byKind.TcpClientConfig[0].spec.reportIntervalMs, 100);
    assert.equal(c.warnings[0].fieldPath, "spec.reportInterval");
    assert.match(c.warnings[0].message, /below the 1s minimum/);
  });

  it("checks references only when asked (-x)", () => {
    const text = `
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpecBinding
metadata: { name: b, namespace: foo }
spec: { services: [{ name: s }], quotaSpecs: [{ name: missing }, { name: q, namespace: bar }] }
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpec
metadata: { name: q, namespace: bar }
spec: { rules: [{ quotas: [{ quota: requestcount }] }] }
---
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: { name: v, namespace: foo }
spec: { hosts: ["*"], gateways: [gw, mesh-system/ingress], http: [{ route: [{ destination: { host: s } }] }] }
---
apiVersion: networking.mesh.io/v1alpha3
kind: Gateway
metadata: { name: ingress, namespace: mesh-system }
spec: { servers: [{ port: { number: 80, name: http, protocol: HTTP }, hosts: ["*"] }] }
`;
    assert.deepEqual(decode(text).errors, []);
    const c = decode(text, { referential: true });
    assert.deepEqual(
      c.errors.map((e) => [e.resource, e.fieldPath, e.message]),
      [
        ["QuotaSpecBinding foo/b", "spec.quotaSpecs[0]", "expected a reference to a QuotaSpec in the given files, got foo/missing, which is not defined"],
        ["VirtualService foo/v", "spec.gateways[0]", "expected a reference to a Gateway in the given files, got foo/gw, which is not defined"],
      ],
    );
    assert.equal(c.resources.length, 4, "referential problems do not drop resources");
  });
});

describe("sources: tolerant reading", () => {
  it("reports a bad document and keeps reading the file", () => {
    const { documents, problems } = parseSourceText(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nkind: Namespace\nmetadata: {name: b}\n---\n[1, {a: ]\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n",
      "x.yaml",
    );
    assert.deepEqual(
      documents.map((d) => d.name),
      ["a", "c"],
    );
    assert.deepEqual(
      problems.map((p) => [p.resource, p.fieldPath]),
      [
        ["Namespace document 2", "apiVersion"],
        ["YAML document 3", "(document)"],
      ],
    );
  });

  it("flattens JSON lists and kind: List", () => {
    const { documents } = parseSourceText(
      JSON.stringify({
        kind: "List",
        items: [
          { apiVersion: "v1", kind: "Namespace", metadata: { name: "a" } },
          { apiVersion: "v1", kind: "Namespace", metadata: { name: "b" } },
        ],
      }),
      "x.json",
    );
    assert.deepEqual(
      documents.map((d) => [d.name, d.index]),
      [
        ["a", 0],
        ["b", 1],
      ],
    );
  });
});
