// The HTTP/1.1 client's connections against real peers on loopback: Node's
// own HTTP server (keep-alive, a short idle timeout, streamed bodies) and
// raw TCP peers sending chosen bytes (resets mid-head and mid-body, closes
// without warning, bytes nobody asked for).
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { type AddressInfo, type Socket, createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { afterEach, describe, it } from "node:test";
import { ConnectionPool, type Origin } from "../../../host/wire/h1/connection_pool.ts";
import type { ExchangeRequest } from "../../../host/wire/h1/exchange.ts";
import type { ResponseHead } from "../../../host/wire/h1/response_head.ts";

const LIMIT = 60 * 1024;

interface Result {
  head: ResponseHead;
  body: Buffer;
  whole: boolean;
}

function send(pool: ConnectionPool, origin: Origin, request: Partial<ExchangeRequest>, body: Buffer[] = []): Promise<Result> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let head: ResponseHead | undefined;
    const x = pool.request(
      origin,
      { method: "GET", path: "/", headers: ["host", "test"], body: "none", ...request },
      {
        response: (h, whole) => {
          head = h;
          if (whole) resolve({ head: h, body: whole, whole: true });
        },
        data: (c) => chunks.push(c),
        end: () => resolve({ head: head!, body: Buffer.concat(chunks), whole: false }),
        error: reject,
        drain: () => undefined,
      },
    );
    for (const b of body) x.write(b);
    if (request.body && request.body !== "none") x.end();
  });
}

