// The HTTP/1.1 response parser on chosen bytes, each response also fed
// split at every byte boundary (the parser must not care where reads end).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ResponseHead } from "../../../host/wire/h1/response_head.ts";
import { ResponseParser } from "../../../host/wire/h1/response_parser.ts";

interface Parsed {
  heads: ResponseHead[];
  whole: boolean;
  body: string;
  ended: boolean;
  extraneous: boolean;
}

const LIMIT = 60 * 1024;

function parse(bytes: Buffer | string, splits: number[] = [], method = "GET", close = false, limit = LIMIT): Parsed {
  const out: Parsed = { heads: [], whole: false, body: "", ended: false, extraneous: false };
  const parser = new ResponseParser(
    {
      head: (h, whole) => {
        out.heads.push(h);
        if (whole) {
          out.whole = true;
          out.body += whole.toString("latin1");
          out.ended = true;
        }
      },
      data: (c) => {
        out.body += c.toString("latin1");
      },
      end: () => {
        out.ended = true;
      },
    },
    limit,
  );
  parser.expect(method);
  const buf = typeof bytes === "string" ? Buffer.from(bytes, "latin1") : bytes;
  let at = 0;
  for (const s of [...splits, buf.length]) {
    if (s > at) parser.push(buf.subarray(at, s));
    at = Math.max(at, s);
  }
  if (close) parser.closed();
  out.extraneous = parser.extraneous;
  return out;
}

/** Parses `bytes` whole and split in two at every boundary; every way must agree (body and heads). */
function parseEverySplit(bytes: string, method = "GET", close = false): Parsed {
  const whole = parse(bytes, [], method, close);
  for (let i = 1; i < bytes.length; i++) {
    const split = parse(bytes, [i], method, close);
    assert.deepEqual(split.heads, whole.heads, `split at ${i}`);
    assert.equal(split.body, whole.body, `split at ${i}`);
    assert.equal(split.ended, whole.ended, `split at ${i}`);
  }
  // One byte at a time too.
  const bytewise = parse(
    bytes,
    [...bytes].map((_, i) => i + 1),
    method,
    close,
  );
  assert.equal(bytewise.body, whole.body);
  return whole;
}

