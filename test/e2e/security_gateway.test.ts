import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AGENT_BIN } from "../../host/demo/local_mesh.ts";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { ISSUER, type JwtKit, type Outcome, send, startJwtKit, upstreamHeaders } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";

// Issue 6 item 5 and the Errors row "unmatched route, REGISTRY_ONLY with the
// fallthrough route → 502": an ingress gateway (the sidecar with --gateway,
// selected by its labels) routing by Host to VirtualService destinations over
// mutual TLS, with a JWT policy in mesh-system covering every bound service.

const config = (jwksUri: string) => `apiVersion: networking.mesh.io/v1alpha3
kind: Gateway
metadata: {name: httpbin-gateway, namespace: foo}
spec:
  selector: {mesh: ingressgateway}
  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]
---
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: {name: httpbin, namespace: foo}
spec:
  hosts: [httpbin.example.com]
  gateways: [httpbin-gateway]
  http: [{route: [{destination: {host: httpbin.foo.svc.cluster.local, port: {number: 8000}}}]}]
---
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: {name: missing, namespace: foo}
spec:
  hosts: [missing.example.com]
  gateways: [foo/httpbin-gateway]
  http: [{route: [{destination: {host: nowhere.foo.svc.cluster.local, port: {number: 8000}}}]}]
---
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: {name: ingress-jwt, namespace: mesh-system}
spec:
  selector: {matchLabels: {mesh: ingressgateway}}
  jwtRules: [{issuer: "${ISSUER}", jwksUri: "${jwksUri}"}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: ingress-admin, namespace: mesh-system}
spec:
  selector: {matchLabels: {mesh: ingressgateway}}
  action: DENY
  rules: [{from: [{source: {notRequestPrincipals: ["*"]}}], to: [{operation: {paths: ["/admin*"]}}]}]
`;

const status = (o: Outcome) => (o.outcome === "http" ? o.status : o.outcome);

describe("security: ingress gateway and registry-only", () => {
  const dir = tempDir("mesh-sec-gw-");
  // Files the sidecars must not read as configuration: beside the folder, not in it.
  const outside = tempDir("mesh-sec-gw-files-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let kit: JwtKit;
  const w: Record<string, SecureWorkload> = {};
  const gw = (host: string, path = "/headers", headers: Record<string, string> = {}) => send(w.gateway.inbound, { host, path, headers });

  before(async () => {
    kit = await startJwtKit();
    writeFileSync(join(dir, "resources.yaml"), config(kit.jwksUri));
    const meshFile = join(outside, "mesh.yaml");
    writeFileSync(meshFile, "outboundTrafficPolicy: {mode: REGISTRY_ONLY}\n");
    ca = await startMeshCa();
    const base = { configDir: dir, ca };
    w.httpbin = await startSecureWorkload({ ...base, name: "httpbin", namespace: "foo" });
    const endpoint = `httpbin.foo.svc.cluster.local:8000=127.0.0.1:${w.httpbin.inbound},sidecar,sa=httpbin`;
    [w.gateway, w.registryOnly, w.noFallthrough] = await Promise.all([
      startSecureWorkload({
        ...base,
        name: "mesh-ingressgateway",
        namespace: "mesh-system",
        serviceAccount: "mesh-ingressgateway-service-account",
        labels: { mesh: "ingressgateway" },
        gateway: true,
        endpoints: [endpoint],
      }),
      startSecureWorkload({ ...base, name: "sleep", namespace: "foo", meshConfigFile: meshFile, endpoints: [endpoint] }),
      startSecureWorkload({
        ...base,
        name: "sleep",
        namespace: "foo",
        meshConfigFile: meshFile,
        endpoints: [endpoint],
        env: { DISCO_ENABLE_FALLTHROUGH_ROUTE: "false" },
      }),
    ]);
  });
  after(async () => {
    await Promise.all(Object.values(w).map((x) => x.stop()));
    await ca?.stop();
    kit?.close();
  });

  it("routes by Host to the VirtualService destination over mutual TLS; the backend sees the gateway's identity", async () => {
    const h = upstreamHeaders(await gw("httpbin.example.com", "/headers", { "x-forwarded-client-cert": "By=forged" }));
    assert.match(h["x-forwarded-client-cert"], /;URI=spiffe:\/\/cluster\.local\/ns\/mesh-system\/sa\/mesh-ingressgateway-service-account$/);
    assert.equal(h.host, "httpbin.example.com");
  });

  it("no matching route → 404 with an empty body; a destination missing from the registry → 503", async () => {
    const res = await gw("unknown.example.com");
    assert.equal(status(res), 404);
    assert.equal(res.outcome === "http" && res.body, "");
    assert.equal(status(await gw("missing.example.com")), 503);
  });

  it("a JWT policy in mesh-system on the gateway covers every bound service", async () => {
    const bad = await gw("httpbin.example.com", "/headers", { authorization: `Bearer ${await kit.token({ key: "rogue" })}` });
    assert.equal(status(bad), 401);
    assert.equal(status(await gw("httpbin.example.com", "/admin")), 403);
    assert.equal(status(await gw("httpbin.example.com", "/admin", { authorization: `Bearer ${await kit.token()}` })), 200);
  });

  it("Errors: REGISTRY_ONLY with the fallthrough route answers 502 to an unknown host; registered services still work", async () => {
    const res = await send(w.registryOnly.outbound, { host: "www.example.org" });
    assert.equal(status(res), 502);
    assert.equal(res.outcome === "http" && res.body, "");
    upstreamHeaders(await send(w.registryOnly.outbound, { host: "httpbin.foo.svc.cluster.local:8000" }));
    assert.equal(status(await send(w.noFallthrough.outbound, { host: "www.example.org" })), 404, "without the fallthrough route: no route");
  });

  it("a bad mesh config file exits 2 naming the field path; security flags without --caAddress are refused", () => {
    const bad = join(outside, "bad.yaml");
    writeFileSync(bad, "outboundTrafficPolicy: {mode: SOMETIMES}\n");
    const r = spawnSync(
      process.execPath,
      [
        AGENT_BIN,
        "proxy",
        "--configDir",
        dir,
        "--caAddress",
        ca.address,
        "--meshConfigFile",
        bad,
        "--proxyAdminPort",
        "0",
        "--inboundPort",
        "0",
        "--outboundPort",
        "0",
      ],
      { encoding: "utf8" },
    );
    assert.equal(r.status, 2);
    assert.match(r.stdout + r.stderr, /outboundTrafficPolicy\.mode: expected one of ALLOW_ANY, REGISTRY_ONLY, got "SOMETIMES"/);
    const r2 = spawnSync(
      process.execPath,
      [AGENT_BIN, "proxy", "--configDir", dir, "--gateway", "--proxyAdminPort", "0", "--inboundPort", "0", "--outboundPort", "0"],
      { encoding: "utf8" },
    );
    assert.equal(r2.status, 2);
    assert.match(r2.stdout + r2.stderr, /need --caAddress/);
  });
});
