import assert from "node:assert/strict";
import { Agent, type IncomingMessage, type Server, type ServerResponse, createServer, request } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ResponseRelay } from "../../host/proxy/router/response_relay.ts";

// The sidecar relays each upstream response body to its client with
// ResponseRelay (router/response_relay.ts) instead of pipe(): a body larger than
// the sockets' buffers reaches a client that reads slowly whole and in
// order, the bytes are counted, and a client that leaves mid-body does not
// wedge the upstream connection: the rest is read and dropped, and the
// connection goes back to the keep-alive pool for the next request.

const BODY_BYTES = 8 * 1024 * 1024;
const body = Buffer.alloc(BODY_BYTES);
for (let i = 0; i < BODY_BYTES; i++) body[i] = (i * 31 + (i >>> 13)) & 0xff;

interface Outcome {
  bytes: number;
  how: "ended" | "failed";
}

/** A node:http response's events handed to a ResponseRelay, as the router hands its clients' events. */
function relayBody(up: IncomingMessage, res: ServerResponse, ended: (responseBytes: number) => void, failed: (e: Error, responseBytes: number) => void): void {
  const relay = new ResponseRelay(up, res, ended, failed);
  up.on("data", (chunk: Buffer) => relay.data(chunk));
  up.on("end", () => relay.end());
  up.on("error", (e) => relay.error(e));
}

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));

describe("relaying a response body (ResponseRelay)", () => {
  let upstream: Server;
  let proxy: Server;
  let proxyPort = 0;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const upstreamSockets = new Set<Socket>();
  const outcomes: Array<Promise<Outcome>> = [];
  /** The last exchange the proxy relays. */
  let last: { up: IncomingMessage; res: ServerResponse } | undefined;

  before(async () => {
    upstream = createServer((_req, res) => {
      upstreamSockets.add(res.socket as Socket);
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(BODY_BYTES) });
      res.end(body);
    });
    const upstreamPort = await listen(upstream);
    proxy = createServer((req, res) => {
      req.resume();
      let settle!: (o: Outcome) => void;
      outcomes.push(new Promise((resolve) => (settle = resolve)));
      request({ agent, host: "127.0.0.1", port: upstreamPort, path: req.url }, (up: IncomingMessage) => {
        res.writeHead(up.statusCode ?? 502, { "content-length": up.headers["content-length"] });
        last = { up, res };
        relayBody(
          up,
          res,
          (bytes) => settle({ bytes, how: "ended" }),
          (_e, bytes) => settle({ bytes, how: "failed" }),
        );
      }).end();
    });
    proxyPort = await listen(proxy);
  });

  after(async () => {
    agent.destroy();
    proxy.closeAllConnections();
    upstream.closeAllConnections();
    await Promise.all([new Promise((r) => proxy.close(r)), new Promise((r) => upstream.close(r))]);
  });

  it("delivers a body larger than the socket buffers whole to a client that reads slowly, and counts it", async () => {
    const received = await new Promise<Buffer>((resolve, reject) => {
      request({ host: "127.0.0.1", port: proxyPort, path: "/slow", agent: false }, (res) => {
        const chunks: Buffer[] = [];
        // Read a chunk, then stop for a moment: the proxy's buffer fills and the upstream must wait.
        res.on("data", (c: Buffer) => {
          chunks.push(c);
          res.pause();
          setTimeout(() => res.resume(), 1);
        });
        res.on("end", () => resolve(Buffer.concat(chunks)));
        res.on("error", reject);
      })
        .on("error", reject)
        .end();
    });
    assert.equal(received.length, BODY_BYTES);
    assert.ok(received.equals(body), "the body arrived unchanged and in order");
    assert.deepEqual(await outcomes.at(-1), { bytes: BODY_BYTES, how: "ended" });
  });

  it("holds the upstream while the client reads nothing: the proxy does not buffer the body", async () => {
    const client = connect(proxyPort, "127.0.0.1");
    try {
      await new Promise<void>((resolve, reject) => {
        client.once("error", reject);
        client.write("GET /stalled HTTP/1.1\r\nHost: proxy\r\n\r\n");
        client.once("data", () => {
          client.pause();
          resolve();
        });
      });
      // Polled (no timing assumed): the relay pauses the upstream once the client's side is full.
      const deadline = Date.now() + 30_000;
      while (!last?.up.isPaused()) {
        assert.ok(Date.now() < deadline, "the upstream was never paused while the client read nothing");
        await sleep(10);
      }
      assert.ok(last.res.writableLength < BODY_BYTES / 4, `the proxy holds ${last.res.writableLength} bytes of the body`);
      client.resume();
      assert.deepEqual(await outcomes.at(-1), { bytes: BODY_BYTES, how: "ended" });
    } finally {
      client.destroy();
    }
  });

  it("a client that leaves mid-body: the rest is read and dropped, and the upstream connection serves the next request", async () => {
    const socketsBefore = upstreamSockets.size;
    const client = connect(proxyPort, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      client.once("error", reject);
      client.write("GET /leaves HTTP/1.1\r\nHost: proxy\r\n\r\n");
      let seen = 0;
      client.on("data", (c: Buffer) => {
        seen += c.length;
        // Some of the body arrived, the rest is still on its way: the client goes.
        if (seen > 256 * 1024) {
          client.destroy();
          resolve();
        }
      });
    });
    const left = await outcomes.at(-1);
    assert.deepEqual(left, { bytes: BODY_BYTES, how: "ended" }, "the upstream's body was read to its end");
    // One upstream connection at most (maxSockets 1): the next request gets it back from the pool.
    const next = await new Promise<number>((resolve, reject) => {
      request({ host: "127.0.0.1", port: proxyPort, path: "/next", agent: false }, (res) => {
        let n = 0;
        res.on("data", (c: Buffer) => (n += c.length));
        res.on("end", () => resolve(n));
      })
        .on("error", reject)
        .end();
    });
    assert.equal(next, BODY_BYTES);
    assert.equal(upstreamSockets.size, socketsBefore, "the same upstream connection served the next request");
  });
});
