// Mutual TLS origination on the project's HTTP/1.1 client (UpstreamRequests
// with WorkloadTls's connector), between a real client and a real Node HTTPS
// app that asks for client certificates, every certificate issued by a
// mesh CA (the one `meshctl x simulate` runs in process): one handshake for
// many requests, session resumption on reconnect, bodies of megabytes both
// ways, secure naming refused
// (503, upstream_connect_error) also when a session to the same address
// exists, and a rotated workload certificate used by the next connection.
import assert from "node:assert/strict";
import { X509Certificate, createHash } from "node:crypto";
import { once } from "node:events";
import { type IncomingMessage, type ServerResponse, createServer, request } from "node:http";
import { type Server as HttpsServer, createServer as createHttpsServer } from "node:https";
import { readFileSync } from "node:fs";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { after, afterEach, before, describe, it } from "node:test";
import { type WorkloadCertificate, requestWorkloadCertificate, splitPem } from "../../host/anchor/client.ts";
import { type SimulateCa, startSimulateCa } from "../../host/cli/meshctl/simulate/ca.ts";
import { requestFraming } from "../../host/proxy/http/request_framing.ts";
import { RequestProperties, connectionFacts } from "../../host/proxy/request_properties.ts";
import { UpstreamRequests } from "../../host/proxy/router/upstream_request.ts";
import { WorkloadTls } from "../../host/proxy/workload_tls.ts";
import { tempDir } from "../support/processes.ts";

const TD = "cluster.local";
const id = (sa: string) => `spiffe://${TD}/ns/foo/sa/${sa}`;
/** A response body many TLS records and socket reads long. */
const BIG = Buffer.alloc(4 << 20, "0123456789abcdef");
const fingerprint = (c: WorkloadCertificate) => new X509Certificate(splitPem(c.certChainPem)[0]).fingerprint256;

interface Handshake {
  reused: boolean;
  /** The client certificate's SHA-256 fingerprint. */
  client: string;
  socket: TLSSocket;
}

interface Outcome {
  status: number;
  body: string;
  details?: string;
  errors: string[];
}