describe("ConnectionPool", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function httpServer(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
    keepAliveTimeout?: number,
  ): Promise<{ server: Server; origin: Origin; sockets: Set<Socket> }> {
    const server = createServer(handler);
    if (keepAliveTimeout !== undefined) server.keepAliveTimeout = keepAliveTimeout;
    const sockets = new Set<Socket>();
    server.on("connection", (s: Socket) => sockets.add(s));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(
      () => new Promise((r) => server.close(r)),
      () => server.closeAllConnections(),
    );
    return { server, origin: { host: "127.0.0.1", port: (server.address() as AddressInfo).port }, sockets };
  }

  async function rawPeer(onConnection: (socket: Socket, index: number) => void): Promise<{ server: TcpServer; origin: Origin }> {
    let n = 0;
    const open = new Set<Socket>();
    const server = createTcpServer((s) => {
      open.add(s);
      s.on("error", () => undefined);
      onConnection(s, n++);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(() => {
      for (const s of open) s.destroy();
      return new Promise((r) => server.close(r));
    });
    return { server, origin: { host: "127.0.0.1", port: (server.address() as AddressInfo).port } };
  }

  function newPool(options: Partial<ConstructorParameters<typeof ConnectionPool>[0]> = {}): ConnectionPool {
    const pool = new ConnectionPool({ maxHeaderBytes: LIMIT, ...options });
    cleanups.push(() => pool.close());
    return pool;
  }

  it("sends heads and bodies (length and chunked) to Node's server and reuses one connection", async () => {
    const { origin, sockets } = await httpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const echo = { method: req.method, url: req.url, headers: req.rawHeaders, body: Buffer.concat(chunks).toString() };
        if (req.url === "/chunked") {
          res.write(JSON.stringify(echo));
          res.end();
        } else res.end(JSON.stringify(echo));
      });
    });
    const pool = newPool();
    const a = await send(pool, origin, { path: "/a?x=1", headers: ["host", "svc", "x-one", "1", "x-one", "2"] });
    assert.equal(a.head.status, 200);
    assert.equal(a.whole, true);
    const echoA = JSON.parse(a.body.toString());
    assert.deepEqual(echoA.headers, ["host", "svc", "x-one", "1", "x-one", "2", "Connection", "keep-alive"]);
    assert.equal(echoA.url, "/a?x=1");
    const b = await send(
      pool,
      origin,
      { method: "POST", path: "/b", headers: { host: "svc", cookie: ["a=1", "b=2"], "x-list": ["1", "2"], "content-length": "10" }, body: "length" },
      [Buffer.from("01234"), Buffer.from("56789")],
    );
    assert.equal(JSON.parse(b.body.toString()).body, "0123456789");
    // Cookie values are joined into one field, other repeated fields stay repeated.
    assert.deepEqual(JSON.parse(b.body.toString()).headers, [
      "host",
      "svc",
      "cookie",
      "a=1; b=2",
      "x-list",
      "1",
      "x-list",
      "2",
      "content-length",
      "10",
      "Connection",
      "keep-alive",
    ]);
    const c = await send(pool, origin, { method: "PUT", path: "/chunked", headers: ["host", "svc", "transfer-encoding", "chunked"], body: "chunked" }, [
      Buffer.from("abc"),
      Buffer.alloc(0),
      Buffer.from("def"),
    ]);
    assert.equal(c.whole, false);
    assert.equal(JSON.parse(c.body.toString()).body, "abcdef");
    assert.equal(sockets.size, 1);
    assert.deepEqual(pool.stats(), { open: 1, idle: 1 });
  });

  it("refuses invalid fields before anything is sent", () => {
    const pool = newPool();
    const origin = { host: "127.0.0.1", port: 9 };
    const handlers = { response: () => undefined, data: () => undefined, end: () => undefined, error: () => undefined, drain: () => undefined };
    assert.throws(() => pool.request(origin, { method: "GET", path: "/", headers: ["x", "a\r\nInjected: 1"], body: "none" }, handlers), {
      code: "ERR_INVALID_CHAR",
    });
    assert.throws(() => pool.request(origin, { method: "GET", path: "/", headers: ["bad name", "a"], body: "none" }, handlers), {
      code: "ERR_INVALID_HTTP_TOKEN",
    });
    assert.throws(() => pool.request(origin, { method: "GET", path: "/a b", headers: [], body: "none" }, handlers), { code: "ERR_UNESCAPED_CHARACTERS" });
    assert.deepEqual(pool.stats(), { open: 0, idle: 0 });
  });

  it("never fails a request across the server's idle timeouts (its Keep-Alive hint, a server closing without one)", async () => {
    // Node's server with a 2 s idle timeout says `Keep-Alive: timeout=2`: idle connections are dropped after 1 s.
    const { origin, sockets } = await httpServer((_req, res) => res.end("ok"), 2000);
    const pool = newPool({ sweepIntervalMs: 100 });
    for (let i = 0; i < 6; i++) {
      assert.equal((await send(pool, origin, {})).body.toString(), "ok");
      await new Promise((r) => setTimeout(r, i % 2 === 0 ? 1100 : 1900));
    }
    assert.ok(sockets.size >= 3, `${sockets.size} connections`);
    // A peer that closes each connection right after its response, without saying so: the next request meets a closed connection.
    let connections = 0;
    const { origin: rude } = await rawPeer((s) => {
      connections++;
      s.once("data", () => {
        s.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        setTimeout(() => s.destroy(), 20);
      });
    });
    for (let i = 0; i < 5; i++) {
      assert.equal((await send(pool, rude, {})).body.toString(), "ok");
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(connections, 5);
  });

  it("retries once, on a fresh connection, only a bodiless idempotent request whose reused connection failed before any response byte", async () => {
    const seen: string[] = [];
    const { origin } = await rawPeer((s, index) => {
      let served = 0;
      s.on("data", (d) => {
        seen.push(`${index}:${d.toString("latin1").split(" ")[0]}`);
        // The first connection answers once, then resets on the next request (a server closing it as the request arrives).
        if (index === 0 && served++ > 0) return s.resetAndDestroy();
        s.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      });
    });
    const pool = newPool();
    await send(pool, origin, {});
    assert.equal((await send(pool, origin, { method: "GET" })).body.toString(), "ok");
    assert.deepEqual(seen, ["0:GET", "0:GET", "1:GET"]);
    // A POST is not sent twice.
    seen.length = 0;
    await send(pool, origin, { method: "POST", headers: ["content-length", "0"] });
    const { origin: origin2 } = await rawPeer((s, index) => {
      let served = 0;
      s.on("data", () => {
        if (index === 0 && served++ > 0) return s.resetAndDestroy();
        s.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      });
    });
    await send(pool, origin2, {});
    await assert.rejects(send(pool, origin2, { method: "POST", headers: ["content-length", "0"] }), { code: "ECONNRESET" });
  });

  it("closes connections after Connection: close, HTTP/1.0 without keep-alive, a close-delimited body and maxRequestsPerConnection", async () => {
    const cases: Array<[string, string]> = [
      ["close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"],
      ["1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"],
      ["eof", "HTTP/1.1 200 OK\r\n\r\nok"],
    ];
    for (const [name, bytes] of cases) {
      let connections = 0;
      const { origin } = await rawPeer((s) => {
        connections++;
        s.on("data", () => (name === "eof" ? s.end(bytes) : s.write(bytes)));
      });
      const pool = newPool();
      for (let i = 0; i < 3; i++) assert.equal((await send(pool, origin, {})).body.toString(), "ok", name);
      assert.equal(connections, 3, name);
    }
    const { origin, sockets } = await httpServer((_req, res) => res.end("ok"));
    const pool = newPool();
    for (let i = 0; i < 5; i++) await send(pool, origin, { maxRequestsPerConnection: 2 });
    assert.equal(sockets.size, 3);
  });

  it("fails with ECONNRESET on a reset mid-head or mid-body, with an HPE_ code on garbage, ECONNREFUSED when nobody listens", async () => {
    const { origin: midHead } = await rawPeer((s) => s.once("data", () => s.write("HTTP/1.1 200 OK\r\nContent-Le", () => s.resetAndDestroy())));
    await assert.rejects(send(newPool(), midHead, {}), { code: "ECONNRESET" });
    const { origin: midBody } = await rawPeer((s) => s.once("data", () => s.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", () => s.end())));
    const pool = newPool();
    const heads: number[] = [];
    const failure = await new Promise<NodeJS.ErrnoException>((resolve) => {
      pool.request(
        midBody,
        { method: "GET", path: "/", headers: ["host", "test"], body: "none" },
        { response: (h) => heads.push(h.status), data: () => undefined, end: () => assert.fail("ended"), error: resolve, drain: () => undefined },
      );
    });
    assert.deepEqual(heads, [200]);
    assert.equal(failure.code, "ECONNRESET");
    const { origin: garbage } = await rawPeer((s) => s.once("data", () => s.write("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")));
    await assert.rejects(send(newPool(), garbage, {}), { code: "HPE_UNEXPECTED_CONTENT_LENGTH" });
    const { origin: upgrade } = await rawPeer((s) => s.once("data", () => s.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n")));
    await assert.rejects(send(newPool(), upgrade, {}), { code: "HPE_UNEXPECTED_UPGRADE" });
    const { server: closed, origin: nobody } = await rawPeer(() => undefined);
    await new Promise((r) => closed.close(r));
    await assert.rejects(send(newPool(), nobody, {}), { code: "ECONNREFUSED" });
  });

  it("does not reuse a connection that sent bytes nobody asked for", async () => {
    let connections = 0;
    const { origin } = await rawPeer((s) => {
      connections++;
      s.on("data", () => s.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"));
    });
    const pool = newPool();
    await send(pool, origin, {});
    await send(pool, origin, {});
    assert.equal(connections, 2);
  });

  it("applies backpressure both ways: a paused exchange stops the upstream, a slow upstream stops the body writer", async () => {
    const big = Buffer.alloc(8 * 1024 * 1024, 7);
    let written = 0;
    const { origin } = await httpServer((req, res) => {
      if (req.method === "GET") {
        const pump = () => {
          while (written < big.length) {
            const part = big.subarray(written, written + 65536);
            written += part.length;
            if (!res.write(part)) return void res.once("drain", pump);
          }
          res.end();
        };
        return pump();
      }
      // POST: read nothing until told.
      req.pause();
      setTimeout(() => {
        let n = 0;
        req.on("data", (c) => (n += c.length));
        req.on("end", () => res.end(String(n)));
        req.resume();
      }, 300);
    });
    const pool = newPool();
    let received = 0;
    let x: ReturnType<ConnectionPool["request"]> | undefined;
    const paused = new Promise<void>((resolve) => {
      x = pool.request(
        origin,
        { method: "GET", path: "/", headers: ["host", "test"], body: "none" },
        {
          response: () => undefined,
          data: (c) => {
            received += c.length;
            if (received > 0) {
              x!.pause();
              resolve();
            }
          },
          end: () => undefined,
          error: () => undefined,
          drain: () => undefined,
        },
      );
    });
    await paused;
    await new Promise((r) => setTimeout(r, 500));
    // The server could fill only the socket buffers.
    assert.ok(written < big.length, `server wrote ${written} of ${big.length}`);
    const done = new Promise<void>((resolve) => {
      const h = x!.handlers as { data: (c: Buffer) => void; end: () => void };
      h.data = (c) => (received += c.length);
      h.end = resolve;
    });
    x!.resume();
    await done;
    assert.equal(received, big.length);
    // The body writer: writes report false while the server does not read, then drain.
    let drained = false;
    const result = new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const post = pool.request(
        origin,
        { method: "POST", path: "/", headers: ["host", "test", "content-length", String(big.length)], body: "length" },
        {
          response: (_h, whole) => whole && resolve(whole.toString()),
          data: (c) => chunks.push(c),
          end: () => resolve(Buffer.concat(chunks).toString()),
          error: reject,
          drain: () => {
            drained = true;
            post.end();
          },
        },
      );
      assert.equal(post.write(big), false);
    });
    assert.equal(await result, String(big.length));
    assert.ok(drained);
  });

  it("times an exchange out on its connection's inactivity, and only while it lasts", async () => {
    const { origin, sockets } = await httpServer((req, res) => {
      if (req.url === "/slow") setTimeout(() => res.end("late"), 600);
      else res.end("ok");
    });
    const pool = newPool();
    let fired = 0;
    const timed = pool.request(
      origin,
      { method: "GET", path: "/", headers: ["host", "t"], body: "none" },
      { response: () => undefined, data: () => undefined, end: () => undefined, error: () => undefined, drain: () => undefined },
    );
    timed.setTimeout(200, () => fired++);
    await new Promise((r) => setTimeout(r, 50));
    // The same connection, reused without a timeout, waits as long as the server takes.
    assert.equal((await send(pool, origin, { path: "/slow" })).body.toString(), "late");
    assert.equal(fired, 0);
    assert.equal(sockets.size, 1);
    const stalled = await new Promise<string>((resolve) => {
      const x = pool.request(
        origin,
        { method: "GET", path: "/slow", headers: ["host", "t"], body: "none" },
        { response: () => resolve("answered"), data: () => undefined, end: () => undefined, error: () => resolve("error"), drain: () => undefined },
      );
      x.setTimeout(200, () => {
        x.destroy();
        resolve("timed out");
      });
    });
    assert.equal(stalled, "timed out");
  });

  it("runs each exchange's callbacks in the async context it was made in, not the connection's first", async () => {
    const { origin, sockets } = await httpServer((_req, res) => res.end("ok"));
    const pool = newPool();
    const als = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const one = (name: string) =>
      als.run(
        name,
        () =>
          new Promise<void>((resolve) => {
            pool.request(
              origin,
              { method: "GET", path: "/", headers: ["host", "t"], body: "none" },
              {
                response: () => {
                  seen.push(als.getStore());
                  resolve();
                },
                data: () => undefined,
                end: () => undefined,
                error: () => undefined,
                drain: () => undefined,
              },
            );
          }),
      );
    await one("first");
    await one("second");
    await one("third");
    assert.equal(sockets.size, 1);
    assert.deepEqual(seen, ["first", "second", "third"]);
  });

  it("keeps no process alive with idle connections; close() ends everything", async () => {
    const { origin, sockets } = await httpServer((_req, res) => res.end("ok"), 60_000);
    const script = `
      const { ConnectionPool } = await import(${JSON.stringify(new URL("../../../host/wire/h1/connection_pool.ts", import.meta.url).href)});
      const pool = new ConnectionPool({ maxHeaderBytes: 65536 });
      pool.request({ host: "127.0.0.1", port: ${origin.port} }, { method: "GET", path: "/", headers: ["host", "t"], body: "none" }, {
        response: (h) => console.log("status", h.status), data() {}, end() {}, error: (e) => console.log(e.message), drain() {},
      });`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    cleanups.push(() => child.exitCode === null && child.kill());
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const [code] = await once(child, "exit");
    assert.equal(code, 0);
    assert.match(out, /status 200/);
    const pool = newPool();
    await send(pool, origin, {});
    assert.equal(pool.stats().idle, 1);
    pool.close();
    assert.deepEqual(pool.stats(), { open: 0, idle: 0 });
    await new Promise((r) => setTimeout(r, 100));
    assert.ok([...sockets].every((s) => s.destroyed || s.readableEnded));
  });
});
