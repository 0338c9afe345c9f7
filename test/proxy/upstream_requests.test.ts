// The router's upstream half (UpstreamRequests) on its own HTTP/1.1
// client, between a real client and a real Node app: an app's own idle
// timeout never fails a request, both bodies stream with backpressure, and
// a client that leaves mid-body never lets its cut body reach the app as
// complete.
import assert from "node:assert/strict";
import { once } from "node:events";
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from "node:http";
import { type AddressInfo, type Socket, connect } from "node:net";
import { afterEach, describe, it } from "node:test";
import { type RequestFraming, requestFraming } from "../../host/proxy/http/request_framing.ts";
import { RequestProperties, connectionFacts } from "../../host/proxy/request_properties.ts";
import { UpstreamRequests } from "../../host/proxy/router/upstream_request.ts";

interface Completed {
  code: number;
  requestBytes: number;
  responseBytes: number;
}

describe("UpstreamRequests on the HTTP/1.1 client", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function listen(server: Server): Promise<number> {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(
      () => new Promise((r) => server.close(r)),
      () => server.closeAllConnections(),
    );
    return (server.address() as AddressInfo).port;
  }

  /** A proxy: each request forwarded to the app by UpstreamRequests; `completed` hears each exchange's outcome. */
  async function proxy(appPort: number, completed: Completed[]): Promise<number> {
    const upstreams = new UpstreamRequests({ onResponseHeaders: (_id, h) => h });
    cleanups.push(() => upstreams.close());
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const te = req.headers["transfer-encoding"];
      const cl = req.headers["content-length"];
      const framing: RequestFraming = requestFraming(req.method ?? "GET", req.httpVersion, te ? [te] : undefined, cl ? [cl] : undefined);
      const forwarded: Array<[string, string]> = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i].toLowerCase();
        if (name !== "connection" && name !== "host") forwarded.push([name, req.rawHeaders[i + 1]]);
      }
      upstreams.send(
        {
          req,
          res,
          authority: "app",
          framing,
          props: new RequestProperties(connectionFacts(req.socket as Socket), "HTTP/1.1"),
          reply: (r) => {
            if (!res.headersSent) res.writeHead(r.status).end(r.body);
          },
          complete: (code, requestBytes, responseBytes) => completed.push({ code, requestBytes, responseBytes }),
          upstreamError: () => undefined,
        },
        0,
        forwarded,
        req.method ?? "GET",
        req.url ?? "/",
        { kind: "forward", host: "127.0.0.1", port: appPort },
      );
    });
    return listen(server);
  }

  function get(port: number, path: string, agent = false as const): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      request({ host: "127.0.0.1", port, path, agent }, (res) => {
        let body = "";
        res.setEncoding("latin1");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
        .on("error", reject)
        .end();
    });
  }

  it("never fails a request when the app's idle timeout closes its connections (Node's 5 s default, here 2 s)", async () => {
    const app = createServer((req, res) => res.end(`hello ${req.url}`));
    app.keepAliveTimeout = 2000;
    const connections = new Set<Socket>();
    app.on("connection", (s: Socket) => connections.add(s));
    const completed: Completed[] = [];
    const port = await proxy(await listen(app), completed);
    for (const pause of [0, 900, 1100, 50, 1500, 0, 1990, 2100]) {
      await new Promise((r) => setTimeout(r, pause));
      const answers = await Promise.all([get(port, `/a${pause}`), get(port, `/b${pause}`)]);
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200],
      );
      assert.equal(answers[0].body, `hello /a${pause}`);
    }
    assert.equal(completed.length, 16);
    assert.ok(completed.every((c) => c.code === 200 && c.responseBytes > 0));
    assert.ok(connections.size < 16, `${connections.size} app connections for 16 requests: kept alive between them`);
  });

  it("holds the app while the client reads nothing, then relays the whole body and counts it", async () => {
    const size = 64 * 1024 * 1024;
    let written = 0;
    const app = createServer((_req, res) => {
      res.writeHead(200, { "content-length": String(size) });
      const pump = () => {
        while (written < size) {
          written += 65536;
          if (!res.write(Buffer.alloc(65536, 1))) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
    const completed: Completed[] = [];
    const port = await proxy(await listen(app), completed);
    const client = connect(port, "127.0.0.1");
    cleanups.push(() => client.destroy());
    client.write("GET /big HTTP/1.1\r\nHost: app\r\n\r\n");
    client.pause();
    await new Promise((r) => setTimeout(r, 800));
    assert.ok(written < size / 2, `the app wrote ${written} of ${size} bytes to a client reading nothing`);
    let received = 0;
    client.on("data", (c: Buffer) => (received += c.length));
    client.resume();
    while (completed.length === 0) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(completed, [{ code: 200, requestBytes: 0, responseBytes: size }]);
    while (received < size) await new Promise((r) => setTimeout(r, 20));
  });

  it("streams a request body as the app reads it: a slow app pauses the client", async () => {
    const size = 64 * 1024 * 1024;
    let reading = false;
    const app = createServer((req, res) => {
      let n = 0;
      req.pause();
      setTimeout(() => {
        reading = true;
        req.on("data", (c: Buffer) => (n += c.length));
        req.on("end", () => res.end(String(n)));
        req.resume();
      }, 800);
    });
    const completed: Completed[] = [];
    const port = await proxy(await listen(app), completed);
    const client = connect(port, "127.0.0.1");
    cleanups.push(() => client.destroy());
    client.write(`POST /upload HTTP/1.1\r\nHost: app\r\nContent-Length: ${size}\r\n\r\n`);
    let sent = 0;
    const chunk = Buffer.alloc(65536, 2);
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!client.write(chunk)) return void client.once("drain", pump);
      }
    };
    pump();
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(reading, false);
    assert.ok(sent < size / 2, `the client could send ${sent} of ${size} bytes before the app read any`);
    let answer = "";
    client.on("data", (c: Buffer) => (answer += c.toString("latin1")));
    while (completed.length === 0) await new Promise((r) => setTimeout(r, 20));
    assert.equal(completed[0].code, 200);
    assert.equal(completed[0].requestBytes, size);
    while (!answer.endsWith(String(size))) await new Promise((r) => setTimeout(r, 20));
  });

  it("a client that leaves mid-body: the app's request is cut (never complete), in both framings", async () => {
    const seen: Array<{ complete: boolean; bytes: number }> = [];
    let arrived = 0;
    const app = createServer((req, res) => {
      let bytes = 0;
      req.on("data", (c: Buffer) => {
        bytes += c.length;
        arrived += c.length;
      });
      req.on("end", () => res.end("whole"));
      req.on("close", () => seen.push({ complete: req.complete, bytes }));
    });
    const completed: Completed[] = [];
    const port = await proxy(await listen(app), completed);
    for (const head of ["Content-Length: 1000", "Transfer-Encoding: chunked"]) {
      const client = connect(port, "127.0.0.1");
      client.on("error", () => undefined);
      client.write(`PUT /cut HTTP/1.1\r\nHost: app\r\n${head}\r\n\r\n${head.startsWith("Content") ? "0123456789" : "a\r\n0123456789\r\n"}`);
      // The first bytes reached the app: the client leaves.
      while (arrived < 10) await new Promise((r) => setTimeout(r, 20));
      arrived = 0;
      client.destroy();
      while (seen.length === 0) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(seen.splice(0), [{ complete: false, bytes: 10 }], head);
    }
  });
});
