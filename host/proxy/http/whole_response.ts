import { STATUS_CODES, type ServerResponse, validateHeaderName, validateHeaderValue } from "node:http";
import type { Socket } from "node:net";

/**
 * A whole response (head and complete body) written to the client in one
 * socket write, with the bytes node:http would have written for
 * `writeHead(status, rawHeaders)`, `write(part)`…, `end()`. node:http's
 * writing side costs about half of its server's instructions per request
 * (docs/benchmarks.md, "the downstream half"): the head stored field by
 * field, then the head, each chunk's size line, the chunk, its CRLF and the
 * last chunk as separate writes gathered into one `writev` of strings and
 * buffers. Here the head is made from the same rules (Node 20's
 * `_storeHeader` for a server response), the framing is the one Node would
 * choose (the given Content-Length, else chunked), and the response's own
 * state is set as writeHead and the writes would have left it, so `end()`
 * finishes it the usual way ('finish', the next pipelined response, the
 * connection kept or closed).
 *
 * Only the plain case takes this path; anything else (`prepare` answers
 * undefined, or `send` finds the response not at the head of its
 * connection) goes through node:http itself: a HEAD request, 1xx/204/304,
 * an HTTP/1.0 client without chunked encoding, 100-continue, a response
 * without Date (Node would add its own), Connection, Transfer-Encoding,
 * Trailer, Keep-Alive, Expect or Content-Disposition among the fields, or
 * a response whose internals are not the ones this module knows.
 */

/** The fields of Node 20's OutgoingMessage/ServerResponse this module reads and sets. */
interface ResponseInternals {
  _header: string | null;
  _headerSent: boolean;
  _hasBody: boolean;
  _last: boolean;
  _expect_continue: boolean;
  _keepAliveTimeout: number;
  _removedConnection: boolean;
  _removedContLen: boolean;
  _removedTE: boolean;
  _contentLength: number | null;
  chunkedEncoding: boolean;
  useChunkedEncodingByDefault: boolean;
  shouldKeepAlive: boolean;
  maxRequestsOnConnectionReached: boolean;
  sendDate: boolean;
  outputData: unknown[];
  statusMessage: string;
}

/** A response head made ready for `send`: validated as writeHead validates it. */
export interface WholeHead {
  readonly status: number;
  readonly rawHeaders: string[];
  readonly message: string;
  /** The head's text, its blank line included. */
  readonly head: string;
  readonly chunked: boolean;
  /** The connection closes after this response (`Connection: close` was added). */
  readonly last: boolean;
  readonly contentLength: number | null;
}

const CRLF = "\r\n";
const LAST_CHUNK = Buffer.from("0\r\n\r\n", "latin1");
const CHUNK_END_AND_LAST = Buffer.from("\r\n0\r\n\r\n", "latin1");

/**
 * The head writeHead(status, rawHeaders) would store on `res`, or undefined
 * when the response is not the plain case. Throws what writeHead throws for
 * an invalid name or value (nothing is written then).
 */
