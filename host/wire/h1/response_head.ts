// The head of an HTTP/1.1 response (RFC 9112 §4, §5), read from its bytes:
// the status line, the header fields as sent, and how the body after it is
// delimited (§6.3). The head's latin1 text is read in two passes, one to
// check its characters (one anchored expression with no lookaround, the
// cheapest scan V8 has for it) and one to split its fields by hand: the
// sidecar reads one head per proxied request, and splitting by expressions
// (a lookbehind over the whole head among them) cost several times the rest
// of the work; the usual field values are read without a split or an
// expression (docs/benchmarks.md, issue 30).

export class HttpParseError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ResponseHead {
  readonly status: number;
  readonly statusMessage: string;
  readonly httpVersion: "1.0" | "1.1";
  /** name, value, name, value… in order; names as sent. */
  readonly rawHeaders: string[];
  /** The connection may carry another request after this response (HTTP/1.1 without `Connection: close`, HTTP/1.0 with keep-alive, a delimited body). */
  readonly keepAlive: boolean;
  /** The `Keep-Alive: timeout=N` hint, seconds. */
  readonly keepAliveTimeoutS: number | undefined;
}

/** `BodyFraming.length` for a chunked body. */
export const CHUNKED = -1;
/** `BodyFraming.length` for a body that ends when the connection closes. */
export const UNTIL_CLOSE = -2;

/** How the body after a final head is delimited: its length (0: none), CHUNKED or UNTIL_CLOSE. */
export interface BodyFraming {
  length: number;
}

// RFC 9110 §5.6.2 tchar.
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TOKEN[c.charCodeAt(0)] = 1;
/**
 * A head of only what it may hold anywhere: HTAB, visible ASCII, SP and
 * obs-text (latin1: bytes), CR and LF only as CRLF. One expression: V8's
 * compiled scan costs about half a `charCodeAt` loop's instructions per
 * character (each iteration has one way to go on, so a failure backtracks
 * once over the head: linear, about 0.25 ms for a 60 KB head).
 */
const HEAD_CHARS = /^(?:[\t\x20-\x7e\x80-\xff]|\r\n)*$/;

const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;
const KEEP_ALIVE_TIMEOUT = /(?:^|[,;\s])timeout\s*=\s*([0-9]+)/i;
const HTTP_1 = "HTTP/1.";

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 255 || TOKEN[c] === 0) return false;
  }
  return true;
}

/** Optional whitespace (SP, HTAB) off both ends; not String.trim, which also takes NBSP (0xA0) and others. */
export function trimOws(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === SP || s.charCodeAt(a) === HTAB)) a++;
  while (b > a && (s.charCodeAt(b - 1) === SP || s.charCodeAt(b - 1) === HTAB)) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** `value` (lower-cased already) names `token`. */
function connectionHas(value: string, token: string): boolean {
  if (value === token) return true;
  // One token (`keep-alive`, `close`: nearly every response) needs no split, and no lower-casing again.
  if (value.indexOf(",") < 0) return trimOws(value) === token;
  for (const t of value.split(",")) if (trimOws(t).toLowerCase() === token) return true;
  return false;
}

/** One or more ASCII digits (what /^[0-9]+$/ matches), without a regular expression's call. */
export function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** Content-Length's value (RFC 9110 §8.6; repeated values allowed when equal), checked against the length read before. */
function contentLengthOf(value: string, before: number | undefined): number {
  let length = before;
  // Nearly every response sends one value: no split.
  for (const v of value.indexOf(",") < 0 ? [value] : value.split(",")) {
    const digits = trimOws(v);
    if (!isDigits(digits) || !Number.isSafeInteger(Number(digits))) throw new HttpParseError("HPE_INVALID_CONTENT_LENGTH", "malformed Content-Length");
    const n = Number(digits);
    if (length !== undefined && length !== n) throw new HttpParseError("HPE_UNEXPECTED_CONTENT_LENGTH", "conflicting Content-Length values");
    length = n;
  }
  return length as number;
}

/** The `timeout=N` hint of a Keep-Alive value, seconds. */
export function keepAliveTimeout(value: string): number | undefined {
  // What Node's servers send (`timeout=5`) is read without the expression.
  if (value.startsWith("timeout=")) {
    const digits = value.slice(8);
    if (isDigits(digits)) return Number(digits);
  }
  const hint = KEEP_ALIVE_TIMEOUT.exec(value);
  return hint ? Number(hint[1]) : undefined;
}

/** The status line `HTTP/1.x NNN[ reason]` (the whole of it matches, or it is not one). */
export function isStatusLine(text: string): boolean {
  if (!text.startsWith(HTTP_1) || (text[7] !== "0" && text[7] !== "1") || text[8] !== " ") return false;
  for (let i = 9; i < 12; i++) if (!(text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39)) return false;
  return text.length === 12 || text[12] === " ";
}

