import assert from "node:assert/strict";
import { describe } from "node:test";
import { tableTest } from "./table.ts";

// Baselines follow the spec's examples (rules 3–13) and upstream v1beta1 (shared/research/security.md).

describe("PeerAuthentication", () => {
  const baseline = `
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: httpbin, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  mtls: { mode: STRICT }
  portLevelMtls:
    8080: { mode: DISABLE }
`;
  tableTest(
    baseline,
    [
      ["mode PERMISSIVE", { "spec.mtls.mode": "PERMISSIVE" }, "ok", (s) => assert.equal(s.mtlsMode, "PERMISSIVE")],
      ["no mtls block means UNSET", { "spec.mtls": undefined }, "ok", (s) => assert.equal(s.mtlsMode, "UNSET")],
      [
        "namespace-wide: no selector, no port levels",
        { "spec.selector": undefined, "spec.portLevelMtls": undefined },
        "ok",
        (s) => assert.equal(s.selector, undefined),
      ],
      ["mesh-wide UNSET mode written out", { "spec.mtls.mode": "UNSET" }, "ok"],
      [
        "port 65535",
        { "spec.portLevelMtls": { 65535: { mode: "STRICT" } } },
        "ok",
        (s) => assert.deepEqual(s.portLevelMtls, [{ port: 65535, mode: "STRICT" }]),
      ],
      ["prefixed label key", { "spec.selector.matchLabels": { "app.kubernetes.io/name": "httpbin" } }, "ok"],
      ["lower-case mode", { "spec.mtls.mode": "strict" }, ["spec.mtls.mode", /^expected one of UNSET, DISABLE, PERMISSIVE, STRICT, got "strict"$/]],
      ["port 0", { "spec.portLevelMtls": { 0: { mode: "STRICT" } } }, ["spec.portLevelMtls[0]", /expected a port number from 1 to 65535 as the key, got "0"/]],
      ["port 65536", { "spec.portLevelMtls": { 65536: { mode: "STRICT" } } }, ["spec.portLevelMtls[65536]", /port number from 1 to 65535/]],
      ["port name as key", { "spec.portLevelMtls": { http: { mode: "STRICT" } } }, ["spec.portLevelMtls[http]", /port number/]],
      ["bad port-level mode", { "spec.portLevelMtls": { 8080: { mode: "OFF" } } }, ["spec.portLevelMtls[8080].mode", /one of UNSET, DISABLE/]],
      ["portLevelMtls without selector", { "spec.selector": undefined }, ["spec.portLevelMtls", /selector with matchLabels/]],
      ["empty portLevelMtls", { "spec.portLevelMtls": {} }, ["spec.portLevelMtls", /at least one port entry/]],
      ["label value with a space", { "spec.selector.matchLabels": { app: "http bin" } }, ["spec.selector.matchLabels[app]", /label value/]],
      ["wildcard label key", { "spec.selector.matchLabels": { "*": "x" } }, ["spec.selector.matchLabels[*]", /label key/]],
      ["numeric label value", { "spec.selector.matchLabels": { version: 1 } }, ["spec.selector.matchLabels[version]", /expected a string, got 1/]],
      ["mtls as a string", { "spec.mtls": "STRICT" }, ["spec.mtls", /expected an object/]],
    ],
    (s) => {
      assert.equal(s.mtlsMode, "STRICT");
      assert.deepEqual(s.selector, { matchLabels: { app: "httpbin" } });
      assert.deepEqual(s.portLevelMtls, [{ port: 8080, mode: "DISABLE" }]);
    },
  );
});

