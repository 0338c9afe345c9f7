import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { ISSUER, type JwtKit, type Outcome, send, startJwtKit, stats, upstreamHeaders } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";

// Spec 1, rules 12–13 and the Errors row "DENY rule matched (no request
// principal) → 403": DENY policies with notRequestPrincipals, with and
// without paths; decisions named in the log and /stats; a peer principal
// (from the client sidecar's certificate) in a rule.

const config = (jwksUri: string) => `apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: {name: jwt, namespace: foo}
spec:
  jwtRules: [{issuer: "${ISSUER}", jwksUri: "${jwksUri}"}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: require-jwt, namespace: foo}
spec:
  selector: {matchLabels: {app: secure}}
  action: DENY
  rules:
  - from: [{source: {notRequestPrincipals: ["*"]}}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: require-jwt-admin, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  action: DENY
  rules:
  - from: [{source: {principals: ["cluster.local/ns/foo/sa/sleep"]}}]
    to: [{operation: {paths: ["/no-sleep"]}}]
  - from: [{source: {notRequestPrincipals: ["*"]}}]
    to: [{operation: {paths: ["/admin*"]}}]
`;

const status = (o: Outcome) => (o.outcome === "http" ? o.status : o.outcome);

describe("security: authorization (rules 12–13)", () => {
  const dir = tempDir("mesh-sec-authz-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let kit: JwtKit;
  const w: Record<string, SecureWorkload> = {};

  before(async () => {
    kit = await startJwtKit();
    writeFileSync(join(dir, "policies.yaml"), config(kit.jwksUri));
    ca = await startMeshCa();
    const base = { configDir: dir, ca, namespace: "foo" };
    [w.secure, w.httpbin] = await Promise.all([startSecureWorkload({ ...base, name: "secure" }), startSecureWorkload({ ...base, name: "httpbin" })]);
    w.sleep = await startSecureWorkload({
      ...base,
      name: "sleep",
      endpoints: [`httpbin.foo.svc.cluster.local:8000=127.0.0.1:${w.httpbin.inbound},sidecar,sa=httpbin`],
    });
  });
  after(async () => {
    await Promise.all(Object.values(w).map((x) => x.stop()));
    await ca?.stop();
    kit?.close();
  });

  it("rule 12 / Errors: DENY notRequestPrincipals [*] rejects a request without a valid token with 403 RBAC: access denied", async () => {
    const res = await send(w.secure.inbound, { path: "/anything" });
    assert.equal(status(res), 403);
    assert.equal(res.outcome === "http" && res.body, "RBAC: access denied");
    assert.equal(w.secure.app.seen.length, 0, "denied requests never reach the app");
    assert.equal(status(await send(w.secure.inbound, { path: "/anything", headers: { authorization: `Bearer ${await kit.token()}` } })), 200);
    // An invalid token is a 401 (authentication runs first), not a 403.
    assert.equal(status(await send(w.secure.inbound, { headers: { authorization: `Bearer ${await kit.token({ key: "rogue" })}` } })), 401);
  });

  it("rule 13: with to.operation.paths only matching paths are denied; the query is ignored and paths are normalized first", async () => {
    assert.equal(status(await send(w.httpbin.inbound, { path: "/admin/users?x=1" })), 403);
    assert.equal(status(await send(w.httpbin.inbound, { path: "/public/../admin" })), 403, "normalized to /admin");
    assert.equal(status(await send(w.httpbin.inbound, { path: "/%61dmin" })), 403, "unreserved characters decoded");
    assert.equal(status(await send(w.httpbin.inbound, { path: "/headers" })), 200);
    assert.equal(status(await send(w.httpbin.inbound, { path: "/admin", headers: { authorization: `Bearer ${await kit.token()}` } })), 200);
  });

  it("the peer principal from mutual TLS matches principals; plain text has none", async () => {
    const viaSleep = await send(w.sleep.outbound, { host: "httpbin.foo.svc.cluster.local:8000", path: "/no-sleep" });
    assert.equal(status(viaSleep), 403);
    assert.equal(status(await send(w.httpbin.inbound, { path: "/no-sleep" })), 200);
    upstreamHeaders(await send(w.sleep.outbound, { host: "httpbin.foo.svc.cluster.local:8000", path: "/headers" }));
  });

  it("every decision names its policy and rule in /stats and the log", async () => {
    const s = await stats(w.httpbin.adminUrl);
    assert.ok((s.get("rbac.policy.foo/require-jwt-admin.rule_1.denied") ?? 0) >= 3);
    assert.ok((s.get("rbac.policy.foo/require-jwt-admin.rule_0.denied") ?? 0) >= 1);
    assert.ok((s.get("rbac.denied") ?? 0) >= 4);
    assert.ok((s.get("rbac.reason.no_allow_policy") ?? 0) >= 2);
    assert.match(
      w.httpbin.sidecar.output(),
      /rbac denied GET \/admin\/users\?x=1 from [^:]+:\d+: reason=denied_by_policy policy=foo\/require-jwt-admin rule=1 action=DENY/,
    );
  });
});
