// The HTTP/2 client session against real peers on loopback sockets: Node's
// HTTP/2 server (nghttp2) with small windows, a concurrency limit, large
// header blocks, GOAWAY and RST_STREAM; and a raw TCP peer for what nghttp2
// never does wrong (protocol errors this client must answer with GOAWAY).
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer as createH2Server, type Http2Server, type ServerHttp2Stream, constants as h2 } from "node:http2";
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket, connect } from "node:net";
import { afterEach, describe, it } from "node:test";
import { Http2ClientSession } from "../../../host/wire/h2/client_session.ts";
import type { ResponseHeaders, StreamEnd } from "../../../host/wire/h2/client_stream.ts";
import { CLIENT_PREFACE, ErrorCode, FrameReader, FrameType, frame, settingsFrame } from "../../../host/wire/h2/frames.ts";
import type { HeaderField } from "../../../host/wire/h2/hpack.ts";
import { huffmanEncode, huffmanLength } from "../../../host/wire/h2/huffman.ts";

interface Response {
  headers: ResponseHeaders[];
  body: Buffer;
  end: StreamEnd;
}

const request = (path: string, extra: HeaderField[] = []): HeaderField[] => [
  [":method", "POST"],
  [":scheme", "http"],
  [":authority", "localhost"],
  [":path", path],
  ...extra,
];

/** Sends one request on `session` and resolves with everything the stream heard. */
function exchange(session: Http2ClientSession, fields: HeaderField[], body: Buffer): Promise<Response> {
  return new Promise((resolve) => {
    const headers: ResponseHeaders[] = [];
    const chunks: Buffer[] = [];
    session.request(fields, body, {
      onHeaders: (h) => headers.push(h),
      onData: (c) => chunks.push(c),
      onEnd: (end) => resolve({ headers, body: Buffer.concat(chunks), end }),
    });
  });
}