describe("RequestAuthentication", () => {
  const baseline = `
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: jwt-example, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  jwtRules:
    - issuer: testing@secure.mesh.io
      jwksUri: https://raw.example.com/security/tools/jwt/samples/jwks.json
`;
  const jwks = JSON.stringify({ keys: [{ kty: "RSA", e: "AQAB", n: "xyz", kid: "k1" }] });
  tableTest(
    baseline,
    [
      ["audiences", { "spec.jwtRules.0.audiences": ["bookstore", "https://a.example.com/"] }, "ok"],
      [
        "inline jwks instead of jwksUri",
        { "spec.jwtRules.0.jwksUri": undefined, "spec.jwtRules.0.jwks": jwks },
        "ok",
        (s) => assert.equal(s.jwtRules[0].jwksKeys.keys[0].kid, "k1"),
      ],
      [
        "fromHeaders with prefix",
        { "spec.jwtRules.0.fromHeaders": [{ name: "x-jwt", prefix: "Bearer " }] },
        "ok",
        (s) => assert.deepEqual(s.jwtRules[0].fromHeaders, [{ name: "x-jwt", prefix: "Bearer " }]),
      ],
      [
        "fromHeaders without prefix",
        { "spec.jwtRules.0.fromHeaders": [{ name: "x-jwt" }] },
        "ok",
        (s) => assert.equal(s.jwtRules[0].fromHeaders[0].prefix, ""),
      ],
      ["fromParams", { "spec.jwtRules.0.fromParams": ["my_token"] }, "ok"],
      [
        "forwardOriginalToken and outputPayloadToHeader",
        { "spec.jwtRules.0.forwardOriginalToken": true, "spec.jwtRules.0.outputPayloadToHeader": "x-jwt-payload" },
        "ok",
        (s) => assert.equal(s.jwtRules[0].forwardOriginalToken, true),
      ],
      ["outputClaimToHeaders", { "spec.jwtRules.0.outputClaimToHeaders": [{ header: "x-sub", claim: "sub" }] }, "ok"],
      ["no jwksUri (discovered from the issuer)", { "spec.jwtRules.0.jwksUri": undefined }, "ok"],
      ["no selector", { "spec.selector": undefined }, "ok"],
      ["http jwksUri", { "spec.jwtRules.0.jwksUri": "http://jwks.local:8000/keys" }, "ok"],
      ["timeout", { "spec.jwtRules.0.timeout": "5s" }, "ok", (s) => assert.equal(s.jwtRules[0].timeoutMs, 5000)],
      ["missing issuer", { "spec.jwtRules.0.issuer": undefined }, ["spec.jwtRules[0].issuer", /expected a string, got nothing/]],
      ["empty issuer", { "spec.jwtRules.0.issuer": "" }, ["spec.jwtRules[0].issuer", /non-empty string/]],
      ["jwksUri not a URL", { "spec.jwtRules.0.jwksUri": "jwks.json" }, ["spec.jwtRules[0].jwksUri", /http or https URL/]],
      ["jwksUri with another scheme", { "spec.jwtRules.0.jwksUri": "ftp://example.com/jwks" }, ["spec.jwtRules[0].jwksUri", /http or https URL/]],
      ["jwks not JSON", { "spec.jwtRules.0.jwks": "{keys:" }, ["spec.jwtRules[0].jwks", /not JSON/]],
      ["jwks without keys", { "spec.jwtRules.0.jwks": "{}" }, ["spec.jwtRules[0].jwks", /"keys" list/]],
      ["jwks key without kty", { "spec.jwtRules.0.jwks": '{"keys":[{"n":"x"}]}' }, ["spec.jwtRules[0].jwks", /keys\[0\].*kty/]],
      ["fromHeaders without name", { "spec.jwtRules.0.fromHeaders": [{ prefix: "Bearer " }] }, ["spec.jwtRules[0].fromHeaders[0].name", /expected a string/]],
      ["header name with a space", { "spec.jwtRules.0.outputPayloadToHeader": "x jwt" }, ["spec.jwtRules[0].outputPayloadToHeader", /HTTP header name/]],
      ["empty fromParams entry", { "spec.jwtRules.0.fromParams": [""] }, ["spec.jwtRules[0].fromParams[0]", /non-empty string/]],
      ["forwardOriginalToken as a string", { "spec.jwtRules.0.forwardOriginalToken": "yes" }, ["spec.jwtRules[0].forwardOriginalToken", /true or false/]],
      ["jwtRules not a list", { "spec.jwtRules": { issuer: "x" } }, ["spec.jwtRules", /expected a list/]],
      ["zero timeout", { "spec.jwtRules.0.timeout": "0s" }, ["spec.jwtRules[0].timeout", /positive duration/]],
    ],
    (s) => {
      assert.equal(s.jwtRules.length, 1);
      assert.equal(s.jwtRules[0].issuer, "testing@secure.mesh.io");
      assert.deepEqual(s.jwtRules[0].audiences, []);
      assert.deepEqual(s.jwtRules[0].fromHeaders, []);
      assert.equal(s.jwtRules[0].forwardOriginalToken, false);
    },
  );
});

