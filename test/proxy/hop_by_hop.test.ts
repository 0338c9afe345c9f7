import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { type AddressInfo, type Socket, createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { endToEndHeaders, requestHead, toOutgoing, upstreamHeaders } from "../../host/proxy/http/hop_by_hop.ts";
import { NO_BODY, type RequestFraming } from "../../host/proxy/http/request_framing.ts";
import type { HeaderList } from "../../host/wasm/abi_types.ts";

// The listener's view of a request head (one pass over Node's raw headers)
// and the headers it forwards upstream (RFC 9110 §7.6.1).

describe("requestHead", () => {
  it("keeps end-to-end headers lower-cased and in order, leaves Host out and drops hop-by-hop fields", () => {
    const head = requestHead(["Host", "h:1", "Connection", "keep-alive", "X-B", "2", "Keep-Alive", "timeout=5", "x-a", "1", "X-B", "3", "TE", "trailers"]);
    assert.deepEqual(head, {
      headers: [
        ["x-b", "2"],
        ["x-a", "1"],
        ["x-b", "3"],
      ],
      host: "h:1",
      framing: NO_BODY,
    });
  });

  it("drops the fields every Connection header names, whatever the spelling", () => {
    const raw = ["Host", "h", "Connection", "close", "Close", "x", "Connection", "X-Secret, foo", "x-secret", "s", "foo", "f", "x-kept", "k"];
    assert.deepEqual(requestHead(raw).headers, [["x-kept", "k"]]);
    assert.deepEqual(endToEndHeaders(raw), [
      ["host", "h"],
      ["x-kept", "k"],
    ]);
    assert.deepEqual(requestHead(["Connection", "keep-alive, X-Gone", "x-gone", "1", "x-a", "a"]).headers, [["x-a", "a"]]);
  });

  it("takes the first Host and reads the body's framing", () => {
    assert.equal(requestHead(["Host", "a", "Host", "b"]).host, "a");
    assert.equal(requestHead([]).host, undefined);
    assert.deepEqual(requestHead(["Content-Length", "0"]).framing, { kind: "length", length: 0 });
    assert.deepEqual(requestHead(["Content-Length", "12"]).framing, { kind: "length", length: 12 });
    assert.deepEqual(requestHead(["Transfer-Encoding", "chunked"]).framing, { kind: "chunked" });
    // Content-Length stays (end to end); Transfer-Encoding is hop-by-hop.
    assert.deepEqual(requestHead(["Content-Length", "12", "x-a", "1", "Transfer-Encoding", "chunked"]).headers, [
      ["content-length", "12"],
      ["x-a", "1"],
    ]);
  });

  it("keeps Content-Length when Connection names it: it frames the body (issue 25)", () => {
    const head = requestHead(["Host", "h", "Content-Length", "5", "Connection", "content-length, x-gone", "x-gone", "1"], "GET");
    assert.deepEqual(head.headers, [["content-length", "5"]]);
    assert.deepEqual(head.framing, { kind: "length", length: 5 });
    assert.deepEqual(requestHead(["Transfer-Encoding", "chunked", "Connection", "transfer-encoding"], "GET").framing, { kind: "chunked" });
  });

  it("refuses the framings Envoy refuses", () => {
    const refusal = (raw: string[], method = "POST", version = "1.1") => {
      const f = requestHead(raw, method, version).framing;
      return f.kind === "refused" ? `${f.status} ${f.details}` : f.kind;
    };
    assert.equal(refusal(["Transfer-Encoding", "chunked", "Content-Length", "3"]), "400 http1.content_length_and_chunked_not_allowed");
    assert.equal(refusal(["Content-Length", "3", "Transfer-Encoding", ""]), "400 http1.content_length_and_chunked_not_allowed");
    assert.equal(refusal(["Transfer-Encoding", "gzip, chunked"]), "501 http1.invalid_transfer_encoding");
    assert.equal(refusal(["Transfer-Encoding", "chunked", "Transfer-Encoding", "chunked"]), "501 http1.invalid_transfer_encoding");
    assert.equal(refusal(["Transfer-Encoding", ""]), "501 http1.invalid_transfer_encoding");
    assert.equal(refusal(["Transfer-Encoding", "chunked"], "CONNECT"), "501 http1.invalid_transfer_encoding");
    assert.equal(refusal(["Transfer-Encoding", "chunked"], "POST", "1.0"), "400 http1.transfer_encoding_not_allowed");
    assert.equal(refusal(["Content-Length", "3", "Content-Length", "3"]), "400 http1.invalid_content_length");
    assert.equal(refusal(["Content-Length", "+3"]), "400 http1.invalid_content_length");
    assert.equal(refusal(["Content-Length", "99999999999999999999"]), "400 http1.invalid_content_length");
    // Accepted: the coding's name in any case, and a length with leading zeros (Node's parser reads it as decimal).
    assert.equal(refusal(["Transfer-Encoding", "Chunked"]), "chunked");
    assert.deepEqual(requestHead(["Content-Length", "007"]).framing, { kind: "length", length: 7 });
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
    return {
      line,
      fields: fields
        .map((f, i) => [f, i] as const)
        .sort((a, b) => name(a[0]).localeCompare(name(b[0])) || a[1] - b[1])
        .map(([f]) => f),
      body,
    };
  };

  const cases: Array<{ name: string; method: string; headers: HeaderList; body?: string; framing?: RequestFraming }> = [
    {
      name: "GET",
      method: "GET",
      headers: [
        [":method", "GET"],
        [":path", "/p?q=1"],
        ["accept", "*/*"],
        ["x-a", "1"],
        ["x-b", "2"],
        ["x-a", "3"],
      ],
    },
    {
      name: "GET with one cookie",
      method: "GET",
      headers: [
        ["cookie", "a=1"],
        ["user-agent", "t"],
      ],
    },
    {
      name: "GET with two cookies (joined)",
      method: "GET",
      headers: [
        ["cookie", "a=1"],
        ["cookie", "b=2"],
      ],
    },
    { name: "HEAD", method: "HEAD", headers: [["accept", "*/*"]] },
    { name: "DELETE without a body", method: "DELETE", headers: [] },
    {
      name: "POST with a Content-Length",
      method: "POST",
      headers: [
        ["content-type", "text/plain"],
        ["content-length", "5"],
      ],
      body: "hello",
      framing: { kind: "length", length: 5 },
    },
    {
      name: "a host pair from the filter is replaced",
      method: "GET",
      headers: [
        ["host", "other"],
        ["x-a", "1"],
      ],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: the same request as with Node's header object`, async () => {
      const object = toOutgoing(c.headers);
      object.host = "svc.local:8000";
      const expected = canonical(await send(c.method, object, c.body));
      const actual = canonical(await send(c.method, upstreamHeaders(c.headers, c.method, "svc.local:8000", c.framing ?? NO_BODY), c.body));
      assert.deepEqual(actual, expected);
      assert.ok(expected.fields.includes("host: svc.local:8000"), JSON.stringify(expected.fields));
    });
  }

  it("sends the flat list unless a Cookie repeats", () => {
    assert.ok(Array.isArray(upstreamHeaders([["x-a", "1"]], "GET", "h", NO_BODY)));
    assert.ok(Array.isArray(upstreamHeaders([["x-a", "1"]], "POST", "h", { kind: "chunked" })));
    assert.ok(
      !Array.isArray(
        upstreamHeaders(
          [
            ["cookie", "a"],
            ["cookie", "b"],
          ],
          "GET",
          "h",
          NO_BODY,
        ),
      ),
    );
  });

  // The framing on the wire is the request's own, whatever framing fields the forwarded list holds (issue 25).
  const framed: Array<{ name: string; method: string; headers: HeaderList; framing: RequestFraming; body?: string; expect: string }> = [
    {
      name: "GET with a chunked body",
      method: "GET",
      headers: [],
      framing: { kind: "chunked" },
      body: "GET /admin HTTP/1.1\r\n\r\n",
      expect: "transfer-encoding: chunked|17\r\nGET /admin HTTP/1.1\r\n\r\n\r\n0\r\n\r\n",
    },
    {
      name: "HEAD with a length-delimited body",
      method: "HEAD",
      headers: [],
      framing: { kind: "length", length: 3 },
      body: "abc",
      expect: "content-length: 3|abc",
    },
    {
      name: "a stale Content-Length in the list is replaced",
      method: "DELETE",
      headers: [["content-length", "99"]],
      framing: { kind: "chunked" },
      body: "x",
      expect: "transfer-encoding: chunked|1\r\nx\r\n0\r\n\r\n",
    },
    {
      name: "a Transfer-Encoding in the list is replaced",
      method: "OPTIONS",
      headers: [["transfer-encoding", "chunked"]],
      framing: { kind: "length", length: 2 },
      body: "ab",
      expect: "content-length: 2|ab",
    },
    { name: "POST without a body: Content-Length: 0", method: "POST", headers: [["x-a", "1"]], framing: NO_BODY, expect: "content-length: 0|" },
    { name: "GET without a body: no framing field", method: "GET", headers: [["content-length", "4"]], framing: NO_BODY, expect: "|" },
    {
      name: "repeated cookies (header object) framed too",
      method: "GET",
      headers: [
        ["cookie", "a"],
        ["cookie", "b"],
        ["content-length", "9"],
      ],
      framing: { kind: "chunked" },
      body: "z",
      expect: "transfer-encoding: chunked|1\r\nz\r\n0\r\n\r\n",
    },
  ];
  for (const c of framed) {
    it(`framing: ${c.name}`, async () => {
      const wire = await send(c.method, upstreamHeaders(c.headers, c.method, "h", c.framing), c.body);
      const [head, body] = [wire.slice(0, wire.indexOf("\r\n\r\n")), wire.slice(wire.indexOf("\r\n\r\n") + 4)];
      const fields = head
        .split("\r\n")
        .slice(1)
        .filter((f) => /^(content-length|transfer-encoding):/i.test(f));
      assert.equal(`${fields.join(",")}|${body}`, c.expect);
    });
  }
});
