import assert from "node:assert/strict";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { runProcess } from "../support/processes.ts";
import { FIXTURES, MESHCTL } from "./cli_golden_support.ts";

// Issue 6 item 6: `meshctl x simulate -f FILE` through the built CLI, one
// process per fixture file (the CA started once per file, scenarios run
// side by side). Covers the 13 request-handling rules of spec 1 and the
// Errors rows that apply, on the real CA and sidecars, certificates and signed tokens.

interface Line {
  id: string | number;
  outcome: "http" | "connection-failure";
  status: number | null;
  body: string | null;
  responseHeaders: Record<string, string>;
  sent: { path: string; headers: Record<string, string | string[]> };
  upstream: null | { workload: string; headers: Record<string, string> };
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function simulate(file: string): Promise<Run> {
  return runProcess(process.execPath, [MESHCTL, "x", "simulate", "-f", join("simulate", file)], { cwd: FIXTURES });
}

const lines = (r: Run): Map<string | number, Line> => {
  assert.equal(r.status, 0, r.stderr);
  return new Map(
    r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Line)
      .map((l) => [l.id, l]),
  );
};

const XFCC_FROM_SLEEP =
  /^By=spiffe:\/\/cluster\.local\/ns\/(foo|baz)\/sa\/(httpbin|multi);Hash=[0-9a-f]{64};Subject="";URI=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep$/;
const realm = (url: string) => `Bearer realm="${url}", error="invalid_token"`;

/** [status or "connection-failure", upstream workload or null, body (when given)]. */
type Expect = [number | "connection-failure", string | null, string?];

function check(results: Map<string | number, Line>, table: Record<string, Expect>): void {
  assert.deepEqual([...results.keys()], Object.keys(table), "one line per scenario, in file order");
  for (const [id, [status, upstream, body]] of Object.entries(table)) {
    const r = results.get(id)!;
    if (status === "connection-failure") {
      assert.equal(r.outcome, "connection-failure", id);
      assert.equal(r.status, null, id);
    } else {
      assert.equal(r.outcome, "http", id);
      assert.equal(r.status, status, `${id}: ${r.body}`);
    }
    assert.equal(r.upstream?.workload ?? null, upstream, id);
    if (body !== undefined) assert.equal(r.body, body, id);
  }
}

