import assert from "node:assert/strict";
import { basename } from "node:path";
import { describe, it } from "node:test";
import { T0, configFile, hubEval } from "./hub_eval_support.ts";

// Upstream fidelity of the hub client (issue 16): cases from upstream's own
// behaviour, through the real `meshctl x hub-eval`.

const binding = (spec: string) => `
---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpecBinding
metadata: { name: ${spec}, namespace: shop }
spec:
  services: [{ name: books }]
  apiSpecs: [{ name: ${spec} }]
`;
const SERVICE = "books.shop.svc.cluster.local";
const get = (path: string, extra: object = {}) => ({ method: "GET", path, destinationService: SERVICE, time: T0, ...extra });

describe("meshctl x hub-eval: a duplicate (method, template shape) is accepted, the first registration wins", async () => {
  const file = configFile(`
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: { name: books, namespace: shop }
spec:
  patterns:
    - { httpMethod: GET, uriTemplate: "/shelves/{shelf}", attributes: { attributes: { api.operation: { stringValue: first } } } }
    - { httpMethod: GET, uriTemplate: "/shelves/{name}", attributes: { attributes: { api.operation: { stringValue: second } } } }
    - { httpMethod: POST, uriTemplate: "/shelves/{name}", attributes: { attributes: { api.operation: { stringValue: post } } } }
${binding("books")}`);
  const run = await hubEval([file], [get("/shelves/s1"), { ...get("/shelves/s1"), method: "POST" }]);

  it("exits 0 and warns, naming file, resource, field path and the rule", async () => {
    assert.equal(run.status, 0, run.stderr);
    const warnings = run.stderr.split("\n").filter((l) => l.startsWith("warning: "));
    assert.equal(warnings.length, 1, run.stderr);
    assert.match(warnings[0], new RegExp(`${basename(file)}: HTTPAPISpec shop/books: spec\\.patterns\\[1\\]\\.uriTemplate: .*duplicates an earlier pattern`));
    assert.match(warnings[0], /the earlier one wins/);
  });

  it("the first registration answers, with its own variable name", async () => {
    assert.equal(run.lines[0].apiSpec.pattern, "/shelves/{shelf}");
    assert.deepEqual(run.lines[0].apiSpec.bindings, { shelf: "s1" });
    assert.deepEqual(run.lines[0].attributes["api.operation"], { stringValue: "first" });
  });

  it("the same shape with another method is no duplicate", async () => {
    assert.deepEqual(run.lines[1].attributes["api.operation"], { stringValue: "post" });
  });
});

describe("meshctl x hub-eval: binding decoding as upstream's path matcher", async () => {
  const file = configFile(`
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: { name: books, namespace: shop }
spec:
  patterns:
    - { httpMethod: GET, uriTemplate: "/v1/{name=shelves/*/books/*}" }
    - { httpMethod: GET, uriTemplate: "/one/{x}" }
    - { httpMethod: GET, uriTemplate: "/rest/{path=**}" }
${binding("books")}`);
  const rows: Array<[string, string, Record<string, string>]> = [
    ["a multi-segment binding decodes %20 (not reserved)", "/v1/shelves/my%20shelf/books/war%20and%20peace", { name: "shelves/my shelf/books/war and peace" }],
    ["a multi-segment binding keeps reserved escapes encoded", "/v1/shelves/a%2Fb/books/c%3Fd%23e", { name: "shelves/a%2Fb/books/c%3Fd%23e" }],
    ["a multi-segment binding decodes UTF-8", "/v1/shelves/caf%C3%A9/books/x", { name: "shelves/café/books/x" }],
    ["a single-segment binding decodes everything", "/one/a%2Fb%3Fc%20d", { x: "a/b?c d" }],
    ["a ** binding decodes all but reserved", "/rest/a%20b/c%2Fd/%7E", { path: "a b/c%2Fd/~" }],
  ];
  const run = await hubEval(
    [file],
    rows.map((r) => get(r[1])),
  );
  it("exits 0", async () => assert.equal(run.status, 0, run.stderr));
  rows.forEach(([name, , bindings], i) => {
    it(name, () => assert.deepEqual(run.lines[i].apiSpec.bindings, bindings));
  });
});

describe("meshctl x hub-eval: APIKey.cookie", async () => {
  const file = configFile(`
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: { name: books, namespace: shop }
spec:
  patterns: [{ httpMethod: GET, uriTemplate: "/books" }]
  apiKeys: [{ cookie: session }, { query: key }]
${binding("books")}`);
  const rows: Array<[string, object, string | null]> = [
    ["the cookie is read from the cookie header", get("/books", { headers: { cookie: "theme=dark; session=abc123" } }), "abc123"],
    ["the first pair of that name wins", get("/books", { headers: { cookie: "session=one; session=two" } }), "one"],
    ["a quoted value is unquoted", get("/books", { headers: { cookie: 'session="q v"' } }), "q v"],
    ["names are case-sensitive: the next location decides", get("/books?key=k", { headers: { cookie: "Session=abc" } }), "k"],
    ["an empty cookie counts as absent", get("/books?key=k", { headers: { cookie: "session=" } }), "k"],
    ["the cookie comes first in the configured order", get("/books?key=k", { headers: { cookie: "session=c" } }), "c"],
    ["no cookie and no query: no key", get("/books"), null],
  ];
  const run = await hubEval(
    [file],
    rows.map((r) => r[1]),
  );
  it("exits 0 with no warning", async () => {
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, "");
  });
  rows.forEach(([name, , key], i) => {
    it(name, () => {
      assert.equal(run.lines[i].apiKey, key);
      if (key === null) assert.equal(run.lines[i].attributes["request.api_key"], undefined);
      else assert.deepEqual(run.lines[i].attributes["request.api_key"], { stringValue: key });
    });
  });
});