export function prepareWholeHead(res: ServerResponse, status: number, rawHeaders: string[]): WholeHead | undefined {
  const r = res as unknown as ResponseInternals;
  if (
    r._header !== null ||
    r._hasBody !== true ||
    r.chunkedEncoding !== false ||
    r._expect_continue !== false ||
    r._keepAliveTimeout ||
    r._removedConnection !== false ||
    r._removedContLen !== false ||
    r._removedTE !== false ||
    r.sendDate !== true ||
    r.statusMessage ||
    !Number.isInteger(status) ||
    status < 200 ||
    status > 999 ||
    status === 204 ||
    status === 304 ||
    rawHeaders.length % 2 !== 0
  )
    return undefined;
  const message = STATUS_CODES[status] ?? "unknown";
  // As writeHead, which sets both before it validates the fields: a later writeHead after a refusal keeps this reason phrase.
  res.statusCode = status;
  r.statusMessage = message;
  let head = `HTTP/1.1 ${status} ${message}\r\n`;
  let contentLength: number | null = null;
  let date = false;
  let plain = true;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const value = rawHeaders[i + 1];
    validateHeaderName(name);
    validateHeaderValue(name, value);
    head += `${name}: ${value}${CRLF}`;
    // The fields Node's matchHeader acts on (4 to 17 characters), and Content-Disposition, which it re-encodes.
    if (name.length < 4 || name.length > 19) continue;
    switch (name.toLowerCase()) {
      case "content-length":
        contentLength = +value;
        break;
      case "date":
        date = true;
        break;
      case "connection":
      case "transfer-encoding":
      case "expect":
      case "trailer":
      case "keep-alive":
      case "content-disposition":
        plain = false;
        break;
    }
  }
  if (!plain || !date) return undefined;
  const contLen = contentLength !== null;
  // Node's keep-alive rule for a response whose fields say nothing of the connection.
  let last = false;
  const keepAlive = r.shouldKeepAlive && (contLen || r.useChunkedEncodingByDefault);
  if (keepAlive && r.maxRequestsOnConnectionReached) head += "Connection: close\r\n";
  else if (keepAlive) head += "Connection: keep-alive\r\n";
  else {
    last = true;
    head += "Connection: close\r\n";
  }
  let chunked = false;
  if (!contLen) {
    // Without chunked encoding (an HTTP/1.0 client) Node delimits the body by the connection's close.
    if (!r.useChunkedEncodingByDefault || typeof r._contentLength === "number") return undefined;
    head += "Transfer-Encoding: chunked\r\n";
    chunked = true;
  }
  return { status, rawHeaders, message, head: head + CRLF, chunked, last, contentLength };
}

/**
 * Writes `h` and the whole body (`parts`, in order) in one socket write and
 * ends the response; when the response cannot take that path now (it is
 * queued behind another on its connection, or something was written), the
 * same through node:http: writeHead, write each part, end.
 */
export function sendWhole(res: ServerResponse, h: WholeHead, parts: readonly Buffer[]): void {
  const r = res as unknown as ResponseInternals;
  const socket = res.socket as (Socket & { _httpMessage?: unknown }) | null;
  if (r._header !== null || res.destroyed || !socket || socket._httpMessage !== res || !socket.writable || r.outputData.length !== 0) {
    res.writeHead(h.status, h.rawHeaders);
    for (const part of parts) res.write(part);
    res.end();
    return;
  }
  // One buffer: the head, then each part (framed as a chunk when chunked), then the last chunk.
  let size = h.head.length;
  for (const part of parts) size += h.chunked ? chunkFraming(part.length) : part.length;
  if (h.chunked) size += LAST_CHUNK.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  let text = h.head;
  for (const part of parts) {
    // Node writes an empty part as nothing (no chunk: a zero-size chunk would end the body).
    if (part.length === 0) continue;
    if (h.chunked) text += `${part.length.toString(16)}${CRLF}`;
    at += out.write(text, at, "latin1");
    at += part.copy(out, at);
    text = h.chunked ? CRLF : "";
  }
  // After a chunk: its CRLF and the last chunk, one copy; with no chunk: the head, then the last chunk.
  if (h.chunked && text === CRLF) CHUNK_END_AND_LAST.copy(out, at);
  else {
    if (text !== "") at += out.write(text, at, "latin1");
    if (h.chunked) LAST_CHUNK.copy(out, at);
  }
  // The state writeHead and the writes leave (prepareWholeHead set the status): headers sent, whether the connection ends here.
  r._header = h.head;
  r._headerSent = true;
  if (h.contentLength !== null) r._contentLength = h.contentLength;
  if (h.last) r._last = true;
  socket.write(out);
  res.end();
}

/** Bytes of a part framed as a chunk: its size in hex, CRLF, the data, CRLF (none for an empty part). */
function chunkFraming(length: number): number {
  return length === 0 ? 0 : length.toString(16).length + 2 + length + 2;
}
