import assert from "node:assert/strict";
import { renameSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { AUTHORIZATION_SERVICE, envoyService } from "../../host/wire/envoy_grpc.ts";
import { type Outcome, send, stats, upstreamHeaders, waitFor } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";
import { EXT_AUTHZ_MESH_CONFIG } from "../support/ext_authz_sample.ts";

// CUSTOM and AUDIT AuthorizationPolicies in real sidecars (security.md §5.1):
// upstream's ext-authz task renamed — its mesh config providers, its CUSTOM
// policy on /headers, its sample authorizer's rule (allow when
// `x-ext-authz: allow`) — served by a real HTTP authorizer and a real gRPC
// envoy.service.auth.v3.Authorization server on loopback.

const DENIED = "denied by ext_authz for not found header `x-ext-authz: allow` in the request";

/** Upstream's sample authorizer over HTTP: allow on `x-ext-authz: allow`, else 403 with its body. */
function startHttpAuthorizer(): Promise<{ server: Server; port: number; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    if (req.headers["x-ext-authz"] === "allow") res.writeHead(200, { "x-ext-authz-check-result": "allowed" }).end();
    else res.writeHead(403, { "x-ext-authz-check-result": "denied", "content-type": "text/plain" }).end(DENIED);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port, seen })));
}

type Json = Record<string, any>;