describe("AuthorizationPolicy", () => {
  // Spec rules 12 and 13: deny requests without a request principal on some paths.
  const baseline = `
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: require-jwt, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules:
    - from: [{ source: { notRequestPrincipals: ["*"] } }]
      to: [{ operation: { paths: ["/headers"] } }]
`;
  const src = "spec.rules.0.from.0.source";
  const op = "spec.rules.0.to.0.operation";
  tableTest(
    baseline,
    [
      ["action defaults to ALLOW", { "spec.action": undefined }, "ok", (s) => assert.equal(s.action, "ALLOW")],
      ["no rules", { "spec.rules": undefined }, "ok", (s) => assert.deepEqual(s.rules, [])],
      ["an empty rule (matches everything)", { "spec.rules": [{}] }, "ok", (s) => assert.deepEqual(s.rules, [{ from: [], to: [], when: [] }])],
      [
        "every source field",
        {
          [src]: {
            principals: ["cluster.local/ns/foo/sa/sleep"],
            notPrincipals: ["*"],
            requestPrincipals: ["iss/sub"],
            notRequestPrincipals: ["*"],
            namespaces: ["foo"],
            notNamespaces: ["bar"],
            ipBlocks: ["10.0.0.0/8", "192.168.1.1"],
            notIpBlocks: ["2001:db8::/32"],
            remoteIpBlocks: ["1.2.3.4/32"],
            notRemoteIpBlocks: ["::1"],
          },
        },
        "ok",
      ],
      [
        "every operation field",
        {
          [op]: {
            hosts: ["*.example.com"],
            notHosts: ["admin.example.com"],
            ports: ["8080", 9090],
            notPorts: ["22"],
            methods: ["GET"],
            notMethods: ["DELETE"],
            paths: ["/api/*"],
            notPaths: ["*/private"],
          },
        },
        "ok",
        (s) => assert.deepEqual(s.rules[0].to[0].ports, [8080, 9090]),
      ],
      ["prefix and suffix matches", { [`${op}.paths`]: ["/a*", "*.png", "*"] }, "ok"],
      ["when with a header key", { "spec.rules.0.when": [{ key: "request.headers[x-token]", values: ["admin"] }] }, "ok"],
      ["when with nested claims", { "spec.rules.0.when": [{ key: "request.auth.claims[groups][0]", notValues: ["guest"] }] }, "ok"],
      ["when on source.ip with a CIDR", { "spec.rules.0.when": [{ key: "source.ip", values: ["10.1.0.0/16"] }] }, "ok"],
      ["when on destination.port", { "spec.rules.0.when": [{ key: "destination.port", values: ["8080"] }] }, "ok"],
      ["AUDIT", { "spec.action": "AUDIT" }, "ok", (s) => assert.equal(s.action, "AUDIT")],
      [
        "CUSTOM with a provider",
        { "spec.action": "CUSTOM", "spec.provider": { name: "sample-ext-authz-http" } },
        "ok",
        (s) => assert.deepEqual([s.action, s.provider], ["CUSTOM", "sample-ext-authz-http"]),
      ],
      ["CUSTOM without a provider", { "spec.action": "CUSTOM" }, ["spec.provider", /provider .* for action CUSTOM/]],
      ["CUSTOM with an empty provider name", { "spec.action": "CUSTOM", "spec.provider": { name: "" } }, ["spec.provider.name", /non-empty string/]],
      ["a provider without CUSTOM", { "spec.provider": { name: "x" } }, ["spec.provider", /only allowed with action CUSTOM/]],
      ["unknown action", { "spec.action": "REJECT" }, ["spec.action", /^expected one of ALLOW, DENY, AUDIT, CUSTOM, got "REJECT"$/]],
      ["bad CIDR", { [`${src}.ipBlocks`]: ["10.0.0.0/33"] }, [`spec.rules[0].from[0].source.ipBlocks[0]`, /IP address or CIDR block/]],
      ["bad IP in notIpBlocks", { [`${src}.notIpBlocks`]: ["300.1.1.1"] }, [`spec.rules[0].from[0].source.notIpBlocks[0]`, /IP address or CIDR/]],
      ["empty source", { [src]: {} }, ["spec.rules[0].from[0].source", /at least one of principals/]],
      ["empty operation", { [op]: {} }, ["spec.rules[0].to[0].operation", /at least one of hosts/]],
      ["empty value list", { [`${op}.paths`]: [] }, ["spec.rules[0].to[0].operation.paths", /non-empty list/]],
      ["* in the middle", { [`${op}.paths`]: ["/a/*/b"] }, ["spec.rules[0].to[0].operation.paths[0]", /one \* at most, only at an end/]],
      ["two *", { [`${op}.hosts`]: ["*a*"] }, ["spec.rules[0].to[0].operation.hosts[0]", /one \* at most/]],
      ["port out of range", { [`${op}.ports`]: ["70000"] }, ["spec.rules[0].to[0].operation.ports[0]", /integer from 1 to 65535/]],
      ["port name", { [`${op}.notPorts`]: ["http"] }, ["spec.rules[0].to[0].operation.notPorts[0]", /integer from 1 to 65535/]],
      [
        "unknown when key",
        { "spec.rules.0.when": [{ key: "request.bogus", values: ["x"] }] },
        ["spec.rules[0].when[0].key", /condition key: one of request.headers/],
      ],
      ["header key without a name", { "spec.rules.0.when": [{ key: "request.headers[]", values: ["x"] }] }, ["spec.rules[0].when[0].key", /condition key/]],
      ["when without values", { "spec.rules.0.when": [{ key: "source.namespace" }] }, ["spec.rules[0].when[0]", /values or notValues/]],
      [
        "when source.ip not an IP",
        { "spec.rules.0.when": [{ key: "source.ip", values: ["example.com"] }] },
        ["spec.rules[0].when[0].values[0]", /IP address or CIDR block \(for source.ip\)/],
      ],
      ["rules not a list", { "spec.rules": "all" }, ["spec.rules", /expected a list/]],
      ["from without source", { "spec.rules.0.from": [{}] }, ["spec.rules[0].from[0].source", /expected an object, got nothing/]],
    ],
    (s) => {
      assert.equal(s.action, "DENY");
      assert.deepEqual(s.rules[0].from, [{ notRequestPrincipals: ["*"] }]);
      assert.deepEqual(s.rules[0].to, [{ paths: ["/headers"] }]);
      assert.deepEqual(s.rules[0].when, []);
    },
  );
});