describe("Http2ClientSession", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function h2Server(
    onStream: (stream: ServerHttp2Stream, headers: Record<string, unknown>, body: Buffer) => void,
    settings = {},
    paddingStrategy = h2.PADDING_STRATEGY_NONE,
  ): Promise<Http2Server> {
    const server = createH2Server({ settings, paddingStrategy });
    server.on("stream", (stream, headers) => {
      stream.on("error", () => {});
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => onStream(stream, headers, Buffer.concat(chunks)));
    });
    return listening(server);
  }

  /** Listens on loopback; the cleanup drops its sessions (a server session that sent GOAWAY does not notice the client closing). */
  async function listening(server: Http2Server): Promise<Http2Server> {
    const sessions = new Set<import("node:http2").ServerHttp2Session>();
    server.on("session", (s) => {
      sessions.add(s);
      s.on("error", () => {});
      s.on("close", () => sessions.delete(s));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(() => new Promise<void>((resolve) => (sessions.forEach((s) => s.destroy()), server.close(() => resolve()))));
    return server;
  }

  function sessionTo(port: number): Http2ClientSession {
    const session = new Http2ClientSession(connect(port, "127.0.0.1"), false);
    cleanups.push(() => session.destroy());
    return session;
  }
  const portOf = (server: Http2Server | Server) => (server.address() as AddressInfo).port;

  it("sends a body larger than the peer's 1000-octet window (waiting for WINDOW_UPDATE) and receives one larger than its own 65 535", async () => {
    const server = await h2Server(
      (stream, _h, body) => {
        stream.respond({ ":status": 200, "x-received": String(body.length) });
        stream.end(Buffer.alloc(300_000, 7));
      },
      { initialWindowSize: 1000, maxFrameSize: 16384 },
    );
    const session = sessionTo(portOf(server));
    const body = Buffer.alloc(100_000, 1);
    const [a, b] = await Promise.all([exchange(session, request("/a"), body), exchange(session, request("/b"), body)]);
    for (const r of [a, b]) {
      assert.deepEqual(r.end, { kind: "ended" });
      assert.equal(r.headers[0]["x-received"], "100000");
      assert.equal(r.body.length, 300_000);
    }
  });

  it("sends and receives header blocks longer than a frame (HEADERS + CONTINUATION)", async () => {
    const long = "x".repeat(40_000);
    const server = await h2Server((stream, headers) => {
      stream.respond({ ":status": 200, "x-echo": String(headers["x-long"]).length, "x-long-back": long }, { endStream: true });
    });
    const r = await exchange(sessionTo(portOf(server)), request("/", [["x-long", long]]), Buffer.alloc(0));
    assert.deepEqual(r.end, { kind: "ended" });
    assert.equal(r.headers[0]["x-echo"], "40000");
    assert.equal(r.headers[0]["x-long-back"], long);
  });

  it("reads a response whose HEADERS and DATA frames are padded", async () => {
    const server = await h2Server(
      (stream, _h, body) => {
        stream.respond({ ":status": 200, "x-length": String(body.length) }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(Buffer.concat([body, body]));
      },
      {},
      h2.PADDING_STRATEGY_MAX,
    );
    const r = await exchange(sessionTo(portOf(server)), request("/"), Buffer.from("padded"));
    assert.deepEqual(r.end, { kind: "ended" });
    assert.equal(r.headers[0]["x-length"], "6");
    assert.equal(r.headers[1]["grpc-status"], "0");
    assert.equal(r.body.toString(), "paddedpadded");
  });

  it("keeps to the peer's SETTINGS_MAX_CONCURRENT_STREAMS, opening waiting streams as others end", async () => {
    let open = 0;
    let most = 0;
    const server = await h2Server(
      (stream) => {
        open++;
        most = Math.max(most, open);
        setTimeout(() => {
          open--;
          stream.respond({ ":status": 200 }, { endStream: true });
        }, 10);
      },
      { maxConcurrentStreams: 1 },
    );
    const session = sessionTo(portOf(server));
    await exchange(session, request("/first"), Buffer.alloc(1)); // the peer's SETTINGS have arrived
    const all = await Promise.all([1, 2, 3, 4].map((i) => exchange(session, request(`/${i}`), Buffer.alloc(1))));
    assert.deepEqual(
      all.map((r) => r.end.kind),
      ["ended", "ended", "ended", "ended"],
    );
    assert.equal(most, 1);
  });

  it("GOAWAY mid-call: the stream the peer accepted finishes, the one above its last stream id ends refused, no new streams", async () => {
    const held: ServerHttp2Stream[] = [];
    let goaway: { code: number; last: number } | undefined;
    const server = await h2Server((stream) => {
      held.push(stream);
      if (held.length < 2) return;
      stream.session!.goaway(h2.NGHTTP2_NO_ERROR, held[0].id!);
      held[0].respond({ ":status": 200 });
      held[0].end("done");
    });
    const session = new Http2ClientSession(connect(portOf(server), "127.0.0.1"), false, { onGoaway: (code, last) => (goaway = { code, last }) });
    cleanups.push(() => session.destroy());
    const first = exchange(session, request("/1"), Buffer.from("a"));
    const second = exchange(session, request("/2"), Buffer.from("b"));
    const [a, b] = await Promise.all([first, second]);
    assert.deepEqual(b.end, { kind: "reset", code: ErrorCode.REFUSED_STREAM });
    assert.deepEqual(a.end, { kind: "ended" });
    assert.equal(a.body.toString(), "done");
    assert.deepEqual(goaway, { code: 0, last: 1 });
    assert.equal(session.closing, true);
    assert.throws(() => session.request(request("/3"), Buffer.alloc(0), { onHeaders() {}, onData() {}, onEnd() {} }), /closing/);
  });

  it("a stream the peer resets ends with its code; the connection stays usable", async () => {
    let n = 0;
    const server = await h2Server((stream) =>
      n++ === 0 ? stream.close(h2.NGHTTP2_ENHANCE_YOUR_CALM) : stream.respond({ ":status": 200 }, { endStream: true }),
    );
    const session = sessionTo(portOf(server));
    assert.deepEqual((await exchange(session, request("/"), Buffer.alloc(3))).end, { kind: "reset", code: ErrorCode.ENHANCE_YOUR_CALM });
    assert.deepEqual((await exchange(session, request("/"), Buffer.alloc(3))).end, { kind: "ended" });
  });

  it("cancel() resets the stream on the wire and calls nothing after", async () => {
    let aborted = 0;
    let opened = 0;
    const server = createH2Server();
    server.on("stream", (stream) => {
      opened++;
      stream.on("error", () => {});
      stream.on("aborted", () => aborted++);
    });
    await listening(server);
    const session = sessionTo(portOf(server));
    let called = false;
    const stream = session.request(request("/"), Buffer.alloc(10), {
      onHeaders: () => (called = true),
      onData: () => (called = true),
      onEnd: () => (called = true),
    });
    await waitUntil(() => opened === 1);
    stream.cancel();
    await waitUntil(() => aborted > 0);
    assert.equal(called, false);
  });

  it("PINGs both ways: its own answered, the peer's acknowledged", async () => {
    let serverSession: import("node:http2").ServerHttp2Session | undefined;
    const server = await h2Server((stream) => stream.respond({ ":status": 200 }, { endStream: true }));
    server.on("session", (s) => (serverSession = s));
    const session = sessionTo(portOf(server));
    await exchange(session, request("/"), Buffer.alloc(0));
    await new Promise<void>((resolve) => session.ping(resolve));
    const rtt = await new Promise<number>((resolve, reject) => serverSession!.ping((e, ms) => (e ? reject(e) : resolve(ms))));
    assert.ok(rtt >= 0);
  });

  it("nghttp2 decodes every octet a header value may hold as this Huffman code encodes it", async () => {
    // Tab, space, the rest of ASCII's printable octets and 0x80…0xff (a value may not start with whitespace).
    const printable = [0x21, 9, 0x20, ...Array.from({ length: 0x7f - 0x22 }, (_, i) => 0x22 + i), ...Array.from({ length: 128 }, (_, i) => 0x80 + i)];
    const value = String.fromCharCode(...printable);
    let seen: string | undefined;
    const server = await h2Server((stream, headers) => {
      seen = headers["x-all"] as string;
      stream.respond({ ":status": 200 }, { endStream: true });
    });
    // A header block by hand: :method POST, :scheme http, :path /, :authority literal, x-all literal with a Huffman value.
    const name = Buffer.from("x-all", "latin1");
    const coded = Buffer.alloc(huffmanLength(value));
    huffmanEncode(value, coded, 0);
    const length = coded.length; // 2-octet prefixed integer: 127 + rest
    const block = Buffer.concat([
      Buffer.from([0x83, 0x86, 0x84, 0x01, 9]),
      Buffer.from("localhost"),
      Buffer.from([0x00, name.length]),
      name,
      Buffer.from([0xff, ...continuation(length - 127)]),
      coded,
    ]);
    const socket = connect(portOf(server), "127.0.0.1");
    cleanups.push(() => socket.destroy());
    socket.on("data", () => {});
    socket.write(Buffer.concat([CLIENT_PREFACE, settingsFrame([]), frame(FrameType.HEADERS, 0x5, 1, block)]));
    await waitUntil(() => seen !== undefined);
    assert.equal(Buffer.from(seen!, "latin1").toString("hex"), Buffer.from(value, "latin1").toString("hex"));
  });

  describe("a peer that breaks the protocol gets GOAWAY with the error, and open streams end as dropped", () => {
    async function rawPeer(answer: (socket: Socket) => void): Promise<{ port: number; goaway: () => number | undefined }> {
      let goawayCode: number | undefined;
      const server = createTcpServer((socket) => {
        socket.on("error", () => {});
        let prefaceSeen = false;
        const reader = new FrameReader((f) => {
          if (f.type === FrameType.GOAWAY) goawayCode = f.payload.readUInt32BE(4);
          if (f.type === FrameType.HEADERS) answer(socket);
        }, 1 << 20);
        socket.on("data", (d: Buffer) => {
          if (!prefaceSeen) {
            prefaceSeen = true;
            d = d.subarray(CLIENT_PREFACE.length);
          }
          reader.push(d);
        });
      });
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
      return { port: portOf(server), goaway: () => goawayCode };
    }
    for (const [what, bytes, code] of [
      ["a frame longer than 16 384 octets", () => frame(FrameType.DATA, 0, 1, Buffer.alloc(20_000)), ErrorCode.FRAME_SIZE_ERROR],
      ["a header block with an index beyond the tables", () => frame(FrameType.HEADERS, 0x5, 1, Buffer.from([0xff, 0x10])), ErrorCode.COMPRESSION_ERROR],
      [
        "HEADERS interrupted by another stream's frame",
        () => Buffer.concat([frame(FrameType.HEADERS, 0, 1, Buffer.from([0x88])), frame(FrameType.DATA, 0, 1)]),
        ErrorCode.PROTOCOL_ERROR,
      ],
      ["PUSH_PROMISE (push is disabled)", () => frame(FrameType.PUSH_PROMISE, 0x4, 1, Buffer.from([0, 0, 0, 2, 0x82])), ErrorCode.PROTOCOL_ERROR],
      ["HEADERS on a stream it never opened", () => frame(FrameType.HEADERS, 0x5, 5, Buffer.from([0x88])), ErrorCode.PROTOCOL_ERROR],
    ] as const) {
      it(what, async () => {
        const peer = await rawPeer((socket) => socket.write(Buffer.concat([settingsFrame([]), bytes()])));
        const session = sessionTo(peer.port);
        const r = await exchange(session, request("/"), Buffer.from("x"));
        assert.equal(r.end.kind, "dropped");
        assert.match(r.end.kind === "dropped" ? String(r.end.error) : "", new RegExp(`HTTP/2 protocol error \\(code ${code}\\)`));
        await waitUntil(() => peer.goaway() !== undefined);
        assert.equal(peer.goaway(), code);
      });
    }
  });
});

/** The continuation octets of an HPACK integer's remainder. */
function continuation(rest: number): number[] {
  const out: number[] = [];
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  out.push(rest);
  return out;
}

async function waitUntil(ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}
