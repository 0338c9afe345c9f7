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

  it("the same documents spelt right are accepted", () => {
    const c = decode(`apiVersion: security.mesh.io/v1\nkind: PeerAuthentication\nmetadata: {name: p, namespace: foo}\nspec:\n  selector: {matchLabels: {app: a}}\n  mtls: {mode: STRICT}\n  portLevelMtls: {"80": {mode: DISABLE}}\n`);
    assert.deepEqual(c.problems, []);
    assert.equal(c.byKind.PeerAuthentication[0].spec.mtlsMode, "STRICT");
  });
});