describe("meshctl x simulate", () => {
  const runs: Record<string, Promise<Run>> = {};
  before(() => {
    for (const f of ["mtls.json", "jwt.json", "authz_gateway.json", "single.json"]) runs[f] = simulate(f);
  });

  it("rules 1–7 and the STRICT Errors row: mutual TLS with and without sidecars, peer policies at every scope, DestinationRules", async () => {
    const r = lines(await runs["mtls.json"]);
    check(r, {
      "rule1-auto-mtls": [200, "foo/httpbin"],
      "rule2-server-without-sidecar": [200, "legacy/httpbin"],
      "rule3-mesh-strict-plaintext-client": ["connection-failure", null],
      "rule3-mesh-strict-proxied-client": [200, "foo/httpbin"],
      "rule3-mesh-strict-proxied-to-legacy": [200, "legacy/httpbin"],
      "rule3-mesh-strict-plain-to-legacy": [200, "legacy/httpbin"],
      "rule4-namespace-strict": ["connection-failure", null],
      "rule4-other-namespace-unaffected": [200, "foo/httpbin"],
      "rule5-workload-disable-without-destination-rule": [503, null],
      "rule5-workload-strict-with-mesh-mutual": [200, "baz/multi"],
      "rule6-port-level-service-port": [200, "baz/multi"],
      "rule6-port-level-container-port": [200, "baz/multi"],
      "rule6-unbound-port-ignored": ["connection-failure", null],
      "rule7-workload-disable-with-destination-rule": [200, "bar/httpbin"],
      "rule7-plaintext-client-accepted": [200, "bar/httpbin"],
      "mesh-mutual-to-server-without-sidecar": [503, null],
    });
    // Rule 1: the server sidecar sets XFCC; the client's forged one never passes (sent shows it was sent).
    const rule1 = r.get("rule1-auto-mtls")!;
    assert.equal(rule1.sent.headers["x-forwarded-client-cert"], "By=forged");
    assert.equal(rule1.sent.headers.host, "httpbin.foo.svc.cluster.local:8000");
    assert.equal(rule1.sent.path, "/headers");
    assert.match(rule1.upstream!.headers["x-forwarded-client-cert"], XFCC_FROM_SLEEP);
    assert.equal(rule1.responseHeaders["content-type"], "application/json");
    assert.equal(JSON.parse(rule1.body!).path, "/headers");
    assert.match(r.get("rule3-mesh-strict-proxied-client")!.upstream!.headers["x-forwarded-client-cert"], XFCC_FROM_SLEEP);
    assert.match(r.get("rule5-workload-strict-with-mesh-mutual")!.upstream!.headers["x-forwarded-client-cert"], XFCC_FROM_SLEEP);
    // Plain text where a policy or no sidecar says so: no XFCC.
    for (const id of [
      "rule2-server-without-sidecar",
      "rule3-mesh-strict-proxied-to-legacy",
      "rule6-port-level-service-port",
      "rule7-workload-disable-with-destination-rule",
      "rule7-plaintext-client-accepted",
    ]) {
      assert.equal(r.get(id)!.upstream!.headers["x-forwarded-client-cert"], undefined, id);
    }
  });

  it("rules 8–11, the bad-token set and the token Errors rows: 401 with WWW-Authenticate; audience mismatch 403; valid tokens yield the principal", async () => {
    const r = lines(await runs["jwt.json"]);
    const bad = "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections";
    const noKey = "Jwks doesn't have key to match kid or alg from Jwt";
    check(r, {
      "rule8-no-token": [200, "foo/httpbin"],
      "rule9-invalid-signature": [401, null, "Jwt verification fails"],
      "rule9-unpublished-key": [401, null, noKey],
      "rule9-malformed": [401, null, bad],
      "rule9-alg-none": [401, null, bad],
      "rule9-alg-confusion": [401, null, noKey],
      "rule9-not-yet-valid": [401, null, "Jwt not yet valid"],
      "rule9-unknown-issuer": [401, null, "Jwt issuer is not configured"],
      "rule9-expired-kind": [401, null, "Jwt is expired"],
      "rule9-every-token-must-be-valid": [401, null, bad],
      "rule10-valid-token": [200, "foo/httpbin"],
      "rule11-before-expiry": [200, "foo/httpbin"],
      "rule11-after-expiry": [401, null, "Jwt is expired"],
      "audience-mismatch": [403, null, "Audiences in Jwt are not allowed"],
      "audience-listed": [200, "foo/httpbin"],
      "inline-jwks-custom-header": [200, "foo/httpbin"],
    });
    assert.equal(r.get("rule9-invalid-signature")!.responseHeaders["www-authenticate"], realm("http://httpbin.foo.svc.cluster.local:8000/headers?x=1"));
    for (const [id, line] of r)
      if (line.status === 401)
        assert.match(
          line.responseHeaders["www-authenticate"],
          /^Bearer realm="http:\/\/httpbin\.foo\.svc\.cluster\.local:8000\/headers.*", error="invalid_token"$/,
          String(id),
        );
    // Tokens as minted: three sections signed RS256 with kid key-1, in the default location.
    const sent = r.get("rule9-invalid-signature")!.sent.headers.authorization as string;
    assert.match(sent, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    assert.deepEqual(JSON.parse(Buffer.from(sent.slice(7).split(".")[0], "base64url").toString()), { alg: "RS256", kid: "key-1", typ: "JWT" });
    assert.equal(r.get("rule9-malformed")!.sent.headers.authorization, "Bearer deadbeef");
    assert.match(r.get("rule9-alg-none")!.sent.headers.authorization as string, /\.$/);
    assert.equal(
      JSON.parse(Buffer.from((r.get("rule9-alg-confusion")!.sent.headers.authorization as string).slice(7).split(".")[0], "base64url").toString()).alg,
      "HS256",
    );
    assert.match(r.get("rule9-every-token-must-be-valid")!.sent.path, /^\/headers\?access_token=deadbeef$/);
    // Rule 10: the token is consumed, the payload forwarded; the principal's claims arrive.
    const valid = r.get("rule10-valid-token")!.upstream!.headers;
    assert.equal(valid.authorization, undefined);
    const payload = JSON.parse(Buffer.from(valid["x-jwt-payload"], "base64url").toString());
    assert.equal(payload.sub, "alice");
    assert.equal(payload.iss, "testing@secure.mesh.io");
    assert.equal(payload.group, "dev");
    // Rule 11: minted 120 s in the past with a 60 s lifetime; never slept.
    const expired = JSON.parse(Buffer.from((r.get("rule11-after-expiry")!.sent.headers.authorization as string).split(".")[1], "base64url").toString());
    assert.ok(expired.exp < Date.now() / 1000 - 50 && expired.exp - expired.iat === 60);
    // Inline ${JWKS:key-1}, custom header without prefix, forwardOriginalToken.
    const inline = r.get("inline-jwks-custom-header")!;
    assert.equal(inline.upstream!.headers["x-jwt"], inline.sent.headers["x-jwt"]);
  });

  it("rules 12–13, the DENY Errors row, gateway routing and 404, REGISTRY_ONLY with the fallthrough route 502", async () => {
    const r = lines(await runs["authz_gateway.json"]);
    check(r, {
      "rule12-deny-without-token": [403, null, "RBAC: access denied"],
      "rule12-valid-token-allowed": [200, "foo/secure"],
      "rule12-invalid-token-is-401": [401, null, "Jwt verification fails"],
      "rule13-matching-path-denied": [403, null, "RBAC: access denied"],
      "rule13-normalized-path-denied": [403, null, "RBAC: access denied"],
      "rule13-other-path-allowed": [200, "foo/httpbin"],
      "rule13-matching-path-with-token": [200, "foo/httpbin"],
      "gateway-routes-by-host": [200, "foo/httpbin"],
      "gateway-no-route-404": [404, null, ""],
      "gateway-jwt-covers-bound-services": [403, null, "RBAC: access denied"],
      "gateway-admin-with-token": [200, "foo/httpbin"],
      "registry-only-fallthrough-502": [502, null, ""],
      "registry-only-without-fallthrough-404": [404, null, ""],
      "allow-any-passthrough": [200, "external/example"],
    });
    const routed = r.get("gateway-routes-by-host")!;
    assert.equal(routed.sent.headers.host, "httpbin.example.com");
    assert.equal(routed.upstream!.headers.host, "httpbin.example.com");
    assert.match(
      routed.upstream!.headers["x-forwarded-client-cert"],
      /;URI=spiffe:\/\/cluster\.local\/ns\/mesh-system\/sa\/mesh-ingressgateway-service-account$/,
    );
  });

  it("a file with one scenario: the id is its index", async () => {
    const r = lines(await runs["single.json"]);
    assert.deepEqual([...r.keys()], [0]);
    assert.equal(r.get(0)!.status, 200);
  });

  it("a bad scenario or resource exits 2 naming the field path, and starts nothing", async () => {
    const table: Array<[string, RegExp]> = [
      [
        "bad_workload_kind.json",
        /simulate\/bad_workload_kind\.json: scenarios\[1\]\.workloads\[1\]\.kind: expected one of app, ingress-gateway, jwks-server, external-client, external-server, got "database"/,
      ],
      ["bad_resource.json", /scenarios\[0\]\.resources\[0\]: PeerAuthentication foo\/default: spec\.mtls\.mode: expected one of .*got "strict"/],
      [
        "bad_token.json",
        /bad_token\.json: request\.token\.kind: expected one of valid, invalid-signature, expired, malformed, not-yet-valid, alg-none, alg-confusion, got "forged"/,
      ],
      ["bad_placeholder.json", /resources\[0\]\.spec\.jwtRules\[0\]\.jwks: unknown placeholder \$\{JWKS:key-9\}/],
      ["bad_mesh_config.json", /meshConfig\.outboundTrafficPolicy\.mode: expected one of ALLOW_ANY, REGISTRY_ONLY, got "SOMETIMES"/],
      ["bad_request_from.json", /request\.from: expected a workload of this scenario/],
    ];
    const results = await Promise.all(table.map(([f]) => simulate(f)));
    for (const [i, [file, message]] of table.entries()) {
      assert.equal(results[i].status, 2, `${file}: ${results[i].stderr}`);
      assert.equal(results[i].stdout, "", file);
      assert.match(results[i].stderr, message, file);
    }
  });
});
