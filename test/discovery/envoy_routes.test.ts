import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type protobuf from "protobufjs";
import { filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { meshSnapshot, resourcesFor } from "../../host/discovery/mesh_snapshot.ts";
import { ROUTE } from "../../host/discovery/type_urls.ts";
import { DEFAULT_DOMAIN } from "../../host/mesh/hosts.ts";
import { loadDocuments } from "../../host/config/config_dir.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";
import { decodeAnyStrict, envoyRoot } from "../support/envoy_protos.ts";

// VirtualService routes as an Envoy sidecar is served them: each http route
// kind becomes the Envoy route upstream generates, the result decodes with
// Envoy's own protos, and matches that cannot apply to the proxy are left out.

const MESH = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80, name: http}], selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {ports: [{port: 80, name: http}], selector: {app: api}}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: web, namespace: shop}
spec:
  hosts: [web]
  http:
  - match: [{uri: {prefix: /old}}]
    redirect: {uri: /new, redirectCode: 308}
  - match: [{uri: {exact: /health}, method: {exact: GET}}]
    directResponse: {status: 204}
  - match: [{uri: {regex: "/v[0-9]+/.*"}, ignoreUriCase: true, queryParams: {debug: {exact: "1"}}, withoutHeaders: {x-skip: {exact: "yes"}}}]
    rewrite: {uri: /, authority: api.shop}
    route: [{destination: {host: api}}]
    mirror: {host: api, subset: shadow}
    mirrorPercentage: {value: 10}
    headers: {request: {set: {x-from: web}, remove: [x-debug]}}
  - match: [{sourceLabels: {app: frontend}}, {port: 8080}, {uri: {prefix: /all}}]
    route: [{destination: {host: web}}]
`;

describe("VirtualService routes served to Envoy", () => {
  let root: protobuf.Root;
  let routes: Array<Record<string, any>>;

  before(() => {
    root = envoyRoot();
    const loaded = loadDocuments(parseDocuments(MESH, "mesh.yaml"), ["mesh.yaml"], filterChecks(FilterModule.load()), DEFAULT_DOMAIN);
    const snapshot = meshSnapshot(1, loaded, "mesh-system");
    const set = resourcesFor(snapshot, {
      id: "sidecar~10.0.0.9~client-1.shop~shop.svc.cluster.local",
      cluster: "",
      metadata: { LABELS: { app: "other" } },
      userAgentName: "envoy",
    });
    const config = decodeAnyStrict(root, set.get(ROUTE)!.get("80")!.any).object;
    routes = config.virtual_hosts.find((v: any) => v.name === "web.shop.svc.cluster.local:80").routes;
  });

  it("a redirect and a direct response become Envoy's redirect and direct_response", () => {
    assert.deepEqual(routes[0].match, { prefix: "/old" });
    assert.deepEqual(routes[0].redirect, { path_redirect: "/new", response_code: "PERMANENT_REDIRECT" });
    assert.deepEqual(routes[1].match, { path: "/health", headers: [{ name: ":method", string_match: { exact: "GET" } }] });
    assert.deepEqual(routes[1].direct_response, { status: 204 });
  });

  it("a regex match with query parameters and an absent header; rewrite, mirror and header operations", () => {
    const r = routes[2];
    assert.deepEqual(r.match.safe_regex, { regex: "/v[0-9]+/.*" });
    assert.equal(r.match.case_sensitive, false);
    assert.deepEqual(r.match.query_parameters, [{ name: "debug", string_match: { exact: "1" } }]);
    assert.deepEqual(r.match.headers, [{ name: "x-skip", string_match: { exact: "yes" }, invert_match: true }]);
    assert.equal(r.route.cluster, "outbound|80||api.shop.svc.cluster.local");
    assert.equal(r.route.prefix_rewrite, "/");
    assert.equal(r.route.host_rewrite_literal, "api.shop");
    assert.deepEqual(r.route.request_mirror_policies, [
      { cluster: "outbound|80|shadow|api.shop.svc.cluster.local", runtime_fraction: { default_value: { numerator: 10 } } },
    ]);
    assert.deepEqual(r.request_headers_to_add, [{ header: { key: "x-from", value: "web" }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" }]);
    assert.deepEqual(r.request_headers_to_remove, ["x-debug"]);
  });

  it("leaves out matches that cannot apply to this proxy: other source labels, another port", () => {
    assert.equal(routes.length, 4);
    assert.deepEqual(routes[3].match, { prefix: "/all" });
  });

  it("a host without a VirtualService goes to its own cluster; unknown hosts through allow_any", () => {
    const loaded = loadDocuments(parseDocuments(MESH, "mesh.yaml"), ["mesh.yaml"], filterChecks(FilterModule.load()), DEFAULT_DOMAIN);
    const set = resourcesFor(meshSnapshot(1, loaded, "mesh-system"), {
      id: "sidecar~10.0.0.9~client-1.shop~shop.svc.cluster.local",
      cluster: "",
      metadata: {},
      userAgentName: "envoy",
    });
    const config = decodeAnyStrict(root, set.get(ROUTE)!.get("80")!.any).object;
    const api = config.virtual_hosts.find((v: any) => v.name === "api.shop.svc.cluster.local:80");
    assert.deepEqual(api.domains, [
      "api.shop.svc.cluster.local",
      "api.shop.svc.cluster.local:80",
      "api.shop.svc",
      "api.shop.svc:80",
      "api.shop",
      "api.shop:80",
      "api",
      "api:80",
    ]);
    assert.equal(api.routes[0].route.cluster, "outbound|80||api.shop.svc.cluster.local");
    assert.equal(config.virtual_hosts.at(-1).name, "allow_any");
    assert.deepEqual(config.virtual_hosts.at(-1).domains, ["*"]);
  });
});
