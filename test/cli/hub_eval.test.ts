import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { T0, configFile, hubEval } from "./hub_eval_support.ts";

const SPEC = `
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: { name: books, namespace: shop }
spec:
  attributes: { attributes: { api.service: { stringValue: books }, api.version: { stringValue: v2 } } }
  patterns:
    - { httpMethod: GET, uriTemplate: "/shelves/{shelf}/books/{book}", attributes: { attributes: { api.operation: { stringValue: getBook } } } }
    - { httpMethod: GET, uriTemplate: "/shelves/*/books/featured", attributes: { attributes: { api.operation: { stringValue: featured } } } }
    - { httpMethod: GET, uriTemplate: "/shelves/{shelf}/books/{rest=**}", attributes: { attributes: { api.operation: { stringValue: deep } } } }
    - { httpMethod: "*", uriTemplate: "/admin/{op}:run", attributes: { attributes: { api.operation: { stringValue: adminRun } } } }
    - { uriTemplate: "/any-method", attributes: { attributes: { api.operation: { stringValue: anyMethod } } } }
    - { httpMethod: GET, regex: "/search\\\\?q=[a-z]+", attributes: { attributes: { api.operation: { stringValue: search } } } }
---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpecBinding
metadata: { name: books, namespace: shop }
spec:
  services: [{ name: books }]
  apiSpecs: [{ name: books }]
`;

const SERVICE = "books.shop.svc.cluster.local";
const get = (path: string, extra: object = {}) => ({ method: "GET", path, destinationService: SERVICE, time: T0, ...extra });

describe("meshctl x hub-eval: HTTPAPISpec matching", async () => {
  const file = configFile(SPEC);
  const rows: Array<[string, object, string | null, string | null, Record<string, string>]> = [
    ["variables bind whole segments", get("/shelves/s1/books/b2"), "/shelves/{shelf}/books/{book}", "getBook", { shelf: "s1", book: "b2" }],
    ["a literal beats a variable at the first divergence", get("/shelves/s1/books/featured"), "/shelves/*/books/featured", "featured", {}],
    ["** takes the rest of the path", get("/shelves/s1/books/a/b/c"), "/shelves/{shelf}/books/{rest=**}", "deep", { shelf: "s1", rest: "a/b/c" }],
    ["the query string is ignored by templates", get("/shelves/s1/books/b2?x=1"), "/shelves/{shelf}/books/{book}", "getBook", { shelf: "s1", book: "b2" }],
    ["a single-segment binding is percent-decoded", get("/shelves/a%2Fb/books/c"), "/shelves/{shelf}/books/{book}", "getBook", { shelf: "a/b", book: "c" }],
    [
      "a multi-segment binding keeps reserved escapes",
      get("/shelves/s/books/x%2Fy/%7Ez"),
      "/shelves/{shelf}/books/{rest=**}",
      "deep",
      { shelf: "s", rest: "x%2Fy/~z" },
    ],
    ["verbs match", { ...get("/admin/reindex:run"), method: "POST" }, "/admin/{op}:run", "adminRun", { op: "reindex" }],
    ["a pattern without httpMethod matches any method", { ...get("/any-method"), method: "PATCH" }, "/any-method", "anyMethod", {}],
    ["regex patterns see the query string", get("/search?q=abc"), "/search\\?q=[a-z]+", "search", {}],
    ["regex patterns must match the whole path", get("/search?q=abc&x=1"), null, null, {}],
    ["a method that fits no pattern matches nothing", { ...get("/shelves/s1/books/b2"), method: "DELETE" }, null, null, {}],
    ["templates must consume the whole path", get("/shelves/s1"), null, null, {}],
  ];
  const run = await hubEval(
    [file],
    rows.map((r) => r[1]),
  );
  it("exits 0", async () => assert.equal(run.status, 0, run.stderr));
  rows.forEach(([name, , pattern, operation, bindings], i) => {
    it(name, () => {
      const out = run.lines[i];
      assert.equal(out.apiSpec.matched, pattern !== null);
      assert.equal(out.apiSpec.pattern, pattern);
      assert.deepEqual(out.apiSpec.bindings, bindings);
      if (operation === null) {
        // Spec-level attributes only when a pattern matched (the spec's rule).
        assert.equal(out.attributes["api.operation"], undefined);
        assert.equal(out.attributes["api.service"], undefined);
      } else {
        assert.deepEqual(out.attributes["api.operation"], { stringValue: operation });
        assert.deepEqual(out.attributes["api.service"], { stringValue: "books" });
        assert.deepEqual(out.attributes["api.version"], { stringValue: "v2" });
      }
    });
  });
});

