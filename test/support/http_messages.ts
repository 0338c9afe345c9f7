// Strict HTTP/1.1 message readers for tests that look at the bytes on a
// connection themselves (issue 25): a request or response is read only when
// its framing is unambiguous (RFC 9112 §6): one Content-Length of digits, or
// exactly `Transfer-Encoding: chunked` without a Content-Length, or neither.
// Anything else is malformed; nothing is guessed.

export interface HttpRequestMessage {
  method: string;
  target: string;
  version: string;
  /** Header fields as received (names as spelled). */
  headers: Array<[string, string]>;
  body: Buffer;
  /** The message's bytes exactly as received. */
  raw: Buffer;
}

export interface HttpResponseMessage {
  status: number;
  headers: Array<[string, string]>;
  body: Buffer;
}

/** One message read from the front of `data`: the message and its length, "incomplete", or a reason it is malformed. */
export type ReadResult<T> = { message: T; length: number } | "incomplete" | { malformed: string };

const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function header(headers: ReadonlyArray<[string, string]>, name: string): string[] {
  return headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v);
}

interface Head {
  startLine: string;
  headers: Array<[string, string]>;
  bodyStart: number;
}

function readHead(data: Buffer): Head | "incomplete" | { malformed: string } {
  const end = data.indexOf(HEAD_END);
  if (end < 0) return data.length > 65_536 ? { malformed: "head over 64 KiB" } : "incomplete";
  const lines = data.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) return { malformed: `bad header line ${JSON.stringify(line)}` };
    const value = line.slice(colon + 1).trim();
    if (/[\r\n\0]/.test(value)) return { malformed: `bad header value ${JSON.stringify(line)}` };
    headers.push([name, value]);
  }
  return { startLine: lines[0], headers, bodyStart: end + 4 };
}

/** The body after `start`, framed as the head says; `bodiless` for responses to HEAD and 1xx/204/304. */
function readBody(data: Buffer, start: number, headers: Array<[string, string]>, bodiless: boolean): { body: Buffer; end: number } | "incomplete" | { malformed: string } {
  const lengths = header(headers, "content-length");
  const codings = header(headers, "transfer-encoding");
  if (codings.length > 0 && lengths.length > 0) return { malformed: "both Content-Length and Transfer-Encoding" };
  if (bodiless) return { body: Buffer.alloc(0), end: start };
  if (codings.length > 0) {
    if (codings.length !== 1 || codings[0] !== "chunked") return { malformed: `Transfer-Encoding ${JSON.stringify(codings)}` };
    const parts: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = data.indexOf(CRLF, at);
      if (lineEnd < 0) return data.length - at > 1024 ? { malformed: "chunk size line too long" } : "incomplete";
      const sizeText = data.subarray(at, lineEnd).toString("latin1");
      if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) return { malformed: `chunk size line ${JSON.stringify(sizeText)}` };
      const size = parseInt(sizeText, 16);
      at = lineEnd + 2;
      if (size === 0) {
        // No trailers are written by the proxies under test: the last chunk ends the message.
        if (data.length < at + 2) return "incomplete";
        if (!data.subarray(at, at + 2).equals(CRLF)) return { malformed: "trailer fields after the last chunk" };
        return { body: Buffer.concat(parts), end: at + 2 };
      }
      if (data.length < at + size + 2) return "incomplete";
      parts.push(data.subarray(at, at + size));
      if (!data.subarray(at + size, at + size + 2).equals(CRLF)) return { malformed: "chunk not followed by CRLF" };
      at += size + 2;
    }
  }
  if (lengths.length > 1 || (lengths.length === 1 && !/^[0-9]+$/.test(lengths[0]))) return { malformed: `Content-Length ${JSON.stringify(lengths)}` };
  const length = lengths.length === 1 ? Number(lengths[0]) : 0;
  if (data.length < start + length) return "incomplete";
  return { body: data.subarray(start, start + length), end: start + length };
}

/** Reads the request at the front of `data`. */
export function readRequest(data: Buffer): ReadResult<HttpRequestMessage> {
  const head = readHead(data);
  if (head === "incomplete" || "malformed" in head) return head;
  const line = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\S+) (HTTP\/1\.[01])$/.exec(head.startLine);
  if (!line) return { malformed: `request line ${JSON.stringify(head.startLine)}` };
  const body = readBody(data, head.bodyStart, head.headers, false);
  if (body === "incomplete" || "malformed" in body) return body;
  return { message: { method: line[1], target: line[2], version: line[3], headers: head.headers, body: Buffer.from(body.body), raw: Buffer.from(data.subarray(0, body.end)) }, length: body.end };
}

/** Reads the response at the front of `data` to a request of `method`. */
export function readResponse(data: Buffer, method: string): ReadResult<HttpResponseMessage> {
  const head = readHead(data);
  if (head === "incomplete" || "malformed" in head) return head;
  const line = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(head.startLine);
  if (!line) return { malformed: `status line ${JSON.stringify(head.startLine)}` };
  const status = Number(line[1]);
  const bodiless = method === "HEAD" || status < 200 || status === 204 || status === 304;
  const body = readBody(data, head.bodyStart, head.headers, bodiless);
  if (body === "incomplete" || "malformed" in body) return body;
  return { message: { status, headers: head.headers, body: Buffer.from(body.body) }, length: body.end };
}

/** Every response in `data` (a connection's bytes, in order) to requests of the given methods. */
export function readResponses(data: Buffer, methods: readonly string[]): { responses: HttpResponseMessage[]; rest: Buffer; malformed?: string } {
  const responses: HttpResponseMessage[] = [];
  let at = 0;
  while (at < data.length && responses.length < methods.length) {
    const r = readResponse(data.subarray(at), methods[responses.length]);
    if (r === "incomplete") break;
    if ("malformed" in r) return { responses, rest: data.subarray(at), malformed: r.malformed };
    responses.push(r.message);
    at += r.length;
  }
  return { responses, rest: data.subarray(at) };
}
