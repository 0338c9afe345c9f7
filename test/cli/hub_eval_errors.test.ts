import assert from "node:assert/strict";
import { basename } from "node:path";
import { describe, it } from "node:test";
import { T0, configFile, hubEval } from "./hub_eval_support.ts";

const spec = (pattern: string, extra = "") => `
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpec
metadata: { name: books, namespace: shop }
spec:
  patterns:
    - { httpMethod: GET, uriTemplate: /ok }
    - ${pattern}
${extra}`;

const BINDING = `
---
apiVersion: config.mesh.io/v1alpha2
kind: HTTPAPISpecBinding
metadata: { name: books, namespace: shop }
spec:
  services: [{ name: books }]
  apiSpecs: [{ name: books }]
`;
function QUOTA(charge: string, match = "{ exact: /a }"): string {
  return `apiVersion: config.mesh.io/v1alpha2
kind: QuotaSpec
metadata: { name: q, namespace: shop }
spec:
  rules:
    - match: [{ clause: { request.path: ${match} } }]
      quotas: [{ quota: requests, ${charge} }]
`;
}

// Each row: a configuration that must be refused, and what the message must name.
const rows: Array<[string, string, string[]]> = [
  [
    "RFC 6570 forms are not HTTP-rule templates",
    spec("{ httpMethod: GET, uriTemplate: '/search{?q}' }"),
    ["HTTPAPISpec shop/books", "spec.patterns[1].uriTemplate", "/search{?q}"],
  ],
  ["empty segments", spec("{ httpMethod: GET, uriTemplate: '/a//b' }"), ["spec.patterns[1].uriTemplate", "empty segment"]],
  ["lookahead needs backtracking", spec("{ httpMethod: GET, regex: '/a(?=b)' }"), ["spec.patterns[1].regex", "lookahead"]],
  ["backreferences need backtracking", spec("{ httpMethod: GET, regex: '(a)\\1' }"), ["spec.patterns[1].regex", "backreference"]],
  // 2^32 once wrapped to {0}: /admin/x{4294967296} matched /admin/.
  [
    "repeat counts above the limit are refused, never wrapped",
    spec("{ httpMethod: GET, regex: '/admin/x{4294967296}' }"),
    ["spec.patterns[1].regex", 'repeat count above 1000 in quantifier "{4294967296}"'],
  ],
  [
    "a pattern needs exactly one of uriTemplate and regex",
    spec("{ httpMethod: GET, uriTemplate: /a, regex: /a }"),
    ["spec.patterns[1]", "exactly one of uriTemplate, regex"],
  ],
  ["a pattern needs a template or regex", spec("{ httpMethod: GET }"), ["spec.patterns[1]", "got none"]],
  [
    "attribute values are typed",
    spec("{ uriTemplate: /b, attributes: { attributes: { api.operation: { stringValue: 7 } } } }"),
    ["spec.patterns[1].attributes.attributes[api.operation].stringValue", "expected a string"],
  ],
  [
    "an API key is one of a query, a header, a cookie",
    spec("{ uriTemplate: /b }", "  apiKeys: [{ header: k, cookie: k }]"),
    ["spec.apiKeys[0]", "exactly one of query, header, cookie"],
  ],
  [
    "bindings must reference defined specs",
    spec("{ uriTemplate: /b }") + BINDING.replace("apiSpecs: [{ name: books }]", "apiSpecs: [{ name: missing }]"),
    ["HTTPAPISpecBinding shop/books", "spec.apiSpecs[0]", "shop/missing, which is not defined"],
  ],
  ["quota charges are positive integers", QUOTA("charge: -1"), ["QuotaSpec shop/q", "spec.rules[0].quotas[0].charge", "integer from 1"]],
  [
    "a StringMatch is exactly one of exact, prefix, regex",
    QUOTA("charge: 1", "{ exact: a, prefix: b }"),
    ["spec.rules[0].match[0].clause[request.path]", "exactly one of exact, prefix, regex"],
  ],
  [
    "StringMatch regexes use the filter's engine",
    QUOTA("charge: 1", "{ regex: '(?<=a)b' }"),
    ["spec.rules[0].match[0].clause[request.path].regex", "lookbehind"],
  ],
  [
    "StringMatch repeat counts are not wrapped",
    QUOTA("charge: 1", "{ regex: '/admin/x{4294967297}' }"),
    ["spec.rules[0].match[0].clause[request.path].regex", 'repeat count above 1000 in quantifier "{4294967297}"'],
  ],
  [
    "fail policy waits must not be inverted",
    `apiVersion: config.mesh.io/v1alpha2
kind: HttpClientConfig
metadata: { name: c, namespace: shop }
spec: { transport: { networkFailPolicy: { policy: FAIL_CLOSE, baseRetryWait: 2s, maxRetryWait: 1s } } }`,
    ["HttpClientConfig shop/c", "spec.transport.networkFailPolicy.maxRetryWait", "no shorter than baseRetryWait"],
  ],
  [
    "fail policies are FAIL_OPEN or FAIL_CLOSE",
    `apiVersion: config.mesh.io/v1alpha2
kind: HttpClientConfig
metadata: { name: c, namespace: shop }
spec: { serviceConfigs: { a: { networkFailPolicy: { policy: FAIL_SOMETIMES } } } }`,
    ["spec.serviceConfigs[a].networkFailPolicy.policy", "one of FAIL_OPEN, FAIL_CLOSE", '"FAIL_SOMETIMES"'],
  ],
  [
    "the API group is config.mesh.io/v1alpha2",
    spec("{ uriTemplate: /b }").replace("config.mesh.io/v1alpha2", "config.istio.io/v1alpha2"),
    ["apiVersion", "config.mesh.io/v1alpha2"],
  ],
  ["YAML syntax errors name the document", "kind: [", ["document 1", "valid YAML or JSON"]],
];