describe("UpstreamRequests: mutual TLS on the HTTP/1.1 client", () => {
  let ca: SimulateCa;
  const dir = tempDir("upstream-tls-");
  const cleanups: Array<() => unknown> = [];

  before(async () => {
    ca = await startSimulateCa(TD, dir);
  });
  after(async () => {
    await ca.stop();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function issue(sa: string): Promise<WorkloadCertificate> {
    const token = readFileSync(await ca.tokenFile("foo", sa), "utf8").trim();
    return requestWorkloadCertificate({ address: ca.address, identity: id(sa), keyAlgorithm: "ECDSA", transport: ca.transport, auth: { token } });
  }

  /** An HTTPS app with the certificate of `sa`, requiring a mesh client certificate; its handshakes in order. */
  async function app(sa: string): Promise<{ port: number; handshakes: Handshake[]; connections: Socket[]; requests: string[]; server: HttpsServer }> {
    const c = await issue(sa);
    const requests: string[] = [];
    const server = createHttpsServer({ key: c.keyPem, cert: c.certChainPem, ca: c.rootPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      requests.push(req.url ?? "");
      if (req.url === "/big") return void res.end(BIG);
      const hash = createHash("sha256");
      let length = 0;
      req.on("data", (c: Buffer) => {
        length += c.length;
        hash.update(c);
      });
      req.on("end", () => res.end(req.method === "POST" ? `${length} ${hash.digest("hex")}` : `hello ${req.url}`));
    });
    // Only the client closes idle connections here (Node's default idle timeout is 5 s).
    server.keepAliveTimeout = 60_000;
    const handshakes: Handshake[] = [];
    const connections: Socket[] = [];
    server.on("connection", (s: Socket) => connections.push(s));
    server.on("secureConnection", (s: TLSSocket) =>
      handshakes.push({ reused: s.isSessionReused(), client: (s.getPeerCertificate() as { fingerprint256: string }).fingerprint256, socket: s }),
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(
      () => new Promise((r) => server.close(r)),
      () => server.closeAllConnections(),
    );
    return { port: (server.address() as AddressInfo).port, handshakes, connections, requests, server };
  }

  /** The sidecar's workload certificate; `fetch` gives each certificate it asks for. */
  async function workload(fetch: () => Promise<WorkloadCertificate>): Promise<WorkloadTls> {
    const tls = new WorkloadTls({ caAddress: ca.address, identity: id("sleep"), trustDomain: TD, ttlMs: 0, keyAlgorithm: "ECDSA", request: fetch });
    await tls.start();
    cleanups.push(() => tls.stop());
    return tls;
  }

  /** A proxy forwarding each request to 127.0.0.1:`appPort` with mutual TLS, expecting the identity `expected(path)`. */
  async function proxy(
    tls: WorkloadTls,
    appPort: number,
    expected: (path: string) => string | undefined,
  ): Promise<(path: string, body?: Buffer) => Promise<Outcome>> {
    const upstreams = new UpstreamRequests({ onResponseHeaders: (_id, h) => h });
    cleanups.push(() => upstreams.close());
    const errors = new Map<string, string[]>();
    const details = new Map<string, string>();
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? "/";
      errors.set(path, []);
      upstreams.send(
        {
          req,
          res,
          authority: "httpbin.foo.svc.cluster.local:8000",
          framing: requestFraming(req.method ?? "GET", req.httpVersion, undefined, req.headers["content-length"] ? [req.headers["content-length"]] : undefined),
          props: new RequestProperties(connectionFacts(req.socket as Socket), "HTTP/1.1"),
          reply: (r) => {
            details.set(path, r.details);
            if (!res.headersSent) res.writeHead(r.status).end(r.body);
          },
          complete: () => undefined,
          upstreamError: (m) => errors.get(path)?.push(m),
        },
        0,
        [],
        req.method ?? "GET",
        path,
        { kind: "forward", host: "127.0.0.1", port: appPort, tls: tls.upstreamTls("httpbin.foo.svc.cluster.local", 8000, expected(path)) },
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(
      () => new Promise((r) => server.close(r)),
      () => server.closeAllConnections(),
    );
    const port = (server.address() as AddressInfo).port;
    return (path, body) =>
      new Promise((resolve, reject) => {
        request({ host: "127.0.0.1", port, path, agent: false, method: body ? "POST" : "GET" }, (res) => {
          let body = "";
          res.setEncoding("latin1");
          res.on("data", (c) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body, details: details.get(path), errors: errors.get(path) ?? [] }));
        })
          .on("error", reject)
          .end(body);
      });
  }

  async function until(what: string, done: () => boolean, deadlineMs = 20_000): Promise<void> {
    const end = Date.now() + deadlineMs;
    while (!done()) {
      if (Date.now() > end) assert.fail(`not within ${deadlineMs} ms: ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("many requests share one handshake; a reconnect resumes the session", async () => {
    const sleep = await issue("sleep");
    const a = await app("httpbin");
    const tls = await workload(async () => sleep);
    const get = await proxy(tls, a.port, () => id("httpbin"));
    for (let i = 0; i < 10; i++) assert.deepEqual(await get(`/r${i}`), { status: 200, body: `hello /r${i}`, details: undefined, errors: [] });
    assert.equal(a.handshakes.length, 1, "ten requests in turn: one connection, one handshake");
    assert.equal(a.handshakes[0].client, fingerprint(sleep), "the workload certificate is the client certificate");
    assert.equal(a.handshakes[0].reused, false);
    // The app closes its connections: the next request opens one, resuming the session the first left.
    a.server.closeAllConnections();
    const connector = tls.upstreamTls("httpbin.foo.svc.cluster.local", 8000, id("httpbin")).connector;
    await until("the client saw its connection closed", () => connector.open === 0);
    assert.equal((await get("/again")).status, 200);
    assert.equal(a.handshakes.length, 2);
    assert.equal(a.handshakes[1].reused, true, "the reconnect resumed the session");
  });

  it("a request body and a 4 MiB response go through whole", async () => {
    const sleep = await issue("sleep");
    const a = await app("httpbin");
    const get = await proxy(await workload(async () => sleep), a.port, () => id("httpbin"));
    const body = Buffer.alloc(3 << 20, "request body ");
    const posted = await get("/upload", body);
    assert.equal(posted.status, 200);
    assert.equal(posted.body, `${body.length} ${createHash("sha256").update(body).digest("hex")}`);
    const big = await get("/big");
    assert.equal(big.status, 200);
    assert.equal(big.body, BIG.toString("latin1"));
    assert.equal(a.handshakes.length, 1, "both on the one connection");
  });

  it("secure naming: a server without the expected identity is refused (503, upstream_connect_error), even with a session to its address", async () => {
    const sleep = await issue("sleep");
    const impostor = await app("impostor");
    const tls = await workload(async () => sleep);
    const get = await proxy(tls, impostor.port, (path) => (path.startsWith("/as-impostor") ? id("impostor") : id("httpbin")));
    // Expecting the identity it has, the server is reached (a connection and a session to its address exist).
    assert.equal((await get("/as-impostor")).status, 200);
    const refused = await get("/as-httpbin");
    assert.equal(refused.status, 503);
    assert.equal(refused.details, "upstream_connect_error");
    assert.equal(refused.body, "upstream connect error or disconnect/reset before headers");
    assert.deepEqual(refused.errors, [`upstream 127.0.0.1:${impostor.port}: secure naming: server presented ${id("impostor")}, expected ${id("httpbin")}`]);
    assert.deepEqual(impostor.requests, ["/as-impostor"], "the refused request never reached the server");
    // It went on a connection of its own, and its identity was checked (Node checks none on a resumed session, which would have passed).
    assert.equal(impostor.connections.length, 2);
  });

  it("a rotated workload certificate is the next connection's; the old connection is closed", async () => {
    const first = await issue("sleep");
    const second = await issue("sleep");
    let rotate: () => void = () => undefined;
    const rotation = new Promise<void>((r) => (rotate = r));
    let asked = 0;
    // The first certificate is due at once: the renewal waits for the test.
    const tls = await workload(async () => (asked++ === 0 ? { ...first, rotateAt: new Date() } : rotation.then(() => second)));
    const a = await app("httpbin");
    const get = await proxy(tls, a.port, () => id("httpbin"));
    assert.equal((await get("/before")).status, 200);
    assert.equal(a.handshakes[0].client, fingerprint(first));
    rotate();
    await until("the renewal is in use", () => tls.rotations === 2);
    assert.equal((await get("/after")).status, 200);
    assert.equal(a.handshakes.length, 2, "the pooled connection of the previous certificate is not reused");
    assert.equal(a.handshakes[1].client, fingerprint(second));
    assert.equal(a.handshakes[1].reused, false, "a session of the previous certificate is not resumed");
    // Connections of the previous certificate finish what they carry, then close (5 s after the rotation).
    await until("the previous certificate's connection is closed", () => a.handshakes[0].socket.destroyed);
    assert.equal(a.handshakes[1].socket.destroyed, false);
  });
});
