import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeDocuments, filterChecks } from "../../host/config/catalog.ts";
import { parseDocuments } from "../../host/config/documents.ts";
import { FilterModule } from "../../host/wasm/filter_module.ts";

// Issue 25 item 7: an unknown field anywhere in a security resource refuses
// the document (upstream's strict proto decoding), naming the field path.

const checks = filterChecks(FilterModule.load());
const decode = (yaml: string) => decodeDocuments(parseDocuments(yaml, "t.yaml"), checks);

const CASES: Array<[string, string, string]> = [
  ["PeerAuthentication", "mtls: {mdoe: STRICT}", "spec.mtls.mdoe"],
  ["PeerAuthentication", "selector: {matchLabel: {app: a}}\n  mtls: {mode: STRICT}", "spec.selector.matchLabel"],
  ["PeerAuthentication", "selector: {matchLabels: {app: a}}\n  portLevelMtls: {\"80\": {mdoe: DISABLE}}", "spec.portLevelMtls[80].mdoe"],
  ["PeerAuthentication", "mtl: {mode: STRICT}", "spec.mtl"],
  ["RequestAuthentication", "jwtRules: [{issuer: a, jwksUri: \"https://a/jwks\", audience: [x]}]", "spec.jwtRules[0].audience"],
  ["RequestAuthentication", "jwtRules: [{issuer: a, jwksUri: \"https://a/jwks\", fromHeaders: [{name: x, prefx: y}]}]", "spec.jwtRules[0].fromHeaders[0].prefx"],
  ["AuthorizationPolicy", "action: DENY\n  rules: [{to: [{operation: {path: [/admin]}}]}]", "spec.rules[0].to[0].operation.path"],
  ["AuthorizationPolicy", "rules: [{from: [{source: {principal: [x]}}]}]", "spec.rules[0].from[0].source.principal"],
  ["AuthorizationPolicy", "rules: [{when: [{key: \"request.auth.claims[iss]\", value: [x]}]}]", "spec.rules[0].when[0].value"],
  ["AuthorizationPolicy", "rules: [{form: [{source: {namespaces: [x]}}]}]", "spec.rules[0].form"],
];

describe("unknown fields in security resources", () => {
  for (const [kind, spec, path] of CASES) {
    it(`${kind}: ${path} refuses the document`, () => {
      const c = decode(`apiVersion: security.mesh.io/v1\nkind: ${kind}\nmetadata: {name: p, namespace: foo}\nspec:\n  ${spec}\n`);
      assert.equal(c.invalidDocuments, 1);
      assert.deepEqual(c.errors.map((e) => [e.fieldPath, e.severity]), [[path, "error"]]);
      assert.match(c.errors[0].message, /^unknown field \(known: /);
      assert.equal(c.byKind[kind as "PeerAuthentication"].length, 0);
    });
  }

  // Upstream fields this mesh does not implement are refused too (ignored, targetRef would apply the policy to the whole namespace), named as such.
  for (const [kind, spec, path] of [
    ["AuthorizationPolicy", "targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: gw}]\n  action: DENY\n  rules: [{}]", "spec.targetRefs"],
    ["RequestAuthentication", "targetRef: {kind: Gateway, group: gateway.networking.k8s.io, name: gw}", "spec.targetRef"],
    ["RequestAuthentication", "jwtRules: [{issuer: a, jwksUri: \"https://a/jwks\", fromCookies: [session]}]", "spec.jwtRules[0].fromCookies"],
    ["AuthorizationPolicy", "rules: [{from: [{source: {serviceAccounts: [foo/sa]}}]}]", "spec.rules[0].from[0].source.serviceAccounts"],
  ] as const) {
    it(`${kind}: ${path}, an upstream field not implemented, refuses the document`, () => {
      const c = decode(`apiVersion: security.mesh.io/v1\nkind: ${kind}\nmetadata: {name: p, namespace: foo}\nspec:\n  ${spec}\n`);
      assert.deepEqual(c.errors.map((e) => [e.fieldPath, e.message]), [[path, "not supported: an upstream field this mesh does not implement"]]);
    });
  }

  it("networking resources refuse unknown fields too; upstream fields not implemented are named", () => {
    const dr = decode(`apiVersion: networking.mesh.io/v1\nkind: DestinationRule\nmetadata: {name: d, namespace: foo}\nspec: {host: a, trafficPolicy: {tsl: {mode: MUTUAL}}}\n`);
    assert.deepEqual(dr.errors.map((e) => [e.fieldPath, e.message.split(" (")[0]]), [["spec.trafficPolicy.tsl", "unknown field"]]);
    const vs = decode(`apiVersion: networking.mesh.io/v1\nkind: VirtualService\nmetadata: {name: v, namespace: foo}\nspec: {hosts: [a], http: [{route: [{destination: {host: a}}], retries: {attempts: 2, backoff: 1s}}]}\n`);
    assert.deepEqual(vs.errors.map((e) => [e.fieldPath, e.message]), [["spec.http[0].retries.backoff", "not supported: an upstream field this mesh does not implement"]]);
    for (const [kind, spec, path] of [
      ["Gateway", "{servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*'], tsl: {}}]}", "spec.servers[0].tsl"],
      ["ServiceEntry", "{hosts: [a.example.com], ports: [{number: 80, name: http, protocl: HTTP}]}", "spec.ports[0].protocl"],
    ]) {
      const c = decode(`apiVersion: networking.mesh.io/v1\nkind: ${kind}\nmetadata: {name: x, namespace: foo}\nspec: ${spec}\n`);
      assert.deepEqual(c.errors.map((e) => e.fieldPath), [path], kind);
    }
  });

  it("a document's status and the config.mesh.io kinds keep unknown fields as warnings", () => {
    const c = decode(`apiVersion: security.mesh.io/v1\nkind: PeerAuthentication\nmetadata: {name: p, namespace: foo}\nspec: {mtls: {mode: STRICT}}\nstatus: {x: 1}\n---\napiVersion: config.mesh.io/v1alpha2\nkind: QuotaSpec\nmetadata: {name: q, namespace: foo}\nspec: {rules: [], rulez: []}\n`);
    assert.deepEqual(c.errors, []);
    assert.deepEqual(c.warnings.map((w) => w.fieldPath), ["status", "spec.rulez"]);
  });

  it("the same documents spelt right are accepted", () => {
    const c = decode(`apiVersion: security.mesh.io/v1\nkind: PeerAuthentication\nmetadata: {name: p, namespace: foo}\nspec:\n  selector: {matchLabels: {app: a}}\n  mtls: {mode: STRICT}\n  portLevelMtls: {"80": {mode: DISABLE}}\n`);
    assert.deepEqual(c.problems, []);
    assert.equal(c.byKind.PeerAuthentication[0].spec.mtlsMode, "STRICT");
  });
});