describe("meshctl x hub-eval: bad configuration exits 2 naming file, resource and field", async () => {
  for (const [name, yaml, expected] of rows) {
    it(name, async () => {
      const file = configFile(yaml, `bad-${name.replace(/\W+/g, "-")}.yaml`);
      const run = await hubEval([file], [{ method: "GET", path: "/", time: T0 }]);
      assert.equal(run.status, 2, `stdout: ${JSON.stringify(run.lines)} stderr: ${run.stderr}`);
      assert.deepEqual(run.lines, [], "no request is evaluated");
      assert.ok(run.stderr.includes(basename(file)), run.stderr);
      for (const text of expected) assert.ok(run.stderr.includes(text), `missing ${JSON.stringify(text)} in: ${run.stderr}`);
    });
  }
  it("a missing file exits 2", async () => {
    const run = await hubEval(["/nonexistent/x.yaml"], []);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /\/nonexistent\/x\.yaml.*ENOENT/);
  });
});

describe("meshctl x hub-eval: bad input lines", async () => {
  it("print an error line and the run goes on", async () => {
    const file = configFile(spec("{ uriTemplate: /b }"));
    const run = await hubEval([file], ["not json", { path: "/a" }, { method: "GET", path: "/a", headers: { a: 1 } }, { method: "GET", path: "/b", time: T0 }]);
    assert.equal(run.status, 0);
    assert.match(run.lines[0].error, /not JSON/);
    assert.match(run.lines[1].error, /method: expected a string/);
    assert.match(run.lines[2].error, /headers\.a: expected a string/);
    assert.deepEqual(run.lines[3].attributes["request.path"], { stringValue: "/b" });
  });
  it("unknown fields are warned about, not fatal", async () => {
    const file = configFile(spec("{ uriTemplate: /b, httpMethd: GET }"));
    const run = await hubEval([file], [{ method: "GET", path: "/b", time: T0 }]);
    assert.equal(run.status, 0);
    assert.match(run.stderr, /warning: .*spec\.patterns\[1\]\.httpMethd: unknown field/);
  });
});