describe("meshctl x hub-eval: API keys", async () => {
  const defaults = configFile(SPEC);
  const configured = configFile(SPEC.replace("  patterns:\n", "  apiKeys: [{ header: X-Custom-Key }, { query: token }]\n  patterns:\n"));
  it("uses query key, then query api_key, then header x-api-key by default", async () => {
    const run = await hubEval(
      [defaults],
      [
        get("/x?api_key=b&key=a", { headers: { "x-api-key": "c" } }),
        get("/x?api_key=b", { headers: { "x-api-key": "c" } }),
        get("/x", { headers: { "x-api-key": "c" } }),
        get("/x?key=&api_key=b"),
        get("/x?key=a%20b"),
        get("/x"),
      ],
    );
    assert.deepEqual(
      run.lines.map((l) => l.apiKey),
      ["a", "b", "c", "", "a%20b", null],
    );
    assert.deepEqual(run.lines[0].attributes["request.api_key"], { stringValue: "a" });
    assert.equal(run.lines[5].attributes["request.api_key"], undefined);
  });
  it("configured locations replace the defaults and apply in list order", async () => {
    const run = await hubEval(
      [configured],
      [get("/x?token=t&key=k", { headers: { "x-custom-key": "h" } }), get("/x?token=t&key=k"), get("/x?key=k", { headers: { "x-api-key": "c" } })],
    );
    assert.deepEqual(
      run.lines.map((l) => l.apiKey),
      ["h", "t", null],
    );
  });
  it("services without a ServiceConfig get no key, API match or quota", async () => {
    const run = await hubEval([defaults], [{ ...get("/shelves/a/books/b?key=k"), destinationService: "other.shop.svc.cluster.local" }]);
    assert.equal(run.lines[0].apiKey, null);
    assert.equal(run.lines[0].apiSpec.matched, false);
    assert.deepEqual(run.lines[0].quotas, []);
  });
});

describe("meshctl x hub-eval: quotas", async () => {
  const file = configFile(`${SPEC}
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpec
metadata: { name: limits, namespace: shop }
spec:
  rules:
    - quotas: [{ quota: all, charge: 1 }]
    - match:
        - clause: { request.method: { exact: POST }, request.path: { prefix: /shelves/ } }
        - clause: { "request.headers[x-user]": { regex: "vip-[0-9]+" } }
      quotas: [{ quota: heavy, charge: 3 }, { quota: all, charge: 2 }]
    - match: [{ clause: { source.namespace: { exact: batch } } }]
      quotas: [{ quota: batch }]
---
apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpecBinding
metadata: { name: limits, namespace: shop }
spec:
  services: [{ service: ${SERVICE} }]
  quotaSpecs: [{ name: limits, namespace: shop }]
`);
  it("charges every matching rule's quotas in rule order, then quota order", async () => {
    const run = await hubEval(
      [file],
      [
        get("/a"),
        { ...get("/shelves/1"), method: "POST" },
        { ...get("/other"), method: "POST" },
        get("/a", { headers: { "x-user": "vip-42" } }),
        get("/a", { headers: { "x-user": "vip-42x" } }),
        get("/a", { connection: { mtls: true, peerPrincipal: "spiffe://cluster.local/ns/batch/sa/job" } }),
      ],
    );
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(
      run.lines.map((l) => l.quotas),
      [
        [{ quota: "all", charge: 1 }],
        [
          { quota: "all", charge: 1 },
          { quota: "heavy", charge: 3 },
          { quota: "all", charge: 2 },
        ],
        [{ quota: "all", charge: 1 }],
        [
          { quota: "all", charge: 1 },
          { quota: "heavy", charge: 3 },
          { quota: "all", charge: 2 },
        ],
        [{ quota: "all", charge: 1 }],
        [
          { quota: "all", charge: 1 },
          { quota: "batch", charge: 1 },
        ],
      ],
    );
  });
});
