import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { header, readResponses } from "../support/http_messages.ts";
import { tempDir } from "../support/processes.ts";
import { type RawHttpApp, startRawHttpApp } from "../support/raw_http_app.ts";
import { stats } from "./security_support.ts";

// Issue 25 item 1: a second request hidden in a body must not get past an
// AuthorizationPolicy DENY. A real sidecar (and a real ingress gateway) in
// front of a raw TCP app that records exactly the bytes it receives: every
// body reaches the app framed by the proxy (chunked or with a length), so
// the app reads one request where the policy saw one; the framings Envoy
// refuses are refused and nothing reaches the app.

const POLICIES = `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: deny-admin, namespace: foo}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: ["/admin*"]}}]}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: ingress-deny-admin, namespace: mesh-system}
spec:
  selector: {matchLabels: {mesh: ingressgateway}}
  action: DENY
  rules: [{to: [{operation: {paths: ["/admin*"]}}]}]
---
apiVersion: networking.mesh.io/v1alpha3
kind: Gateway
metadata: {name: gateway, namespace: foo}
spec:
  selector: {mesh: ingressgateway}
  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]
---
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: {name: app, namespace: foo}
spec:
  hosts: [app.example.com]
  gateways: [gateway]
  http: [{route: [{destination: {host: app.foo.svc.cluster.local, port: {number: 8000}}}]}]
`;

const HIDDEN = "GET /admin/secret HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: 0\r\n\r\n";
const chunked = (body: string) => `${Buffer.byteLength(body, "latin1").toString(16)};ext=1\r\n${body}\r\n0\r\n\r\n`;

interface Row {
  name: string;
  method: string;
  /** Header lines after Host. */
  fields: string[];
  /** The bytes after the head. */
  wireBody: string;
  /** "forwarded": the app gets the one request with `HIDDEN` as its body; otherwise the status of the refusal. */
  expect: "forwarded" | 400 | 501;
}

const rows: Row[] = [
  ...["GET", "HEAD", "DELETE", "OPTIONS", "POST"].map((method): Row => ({ name: `${method} with a chunked body holding a request`, method, fields: ["Transfer-Encoding: chunked"], wireBody: chunked(HIDDEN), expect: "forwarded" })),
  ...["GET", "HEAD", "DELETE", "OPTIONS", "POST"].map((method): Row => ({ name: `${method} whose Content-Length Connection names`, method, fields: [`Content-Length: ${HIDDEN.length}`, "Connection: content-length"], wireBody: HIDDEN, expect: "forwarded" })),
  { name: "GET whose Transfer-Encoding Connection names", method: "GET", fields: ["Transfer-Encoding: chunked", "Connection: Transfer-Encoding"], wireBody: chunked(HIDDEN), expect: "forwarded" },
  { name: "Transfer-Encoding and Content-Length together", method: "GET", fields: ["Transfer-Encoding: chunked", "Content-Length: 5"], wireBody: chunked(HIDDEN), expect: 400 },
  { name: "a Transfer-Encoding other than chunked", method: "POST", fields: ["Transfer-Encoding: gzip, chunked"], wireBody: chunked(HIDDEN), expect: 501 },
  { name: "Transfer-Encoding in an HTTP/1.0 request", method: "POST", fields: ["Transfer-Encoding: chunked"], wireBody: chunked(HIDDEN), expect: 400 },
];

/** Writes `bytes` on a fresh connection and reads until the proxy closes it. */
function exchange(port: number, bytes: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1", () => socket.write(Buffer.from(bytes, "latin1")));
    const deadline = setTimeout(() => socket.destroy(), 60_000);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(deadline);
      resolve(Buffer.concat(chunks));
    });
  });
}

describe("request smuggling past a DENY (issue 25 item 1)", { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-smuggling-");
  const configDir = join(dir, "config");
  let ca: Awaited<ReturnType<typeof startMeshCa>> | undefined;
  let app: RawHttpApp;
  let sidecar: SecureWorkload;
  let gateway: SecureWorkload;

  before(async () => {
    mkdirSync(configDir);
    writeFileSync(join(configDir, "policies.yaml"), POLICIES);
    app = await startRawHttpApp();
    ca = await startMeshCa();
    sidecar = await startSecureWorkload({ name: "app", namespace: "foo", configDir, ca, appPort: app.port });
    gateway = await startSecureWorkload({
      name: "mesh-ingressgateway", namespace: "mesh-system", serviceAccount: "mesh-ingressgateway-service-account", labels: { mesh: "ingressgateway" }, gateway: true, configDir, ca,
      endpoints: [`app.foo.svc.cluster.local:8000=127.0.0.1:${app.port}`],
    });
  });
  after(async () => {
    await sidecar?.stop();
    await gateway?.stop();
    await ca?.stop();
    await app?.close();
  });

  for (const via of ["sidecar", "gateway"] as const) {
    for (const row of rows) {
      it(`${via}: ${row.name} → ${row.expect}`, async () => {
        const port = via === "sidecar" ? sidecar.inbound : gateway.inbound;
        const version = row.name.includes("HTTP/1.0") ? "HTTP/1.0" : "HTTP/1.1";
        const connection = row.fields.some((f) => f.startsWith("Connection:")) ? [] : ["Connection: close"];
        const fields = row.fields.map((f) => (f.startsWith("Connection:") ? `${f}, close` : f));
        const request = `${row.method} /public ${version}\r\nHost: app.example.com\r\n${[...fields, ...connection].map((f) => `${f}\r\n`).join("")}\r\n${row.wireBody}`;
        const before = app.requests.length;
        const { responses, rest, malformed } = readResponses(await exchange(port, request), [row.method]);
        assert.equal(malformed, undefined);
        assert.equal(rest.length, 0, `bytes after the response: ${JSON.stringify(rest.toString("latin1"))}`);
        assert.equal(responses.length, 1, "one response");
        const got = app.requests.slice(before);
        assert.deepEqual(app.malformed, []);
        for (const r of app.requests) assert.ok(!r.target.startsWith("/admin"), `the app received ${r.method} ${r.target}`);
        if (row.expect === "forwarded") {
          assert.equal(responses[0].status, 200);
          assert.equal(got.length, 1, `the app read ${got.length} requests: ${got.map((r) => `${r.method} ${r.target}`).join(", ")}`);
          assert.equal(got[0].method, row.method);
          assert.equal(got[0].target, "/public");
          assert.equal(got[0].body.toString("latin1"), HIDDEN, "the hidden request reached the app as the body it was");
          const framing = [...header(got[0].headers, "content-length").map((v) => `content-length: ${v}`), ...header(got[0].headers, "transfer-encoding").map((v) => `transfer-encoding: ${v}`)];
          assert.equal(framing.length, 1, `one framing field: ${framing.join(", ")}`);
        } else {
          assert.equal(responses[0].status, row.expect);
          assert.equal(got.length, 0, "nothing reached the app");
        }
        // Byte for byte: every connection the app saw holds only the well-framed requests it read.
        const received = Buffer.concat(app.connections);
        const read = Buffer.concat(app.requests.map((r) => r.raw));
        assert.equal(received.length, read.length, "the app received no byte outside a request it read");
      });
    }
  }

  it("refusals are counted per reason on /stats", async () => {
    const s = await stats(sidecar.adminUrl);
    assert.ok((s.get("listener.inbound.rejected_framing.http1.invalid_transfer_encoding") ?? 0) >= 1);
    assert.ok((s.get("listener.inbound.rejected_framing.http1.transfer_encoding_not_allowed") ?? 0) >= 1);
  });
});
