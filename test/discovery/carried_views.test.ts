// What a configuration version shares with the one before is carried over as
// the same objects (host/discovery/resource_set.ts carryUnchanged), so a push
// reads a proxy's unchanged subscriptions as unchanged at once: here, that
// what is carried is exactly what did not change, and that proxies with
// different views still get their own resources.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { type MeshSnapshot, meshSnapshot, resourcesFor } from "../../host/discovery/mesh_snapshot.ts";
import { carryUnchanged, type Resource, sameResources } from "../../host/discovery/resource_set.ts";
import { VersionMemo } from "../../host/discovery/encoded_json.ts";
import { proxylessResources } from "../../host/discovery/proxyless.ts";
import { CLUSTER, ENDPOINT, LISTENER } from "../../host/discovery/type_urls.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";

const checks = filterChecks(FilterModule.load());
const load = (text: string) => loadDocuments(parseDocuments(text, "mesh.yaml"), ["mesh.yaml"], checks, DEFAULT_DOMAIN);
const mesh = (dbAddress: string, denyPath: string) => `apiVersion: v1
kind: Service
metadata: {name: app, namespace: shop}
spec: {ports: [{port: 80, name: http, targetPort: 8080}], selector: {app: app}}
---
apiVersion: v1
kind: Pod
metadata: {name: app-1, namespace: shop, labels: {app: app}}
spec: {containers: [{name: app, ports: [{containerPort: 8080}]}]}
status: {podIP: 10.1.0.1}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: shop}
spec: {hosts: [db.shop.svc.cluster.local], ports: [{number: 80, name: http, protocol: HTTP}], resolution: STATIC, location: MESH_INTERNAL, endpoints: [{address: ${dbAddress}}]}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: web, namespace: shop}
spec: {hosts: [web.shop.svc.cluster.local], ports: [{number: 80, name: http, protocol: HTTP}], resolution: STATIC, location: MESH_INTERNAL, endpoints: [{address: 10.0.0.2}]}
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: shop}
spec: {action: DENY, rules: [{to: [{operation: {paths: ["${denyPath}"]}}]}]}
`;
/** A sidecar; the one at 10.1.0.1 is pod app-1's, whose inbound HTTP chain the policy is in. */
const envoy = (ip: string, namespace = "shop") => ({
  id: `sidecar~${ip}~${ip === "10.1.0.1" ? "app-1" : `client-${ip}`}.${namespace}~${namespace}.svc.cluster.local`,
  cluster: "",
  metadata: {},
  userAgentName: "envoy",
});
const DB = "outbound|80||db.shop.svc.cluster.local";
const WEB = "outbound|80||web.shop.svc.cluster.local";
const text = (r: Resource) => Buffer.from(r.any.value).toString("latin1");
const versions = (dbAddress: string, denyPath: string, previous?: MeshSnapshot) =>
  meshSnapshot((previous?.version ?? 0) + 1, load(mesh(dbAddress, denyPath)), "mesh-system", previous ? { previous } : {});

