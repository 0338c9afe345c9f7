import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { type AddressInfo, type Socket, createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { endToEndHeaders, requestHead, toOutgoing, upstreamHeaders } from "../../host/proxy/hop_by_hop.ts";
import type { HeaderList } from "../../host/wasm/abi_types.ts";

// The listener's view of a request head (one pass over Node's raw headers)
// and the headers it forwards upstream (RFC 9110 §7.6.1).

describe("requestHead", () => {
  it("keeps end-to-end headers lower-cased and in order, leaves Host out and drops hop-by-hop fields", () => {
    const head = requestHead(["Host", "h:1", "Connection", "keep-alive", "X-B", "2", "Keep-Alive", "timeout=5", "x-a", "1", "X-B", "3", "TE", "trailers"]);
    assert.deepEqual(head, { headers: [["x-b", "2"], ["x-a", "1"], ["x-b", "3"]], host: "h:1", hasBody: false });
  });

  it("drops the fields every Connection header names, whatever the spelling", () => {
    const raw = ["Host", "h", "Connection", "close", "Close", "x", "Connection", "X-Secret, foo", "x-secret", "s", "foo", "f", "x-kept", "k"];
    assert.deepEqual(requestHead(raw).headers, [["x-kept", "k"]]);
    assert.deepEqual(endToEndHeaders(raw), [["host", "h"], ["x-kept", "k"]]);
    assert.deepEqual(requestHead(["Connection", "keep-alive, X-Gone", "x-gone", "1", "x-a", "a"]).headers, [["x-a", "a"]]);
  });

  it("takes the first Host and says whether a body follows", () => {
    assert.equal(requestHead(["Host", "a", "Host", "b"]).host, "a");
    assert.equal(requestHead([]).host, undefined);
    assert.equal(requestHead(["Content-Length", "0"]).hasBody, false);
    assert.equal(requestHead(["Content-Length", "12"]).hasBody, true);
    assert.equal(requestHead(["Transfer-Encoding", "chunked"]).hasBody, true);
    // Content-Length stays (end to end); Transfer-Encoding is hop-by-hop.
    assert.deepEqual(requestHead(["Content-Length", "12", "Transfer-Encoding", "chunked"]).headers, [["content-length", "12"]]);
  });
});

// What a raw socket upstream receives when Node's request() sends `headers`.
describe("upstreamHeaders on the wire, against Node's header object", () => {
  const heads: string[] = [];
  let port = 0;
  const server = createServer((socket: Socket) => {
    let data = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      data += chunk;
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = data.slice(0, end);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      const chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
      const body = data.slice(end + 4);
      if (length ? body.length < Number(length[1]) : chunked && !body.endsWith("0\r\n\r\n")) return;
      heads.push(data);
      data = "";
      socket.end("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
    });
  });
  const agent = new Agent({ keepAlive: true });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    agent.destroy();
    server.close();
  });

  async function send(method: string, headers: string[] | ReturnType<typeof toOutgoing>, body?: string): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      const req = request({ agent, host: "127.0.0.1", port, method, path: "/p?q=1", headers }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      if (body !== undefined) req.end(body);
      else req.end();
    });
    return heads.pop()!;
  }

  // Request line, then header lines grouped by name (each name's values in their order), then the body.
  const canonical = (message: string) => {
    const [head, body] = [message.slice(0, message.indexOf("\r\n\r\n")), message.slice(message.indexOf("\r\n\r\n") + 4)];
    const [line, ...fields] = head.split("\r\n");
    const name = (f: string) => f.slice(0, f.indexOf(":")).toLowerCase();
    return { line, fields: fields.map((f, i) => [f, i] as const).sort((a, b) => name(a[0]).localeCompare(name(b[0])) || a[1] - b[1]).map(([f]) => f), body };
  };

  const cases: Array<{ name: string; method: string; headers: HeaderList; body?: string }> = [
    { name: "GET", method: "GET", headers: [[":method", "GET"], [":path", "/p?q=1"], ["accept", "*/*"], ["x-a", "1"], ["x-b", "2"], ["x-a", "3"]] },
    { name: "GET with one cookie", method: "GET", headers: [["cookie", "a=1"], ["user-agent", "t"]] },
    { name: "GET with two cookies (joined)", method: "GET", headers: [["cookie", "a=1"], ["cookie", "b=2"]] },
    { name: "HEAD", method: "HEAD", headers: [["accept", "*/*"]] },
    { name: "DELETE without a body", method: "DELETE", headers: [] },
    { name: "POST with a Content-Length", method: "POST", headers: [["content-type", "text/plain"], ["content-length", "5"]], body: "hello" },
    { name: "POST without a length or body", method: "POST", headers: [["x-a", "1"]] },
    { name: "PUT streamed (chunked)", method: "PUT", headers: [["x-a", "1"]], body: "streamed" },
    { name: "a host pair from the filter is replaced", method: "GET", headers: [["host", "other"], ["x-a", "1"]] },
  ];
  for (const c of cases) {
    it(`${c.name}: the same request as with Node's header object`, async () => {
      const object = toOutgoing(c.headers);
      object.host = "svc.local:8000";
      const expected = canonical(await send(c.method, object, c.body));
      const actual = canonical(await send(c.method, upstreamHeaders(c.headers, c.method, "svc.local:8000"), c.body));
      assert.deepEqual(actual, expected);
      assert.ok(expected.fields.includes("host: svc.local:8000"), JSON.stringify(expected.fields));
    });
  }

  it("sends the flat list for a bodiless GET and for a request with a Content-Length", () => {
    assert.ok(Array.isArray(upstreamHeaders([["x-a", "1"]], "GET", "h")));
    assert.ok(Array.isArray(upstreamHeaders([["content-length", "5"]], "POST", "h")));
    assert.ok(!Array.isArray(upstreamHeaders([["x-a", "1"]], "POST", "h")));
    assert.ok(!Array.isArray(upstreamHeaders([["cookie", "a"], ["cookie", "b"]], "GET", "h")));
  });
});