function parseError(bytes: string, method = "GET", limit = LIMIT): NodeJS.ErrnoException {
  try {
    parse(bytes, [], method, false, limit);
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
  assert.fail("no error");
}

describe("ResponseParser", () => {
  it("reads a Content-Length response and hands the body with the head when it came whole", () => {
    const r = parseEverySplit("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Two: a\r\nx-two:  b \r\nContent-Length: 5\r\n\r\nhello");
    assert.equal(r.heads[0].status, 200);
    assert.equal(r.heads[0].statusMessage, "OK");
    assert.equal(r.heads[0].httpVersion, "1.1");
    assert.deepEqual(r.heads[0].rawHeaders, ["Content-Type", "text/plain", "X-Two", "a", "x-two", "b", "Content-Length", "5"]);
    assert.equal(r.heads[0].keepAlive, true);
    assert.equal(r.body, "hello");
    assert.equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello").whole, true);
    assert.equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", [40]).whole, false);
  });

  it("reads chunked bodies with extensions and trailers (dropped), and a status line without reason", () => {
    const r = parseEverySplit(
      'HTTP/1.1 201\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value;q="x"\r\nhello\r\nA\r\n0123456789\r\n0;last\r\nX-Trailer: t\r\nOther: u\r\n\r\n',
    );
    assert.equal(r.heads[0].status, 201);
    assert.equal(r.heads[0].statusMessage, "");
    assert.equal(r.body, "hello0123456789");
    assert.equal(r.ended, true);
    assert.equal(r.heads[0].keepAlive, true);
  });

  it("allows Content-Length repeated with one value, and refuses conflicting or malformed ones", () => {
    assert.equal(parseEverySplit("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\nContent-Length: 3\r\n\r\nabc").body, "abc");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc").code, "HPE_UNEXPECTED_CONTENT_LENGTH");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabc").code, "HPE_UNEXPECTED_CONTENT_LENGTH");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n").code, "HPE_INVALID_CONTENT_LENGTH");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n").code, "HPE_INVALID_CONTENT_LENGTH");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n").code, "HPE_UNEXPECTED_CONTENT_LENGTH");
  });

  it("refuses malformed heads and chunks with HPE_ codes", () => {
    assert.equal(parseError("HTTP/2.0 200 OK\r\n\r\n").code, "HPE_INVALID_CONSTANT");
    // Refused as soon as the bytes cannot be a status line, before any blank line.
    assert.equal(parseError("SSH-2.0-OpenSSH_9.6\r\n").code, "HPE_INVALID_CONSTANT");
    assert.equal(parseError("HTTP/1.1 abc\r\n").code, "HPE_INVALID_CONSTANT");
    assert.equal(parseError("X").code, "HPE_INVALID_CONSTANT");
    assert.equal(parse("HTTP/1.1 200 OK\r\nA: b\r\n").heads.length, 0);
    assert.equal(parseError("HTTP/1.1 20 OK\r\n\r\n").code, "HPE_INVALID_CONSTANT");
    assert.equal(parseError("HTTP/1.1 099 Low\r\n\r\n").code, "HPE_INVALID_STATUS");
    assert.equal(parseError("HTTP/1.1 000 Zero\r\n\r\n").code, "HPE_INVALID_STATUS");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n").code, "HPE_INVALID_HEADER_TOKEN");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n").code, "HPE_INVALID_HEADER_TOKEN");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nA: b\x00c\r\n\r\n").code, "HPE_INVALID_HEADER_TOKEN");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nA: b\nC: d\r\n\r\n").code, "HPE_INVALID_HEADER_TOKEN");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").code, "HPE_INVALID_CHUNK_SIZE");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n").code, "HPE_STRICT");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n").code, "HPE_LF_EXPECTED");
  });

  it("reads chunk sizes with whitespace, either case and extensions, and refuses what is not one", () => {
    const r = parseEverySplit("HTTP/1.1 200 OK\r\ntransfer-encoding: CHUNKED\r\n\r\n 5 ;a=b\r\nhello\r\na\t\r\n0123456789\r\n000\r\n\r\n");
    assert.equal(r.body, "hello0123456789");
    assert.equal(r.ended, true);
    assert.equal(parseEverySplit("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000F\r\n0123456789abcde\r\n0\r\n\r\n").body, "0123456789abcde");
    const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (const line of ["0000000000001", "5 5", "5x", ";ext", "", "-5", "5\rx"]) {
      const e = parseError(`${chunked}${line}\r\nhello\r\n0\r\n\r\n`);
      assert.equal(e.code, "HPE_INVALID_CHUNK_SIZE", JSON.stringify(line));
    }
    assert.equal(parseError(`${chunked}5\nhello\r\n`).code, "HPE_LF_EXPECTED");
    assert.equal(parseError(`${chunked}\n`).code, "HPE_LF_EXPECTED");
    assert.equal(parseError(`${chunked}5\r\nhello\n0\r\n\r\n`).code, "HPE_LF_EXPECTED");
    assert.equal(parseError(`${chunked}0\r\nT: a\x7fb\r\n\r\n`).code, "HPE_INVALID_HEADER_TOKEN");
  });

  it("reads field names in any case and obs-text in values; refuses DEL and a CR or LF on its own", () => {
    const r = parseEverySplit(
      "HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 2\r\nX-Latin: caf\xe9 \t\r\nConnection: Keep-Alive\r\nKEEP-ALIVE: max=5, Timeout=7\r\n\r\nok",
    );
    assert.equal(r.body, "ok");
    assert.deepEqual(r.heads[0].rawHeaders, ["CONTENT-LENGTH", "2", "X-Latin", "caf\xe9", "Connection", "Keep-Alive", "KEEP-ALIVE", "max=5, Timeout=7"]);
    assert.equal(r.heads[0].keepAliveTimeoutS, 7);
    assert.equal(parse("HTTP/1.1 200 OK\r\nEmpty:\r\nContent-Length: 0\r\n\r\n").heads[0].rawHeaders[1], "");
    for (const head of [
      "HTTP/1.1 200 OK\r\nA: b\x7f\r\n\r\n",
      "HTTP/1.1 200 OK\r\nA: b\r\r\n\r\n",
      "HTTP/1.1 200 OK\rA: b\r\n\r\n",
      "HTTP/1.1 200\x00 OK\r\n\r\n",
    ])
      assert.equal(parseError(head).code, "HPE_INVALID_HEADER_TOKEN", JSON.stringify(head));
    assert.equal(parseError("HTTP/1.1 200 OK\r\n: novalue\r\n\r\n").code, "HPE_INVALID_HEADER_TOKEN");
    assert.equal(parseError("HTTP/1.1 200 OK\r\nName : v\r\n\r\n").code, "HPE_INVALID_HEADER_TOKEN");
    assert.equal(parseError("HTTP/1.1 2000 OK\r\n\r\n").code, "HPE_INVALID_CONSTANT");
    assert.equal(parseError("HTTP/1.2 200 OK\r\n\r\n").code, "HPE_INVALID_CONSTANT");
  });

  it("refuses a head over the size limit, whether or not its end has arrived", () => {
    const big = `HTTP/1.1 200 OK\r\nX-Big: ${"a".repeat(LIMIT)}\r\n\r\n`;
    assert.equal(parseError(big).code, "HPE_HEADER_OVERFLOW");
    assert.equal(parseError(big.slice(0, LIMIT + 100)).code, "HPE_HEADER_OVERFLOW");
    const justUnder = `HTTP/1.1 204 No Content\r\nX-Big: ${"a".repeat(LIMIT - 60)}\r\n\r\n`;
    assert.equal(parse(justUnder).heads[0].status, 204);
    const trailers = `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n${"T: x\r\n".repeat(LIMIT / 4)}\r\n`;
    assert.equal(parseError(trailers).code, "HPE_HEADER_OVERFLOW");
  });

  it("skips interim responses and refuses an unsolicited 101", () => {
    const r = parseEverySplit(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    );
    assert.deepEqual(
      r.heads.map((h) => h.status),
      [200],
    );
    assert.equal(r.body, "ok");
    assert.equal(parseError("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n").code, "HPE_UNEXPECTED_UPGRADE");
  });

  it("reads a close-delimited body until the connection closes; the connection is not reusable", () => {
    const r = parseEverySplit("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", "GET", true);
    assert.equal(r.heads[0].httpVersion, "1.0");
    assert.equal(r.heads[0].keepAlive, false);
    assert.equal(r.body, "until the end");
    assert.equal(r.ended, true);
    assert.equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxyz", [], "GET", true).body, "xyz");
    assert.equal(parse("HTTP/1.1 200 OK\r\n\r\nxyz").ended, false);
  });

  it("reads no body for HEAD requests, 204 and 304, whatever the framing fields say", () => {
    for (const [bytes, method] of [
      ["HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", "HEAD"],
      ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "HEAD"],
      ["HTTP/1.1 204 No Content\r\n\r\n", "GET"],
      ["HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", "GET"],
    ]) {
      const r = parse(bytes, [], method);
      assert.equal(r.ended, true, bytes);
      assert.equal(r.body, "");
      assert.equal(r.heads[0].keepAlive, true);
    }
  });

  it("says whether the connection may be reused: Connection close, HTTP/1.0 keep-alive, the Keep-Alive hint", () => {
    assert.equal(parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").heads[0].keepAlive, false);
    assert.equal(parse("HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\nContent-Length: 0\r\n\r\n").heads[0].keepAlive, false);
    assert.equal(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").heads[0].keepAlive, false);
    const ka = parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n").heads[0];
    assert.equal(ka.keepAlive, true);
    assert.equal(ka.keepAliveTimeoutS, 5);
    assert.equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").heads[0].keepAliveTimeoutS, undefined);
  });

  it("marks bytes after the complete response", () => {
    assert.equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA").extraneous, true);
    assert.equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").extraneous, false);
  });

  it("fails with ECONNRESET when the connection closes before the head or mid-body", () => {
    for (const bytes of [
      "",
      "HTTP/1.1 200 OK\r\nContent-",
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
    ]) {
      assert.throws(
        () => parse(bytes, [], "GET", true),
        (e: NodeJS.ErrnoException) => e.code === "ECONNRESET",
        JSON.stringify(bytes),
      );
    }
  });
});