/** No control character but HTAB in `text`, and CR and LF only as CRLF pairs. */
function checkChars(text: string): void {
  if (!HEAD_CHARS.test(text)) throw new HttpParseError("HPE_INVALID_HEADER_TOKEN", "invalid character in the response head");
}

/** `text[at, at + name.length)` is `name` (lower-case letters and `-`), in any case. */
function nameIs(text: string, at: number, name: string): boolean {
  for (let k = 0; k < name.length; k++) if ((text.charCodeAt(at + k) | 0x20) !== name.charCodeAt(k)) return false;
  return true;
}

/**
 * Reads a head (latin1, without the blank line ending it) of the response to
 * a request (`headRequest`: a HEAD's, which has no body). Sets `framing`;
 * undefined for an interim (1xx) response. Throws HttpParseError.
 */
export function parseResponseHead(text: string, headRequest: boolean, framing: BodyFraming): ResponseHead | undefined {
  checkChars(text);
  const end = text.length;
  let lineEnd = text.indexOf("\r", 0);
  if (lineEnd < 0) lineEnd = end;
  const statusLine = lineEnd === end ? text : text.slice(0, lineEnd);
  if (!isStatusLine(statusLine)) throw new HttpParseError("HPE_INVALID_CONSTANT", "malformed status line");
  const httpVersion = statusLine[7] === "1" ? "1.1" : "1.0";
  const status = (text.charCodeAt(9) - 0x30) * 100 + (text.charCodeAt(10) - 0x30) * 10 + (text.charCodeAt(11) - 0x30);
  if (status < 100) throw new HttpParseError("HPE_INVALID_STATUS", `invalid status ${statusLine.slice(9, 12)}`);
  if (status === 101) throw new HttpParseError("HPE_UNEXPECTED_UPGRADE", "unsolicited 101 Switching Protocols");
  const rawHeaders: string[] = [];
  let contentLength: number | undefined;
  let chunked: boolean | undefined;
  let connectionClose = false;
  let connectionKeepAlive = false;
  let keepAliveTimeoutS: number | undefined;
  while (lineEnd < end) {
    const start = lineEnd + 2;
    lineEnd = text.indexOf("\r", start);
    if (lineEnd < 0) lineEnd = end;
    let colon = start;
    while (colon < lineEnd && TOKEN[text.charCodeAt(colon)] === 1) colon++;
    if (colon === start || colon === lineEnd || text.charCodeAt(colon) !== COLON)
      throw new HttpParseError("HPE_INVALID_HEADER_TOKEN", "malformed header field");
    let a = colon + 1;
    let b = lineEnd;
    while (a < b && (text.charCodeAt(a) === SP || text.charCodeAt(a) === HTAB)) a++;
    while (b > a && (text.charCodeAt(b - 1) === SP || text.charCodeAt(b - 1) === HTAB)) b--;
    const value = text.slice(a, b);
    rawHeaders.push(text.slice(start, colon), value);
    const len = colon - start;
    if (len === 14 && nameIs(text, start, "content-length")) contentLength = contentLengthOf(value, contentLength);
    else if (len === 17 && nameIs(text, start, "transfer-encoding")) {
      // The last coding decides; one coding (`chunked`: nearly every such response) needs no split.
      const last = value.indexOf(",") < 0 ? value : value.slice(value.lastIndexOf(",") + 1);
      chunked = last === "chunked" || trimOws(last).toLowerCase() === "chunked";
    } else if (len === 10 && nameIs(text, start, "connection")) {
      const v = value.toLowerCase();
      if (connectionHas(v, "close")) connectionClose = true;
      else if (connectionHas(v, "keep-alive")) connectionKeepAlive = true;
    } else if (len === 10 && nameIs(text, start, "keep-alive")) {
      keepAliveTimeoutS = keepAliveTimeout(value) ?? keepAliveTimeoutS;
    }
  }
  if (status < 200) return undefined;
  let keepAlive = httpVersion === "1.1" ? !connectionClose : connectionKeepAlive && !connectionClose;
  if (headRequest || status === 204 || status === 304) framing.length = 0;
  else if (chunked !== undefined) {
    if (contentLength !== undefined) throw new HttpParseError("HPE_UNEXPECTED_CONTENT_LENGTH", "Content-Length together with Transfer-Encoding");
    framing.length = chunked ? CHUNKED : UNTIL_CLOSE;
  } else if (contentLength !== undefined) framing.length = contentLength;
  else framing.length = UNTIL_CLOSE;
  if (framing.length === UNTIL_CLOSE) keepAlive = false;
  const statusMessage = statusLine.length > 13 ? statusLine.slice(13) : "";
  return { status, statusMessage, httpVersion, rawHeaders, keepAlive, keepAliveTimeoutS };
}