describe("resources carried from one configuration version to the next", () => {
  it("an endpoint move carries every map but the load assignments; the moved one is new, the other the same bytes", () => {
    const a = envoy("10.1.0.1");
    const v1 = versions("10.0.0.1", "/admin");
    const before = resourcesFor(v1, a);
    const v2 = versions("10.0.0.9", "/admin", v1);
    const after = resourcesFor(v2, a);
    assert.equal(after.get(LISTENER), before.get(LISTENER));
    assert.equal(after.get(CLUSTER), before.get(CLUSTER));
    assert.notEqual(after.get(ENDPOINT), before.get(ENDPOINT));
    assert.ok(text(after.get(ENDPOINT)!.get(DB)!).includes("10.0.0.9"));
    assert.ok(!text(after.get(ENDPOINT)!.get(DB)!).includes("10.0.0.1"));
    assert.equal(text(after.get(ENDPOINT)!.get(WEB)!), text(before.get(ENDPOINT)!.get(WEB)!));
  });

  it("a policy change is not carried: the listeners are new, with the new rule, and the next version carries them in turn", () => {
    const a = envoy("10.1.0.1");
    const v1 = versions("10.0.0.1", "/admin");
    const before = resourcesFor(v1, a).get(LISTENER)!;
    const v2 = versions("10.0.0.1", "/secret", v1);
    const changed = resourcesFor(v2, a).get(LISTENER)!;
    assert.notEqual(changed, before);
    const inbound = (m: ReadonlyMap<string, Resource>) => [...m.values()].map(text).join("");
    assert.ok(inbound(changed).includes("/secret") && !inbound(changed).includes("/admin"));
    assert.ok(inbound(before).includes("/admin"));
    const v3 = versions("10.0.0.5", "/secret", v2);
    assert.equal(resourcesFor(v3, a).get(LISTENER), changed);
  });

  it("two pods keep listeners of their own (each its loop guard), version after version; another namespace's view its own", () => {
    const v1 = versions("10.0.0.1", "/admin");
    const [a, b, other] = [envoy("10.1.0.1"), envoy("10.1.0.2"), envoy("10.1.0.3", "store")];
    const first = [a, b, other].map((n) => resourcesFor(v1, n).get(LISTENER)!);
    assert.notEqual(first[0], first[1]);
    assert.ok(!sameResources(first[0], first[1]));
    assert.ok(!sameResources(first[0], first[2]));
    const v2 = versions("10.0.0.9", "/admin", v1);
    const second = [a, b, other].map((n) => resourcesFor(v2, n).get(LISTENER)!);
    second.forEach((m, i) => assert.equal(m, first[i]));
    assert.notEqual(resourcesFor(v2, a), resourcesFor(v2, b));
  });

  it("proxyless resources are kept from the version before only when made from the same inputs", () => {
    const svc = (address: string, port = 80) => ({ host: "db.shop.svc.cluster.local", port, protocol: "http", endpoints: [{ address, port: 8080 }] });
    const v1 = new VersionMemo<Resource>();
    const first = proxylessResources([svc("10.0.0.1")], v1);
    const v2 = new VersionMemo<Resource>(v1);
    const moved = proxylessResources([svc("10.0.0.9")], v2);
    assert.equal(moved.get(CLUSTER)!.get(DB), first.get(CLUSTER)!.get(DB));
    assert.notEqual(moved.get(ENDPOINT)!.get(DB), first.get(ENDPOINT)!.get(DB));
    assert.ok(text(moved.get(ENDPOINT)!.get(DB)!).includes("10.0.0.9"));
    // Back to the first address: the version before (v2) did not make it, so it is made again, with that address.
    const back = proxylessResources([svc("10.0.0.1")], new VersionMemo<Resource>(v2));
    assert.ok(text(back.get(ENDPOINT)!.get(DB)!).includes("10.0.0.1"));
    assert.deepEqual(back.get(ENDPOINT)!.get(DB)!.any, first.get(ENDPOINT)!.get(DB)!.any);
    // Another port is another listener, route and cluster.
    const other = proxylessResources([svc("10.0.0.1", 81)], new VersionMemo<Resource>(v1));
    assert.deepEqual([...other.get(CLUSTER)!.keys()], ["outbound|81||db.shop.svc.cluster.local"]);
  });

  it("carryUnchanged compares names and bytes, not objects", () => {
    const r = (name: string, bytes: number[]) => ({ name, any: { type_url: "t", value: new Uint8Array(bytes) } });
    const old = new Map([
      ["x", new Map([["a", r("a", [1, 2])]])],
      ["y", new Map([["b", r("b", [3])]])],
    ]);
    const same = new Map([
      ["x", new Map([["a", r("a", [1, 2])]])],
      ["y", new Map([["b", r("b", [3])]])],
    ]);
    assert.equal(carryUnchanged(same, old), old);
    const next = new Map([
      ["x", new Map([["a", r("a", [1, 2])]])],
      ["y", new Map([["b", r("b", [4])]])],
    ]);
    const carried = carryUnchanged(next, old);
    assert.equal(carried.get("x"), old.get("x"));
    assert.notEqual(carried.get("y"), old.get("y"));
    assert.deepEqual([...carried.get("y")!.get("b")!.any.value], [4]);
    const renamed = new Map([["x", new Map([["c", r("c", [1, 2])]])]]);
    assert.notEqual(carryUnchanged(renamed, old).get("x"), old.get("x"));
  });
});