/** The same rule as an envoy.service.auth.v3.Authorization server. */
async function startGrpcAuthorizer(): Promise<{ server: grpc.Server; port: number; seen: Json[] }> {
  const seen: Json[] = [];
  const Authorization = envoyService(AUTHORIZATION_SERVICE.file, AUTHORIZATION_SERVICE.service, Number);
  const server = new grpc.Server();
  server.addService(Authorization.service, {
    Check(call: grpc.ServerUnaryCall<Json, Json>, cb: grpc.sendUnaryData<Json>) {
      seen.push(call.request);
      const http = call.request.attributes.request.http;
      if (http.headers["x-ext-authz"] === "allow")
        cb(null, { status: { code: 0 }, ok_response: { headers: [{ header: { key: "x-ext-authz-check-result", value: "allowed" } }] } });
      else
        cb(null, {
          status: { code: grpc.status.PERMISSION_DENIED },
          denied_response: { status: { code: 403 }, body: DENIED, headers: [{ header: { key: "x-ext-authz-check-result", value: "denied" } }] },
        });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { server, port, seen };
}

const policies = (httpProvider: string) => `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: ext-authz, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  action: CUSTOM
  provider: {name: ${httpProvider}}
  rules:
  - to: [{operation: {paths: ["/headers"]}}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: ext-authz-grpc, namespace: foo}
spec:
  selector: {matchLabels: {app: grpcbin}}
  action: CUSTOM
  provider: {name: sample-ext-authz-grpc}
  rules:
  - to: [{operation: {paths: ["/headers"]}}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: audit-admin, namespace: foo}
spec:
  action: AUDIT
  rules:
  - to: [{operation: {paths: ["/admin*"]}}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: deny-delete, namespace: foo}
spec:
  action: DENY
  rules:
  - to: [{operation: {methods: ["DELETE"]}}]
`;

const status = (o: Outcome) => (o.outcome === "http" ? o.status : o.outcome);

describe("security: CUSTOM (external authorizers) and AUDIT policies", () => {
  const dir = tempDir("mesh-sec-extauthz-");
  const aside = tempDir("mesh-sec-extauthz-mesh-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let httpAuthz: Awaited<ReturnType<typeof startHttpAuthorizer>>;
  let grpcAuthz: Awaited<ReturnType<typeof startGrpcAuthorizer>>;
  const w: Record<string, SecureWorkload> = {};

  before(async () => {
    [httpAuthz, grpcAuthz, ca] = await Promise.all([startHttpAuthorizer(), startGrpcAuthorizer(), startMeshCa()]);
    writeFileSync(join(dir, "policies.yaml"), policies("sample-ext-authz-http"));
    const meshConfigFile = join(aside, "mesh.yaml");
    writeFileSync(meshConfigFile, EXT_AUTHZ_MESH_CONFIG);
    const endpoints = [`ext-authz.foo.svc.cluster.local:8000=127.0.0.1:${httpAuthz.port}`, `ext-authz.foo.svc.cluster.local:9000=127.0.0.1:${grpcAuthz.port}`];
    const base = { configDir: dir, ca, namespace: "foo", meshConfigFile, endpoints };
    [w.httpbin, w.grpcbin] = await Promise.all([startSecureWorkload({ ...base, name: "httpbin" }), startSecureWorkload({ ...base, name: "grpcbin" })]);
  });
  after(async () => {
    await Promise.all(Object.values(w).map((x) => x.stop()));
    await ca?.stop();
    httpAuthz?.server.close();
    grpcAuthz?.server.forceShutdown();
  });

  it("HTTP authorizer: only the paths the CUSTOM rule matches are checked; its 403 and body reach the client; on allow its header reaches the app", async () => {
    const denied = await send(w.httpbin.inbound, { path: "/headers" });
    assert.equal(status(denied), 403);
    assert.equal(denied.outcome === "http" && denied.body, DENIED);
    assert.equal(denied.outcome === "http" && denied.headers["x-ext-authz-check-result"], "denied", "headersToDownstreamOnDeny");
    assert.equal(w.httpbin.app.seen.length, 0, "a denied request never reaches the app");
    const allowed = upstreamHeaders(await send(w.httpbin.inbound, { path: "/headers", headers: { "x-ext-authz": "allow" } }));
    assert.equal(allowed["x-ext-authz-check-result"], "allowed", "headersToUpstreamOnAllow");
    const checked = httpAuthz.seen.length;
    assert.equal(status(await send(w.httpbin.inbound, { path: "/ip" })), 200, "/ip is not covered by the CUSTOM rule");
    assert.equal(httpAuthz.seen.length, checked, "the authorizer was not asked for /ip");
    const last = httpAuthz.seen.at(-1)!;
    assert.equal(last.url, "/headers");
    assert.equal(last.method, "GET");
    assert.equal(last.headers["x-ext-authz"], "allow", "includeRequestHeadersInCheck");
  });

  it("CUSTOM comes before DENY: a DELETE the authorizer refuses gets its 403; one it allows meets the DENY policy", async () => {
    const refused = await send(w.httpbin.inbound, { path: "/headers", method: "DELETE" });
    assert.equal(refused.outcome === "http" && refused.body, DENIED);
    const allowedThenDenied = await send(w.httpbin.inbound, { path: "/headers", method: "DELETE", headers: { "x-ext-authz": "allow" } });
    assert.equal(status(allowedThenDenied), 403);
    assert.equal(allowedThenDenied.outcome === "http" && allowedThenDenied.body, "RBAC: access denied");
  });

  it("gRPC authorizer (envoy.service.auth.v3.Authorization/Check): denied_response and ok_response headers applied; the CheckRequest carries the request", async () => {
    const denied = await send(w.grpcbin.inbound, { path: "/headers" });
    assert.equal(status(denied), 403);
    assert.equal(denied.outcome === "http" && denied.body, DENIED);
    assert.equal(
      upstreamHeaders(await send(w.grpcbin.inbound, { path: "/headers?x=1", headers: { "x-ext-authz": "allow" } }))["x-ext-authz-check-result"],
      "allowed",
    );
    const http = grpcAuthz.seen.at(-1)!.attributes.request.http;
    assert.deepEqual([http.method, http.path, http.query, http.headers[":path"]], ["GET", "/headers?x=1", "x=1", "/headers?x=1"]);
    assert.equal(status(await send(w.grpcbin.inbound, { path: "/ip" })), 200);
  });

  it("AUDIT marks and never decides: /admin is served and counted as audited, a DELETE /admin is still denied", async () => {
    assert.equal(status(await send(w.httpbin.inbound, { path: "/admin/users" })), 200);
    assert.equal(status(await send(w.httpbin.inbound, { path: "/admin/users", method: "DELETE" })), 403);
    const s = await stats(w.httpbin.adminUrl);
    assert.equal(s.get("rbac.audited"), 2);
    assert.ok((s.get("ext_authz.denied") ?? 0) >= 2);
    assert.ok((s.get("ext_authz.ok") ?? 0) >= 2);
    assert.match(w.httpbin.sidecar.output(), /rbac audited GET \/admin\/users from [^ ]+: policy=foo\/audit-admin rule=0/);
  });

  it("a CUSTOM policy naming an unknown provider is refused with spec.provider.name; the last good configuration keeps serving", async () => {
    const before = (await stats(w.httpbin.adminUrl)).get("config.errors") ?? 0;
    // Written aside and renamed in, so the watcher never reads a half-written file.
    const staged = join(aside, "policies.yaml");
    writeFileSync(staged, policies("no-such-authorizer"));
    renameSync(staged, join(dir, "policies.yaml"));
    await waitFor("config refused", async () => (((await stats(w.httpbin.adminUrl)).get("config.errors") ?? 0) > before ? true : undefined));
    assert.match(
      w.httpbin.sidecar.output(),
      /AuthorizationPolicy foo\/ext-authz: spec\.provider\.name: unknown extension provider "no-such-authorizer" \(meshConfig extensionProviders has "sample-ext-authz-grpc", "sample-ext-authz-http"\)/,
    );
    assert.equal(status(await send(w.httpbin.inbound, { path: "/headers" })), 403, "the old CUSTOM policy still applies");
  });

  it("an authorizer that cannot be reached: the request is denied with statusOnError (403) and an empty body (failOpen false)", async () => {
    grpcAuthz.server.forceShutdown();
    const r = await send(w.grpcbin.inbound, { path: "/headers", headers: { "x-ext-authz": "allow" } });
    assert.equal(status(r), 403);
    assert.equal(r.outcome === "http" && r.body, "");
    assert.ok(((await stats(w.grpcbin.adminUrl)).get("ext_authz.error") ?? 0) >= 1);
  });
});
