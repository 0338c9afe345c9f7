// An incremental HTTP/1.1 response parser (RFC 9112) for a client that
// sends one request at a time on a connection: the status line (HTTP/1.0 and
// 1.1), header fields as sent (Node's rawHeaders shape: name, value, …; the
// values without their surrounding whitespace), and the body delimited as
// RFC 9112 §6.3 says — none for a HEAD request, 1xx, 204 and 304; chunked
// (extensions and trailers read and dropped); Content-Length (repeated
// identical values allowed); else until the connection closes.
//
// Interim responses (100, 102, 103, any 1xx but 101) are skipped; a 101
// nobody asked for, a malformed head or framing is an HttpParseError with an
// `HPE_*` code (llhttp's names for the same faults, so callers that knew
// Node's parser read them alike).

const CRLFCRLF = Buffer.from("\r\n\r\n", "latin1");
const EMPTY = Buffer.alloc(0);
/** Longest chunk-size line (size, extensions) or trailer line kept while it is incomplete. */
const MAX_LINE = 16 * 1024;

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

export interface ResponseEvents {
  /** The final response head. `wholeBody`: the whole body when it came with the head (then neither `data` nor `end` follows). */
  head(head: ResponseHead, wholeBody: Buffer | undefined): void;
  data(chunk: Buffer): void;
  /** The body is complete. */
  end(): void;
}

const enum State {
  Idle,
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

// RFC 9110 §5.6.2 tchar.
const TOKEN = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TOKEN[c.charCodeAt(0)] = 1;
/** A control character other than HTAB, or CR / LF outside a CRLF pair. */
const BAD_HEAD_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|(?<!\r)\n/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([0-9]{3})(?: (.*))?$/s;
const DIGITS = /^[0-9]+$/;
const HEX = /^[0-9a-fA-F]+$/;

const HTTP_PREFIX = "HTTP/1.";

/** The start of a head whose end has not arrived: what there is of its status line must be one. */
function checkStatusLineSoFar(buf: Buffer): void {
  const n = Math.min(buf.length, HTTP_PREFIX.length);
  for (let i = 0; i < n; i++) if (buf[i] !== HTTP_PREFIX.charCodeAt(i)) throw new HttpParseError("HPE_INVALID_CONSTANT", "not an HTTP/1 response");
  const lineEnd = buf.indexOf("\r\n");
  if (lineEnd >= 0 && !STATUS_LINE.test(buf.toString("latin1", 0, lineEnd))) throw new HttpParseError("HPE_INVALID_CONSTANT", "malformed status line");
}

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 127 || TOKEN[c] === 0) return false;
  }
  return true;
}

/** Optional whitespace (SP, HTAB) off both ends; not String.trim, which also takes NBSP (0xA0) and others. */
function trimOws(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 0x20 || s.charCodeAt(a) === 0x09)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 0x20 || s.charCodeAt(b - 1) === 0x09)) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

function connectionHas(value: string, token: string): boolean {
  if (value === token) return true;
  for (const t of value.split(",")) if (trimOws(t).toLowerCase() === token) return true;
  return false;
}

export class ResponseParser {
  private state = State.Idle;
  private headRequest = false;
  private pending: Buffer | undefined;
  private line = "";
  private remaining = 0;
  private headBytes = 0;
  private current: ResponseHead | undefined;
  private touched = false;
  /** Bytes came after the response was complete (nothing was asked for: the connection cannot be reused). */
  extraneous = false;

  constructor(
    private readonly events: ResponseEvents,
    private readonly maxHeaderBytes: number,
  ) {}

  /** Expects the response to a new request (`HEAD`: a response without a body). */
  expect(method: string): void {
    this.state = State.Head;
    this.headRequest = method === "HEAD";
    this.pending = undefined;
    this.current = undefined;
    this.extraneous = false;
    this.touched = false;
  }

  /** Nothing read of the response yet. */
  get untouched(): boolean {
    return !this.touched;
  }

  /** The final head was read; the body is in progress or complete. */
  get headRead(): boolean {
    return this.current !== undefined;
  }

  /** The response is complete. */
  get done(): boolean {
    return this.state === State.Done;
  }

  /** The connection closed: ends a close-delimited body; throws (ECONNRESET) when the response was incomplete. */
  closed(): void {
    if (this.state === State.UntilClose) {
      this.state = State.Done;
      this.events.end();
      return;
    }
    if (this.state === State.Done || this.state === State.Idle) return;
    const beforeHead = this.current === undefined;
    this.state = State.Done;
    throw Object.assign(new Error(beforeHead ? "socket hang up" : "aborted"), { code: "ECONNRESET" });
  }

  /** Reads bytes of the response; throws HttpParseError on malformed input. */
  push(chunk: Buffer): void {
    this.touched = true;
    let off = 0;
    const n = chunk.length;
    while (off < n) {
      switch (this.state) {
        case State.Head:
          off = this.readHead(chunk, off);
          break;
        case State.Length: {
          const take = Math.min(this.remaining, n - off);
          const part = off === 0 && take === n ? chunk : chunk.subarray(off, off + take);
          off += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = State.Done;
          this.events.data(part);
          if (this.state === State.Done) this.events.end();
          break;
        }
        case State.ChunkSize: {
          const next = this.readLine(chunk, off);
          if (next < 0) return;
          off = next;
          this.chunkSize(this.takeLine());
          break;
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, n - off);
          const part = chunk.subarray(off, off + take);
          off += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = State.ChunkDataEnd;
          this.events.data(part);
          break;
        }
        case State.ChunkDataEnd: {
          const next = this.readLine(chunk, off);
          if (next < 0) return;
          off = next;
          if (this.takeLine() !== "") throw new HttpParseError("HPE_STRICT", "chunk data not followed by CRLF");
          this.state = State.ChunkSize;
          break;
        }
        case State.Trailers: {
          const next = this.readLine(chunk, off);
          if (next < 0) return;
          off = next;
          const line = this.takeLine();
          if (line === "") {
            this.state = State.Done;
            this.events.end();
            break;
          }
          this.headBytes += line.length + 2;
          if (this.headBytes > this.maxHeaderBytes) throw new HttpParseError("HPE_HEADER_OVERFLOW", "trailers over the header size limit");
          const colon = line.indexOf(":");
          if (colon <= 0 || !isToken(line.slice(0, colon)) || BAD_HEAD_CHARS.test(line))
            throw new HttpParseError("HPE_INVALID_HEADER_TOKEN", "malformed trailer field");
          break;
        }
        case State.UntilClose:
          this.events.data(off === 0 ? chunk : chunk.subarray(off));
          return;
        case State.Done:
        case State.Idle:
          this.extraneous = true;
          return;
      }
    }
  }

  private readHead(chunk: Buffer, off: number): number {
    const prev = this.pending;
    const buf = prev ? Buffer.concat([prev, chunk.subarray(off)]) : off === 0 ? chunk : chunk.subarray(off);
    const end = buf.indexOf(CRLFCRLF, prev ? Math.max(0, prev.length - 3) : 0);
    if (end < 0) {
      if (buf.length > this.maxHeaderBytes) throw new HttpParseError("HPE_HEADER_OVERFLOW", "response head over the header size limit");
      // Not HTTP at all (or a bad status line): refused now, not when a blank line that may never come arrives.
      checkStatusLineSoFar(buf);
      this.pending = Buffer.from(buf);
      return chunk.length;
    }
    if (end + 4 > this.maxHeaderBytes) throw new HttpParseError("HPE_HEADER_OVERFLOW", "response head over the header size limit");
    this.pending = undefined;
    const next = off + end + 4 - (prev ? prev.length : 0);
    const head = this.parseHead(buf.toString("latin1", 0, end));
    if (head === undefined) return next; // interim: the next head follows
    this.current = head;
    this.headBytes = 0;
    if (this.state === State.Length) {
      const length = this.remaining;
      if (length === 0 || chunk.length - next >= length) {
        this.state = State.Done;
        this.events.head(head, length === 0 ? EMPTY : chunk.subarray(next, next + length));
        return next + length;
      }
    }
    this.events.head(head, undefined);
    return next;
  }

  /** Parses a head; sets the body's state. Undefined for an interim (1xx) response. */
  private parseHead(text: string): ResponseHead | undefined {
    if (BAD_HEAD_CHARS.test(text)) throw new HttpParseError("HPE_INVALID_HEADER_TOKEN", "invalid character in the response head");
    let lineEnd = text.indexOf("\r\n");
    const m = STATUS_LINE.exec(lineEnd < 0 ? text : text.slice(0, lineEnd));
    if (!m) throw new HttpParseError("HPE_INVALID_CONSTANT", "malformed status line");
    const httpVersion = m[1] === "1" ? "1.1" : "1.0";
    const status = Number(m[2]);
    if (status < 100) throw new HttpParseError("HPE_INVALID_STATUS", `invalid status ${m[2]}`);
    if (status === 101) throw new HttpParseError("HPE_UNEXPECTED_UPGRADE", "unsolicited 101 Switching Protocols");
    const rawHeaders: string[] = [];
    let contentLength: number | undefined;
    let chunked: boolean | undefined;
    let connectionClose = false;
    let connectionKeepAlive = false;
    let keepAliveTimeoutS: number | undefined;
    while (lineEnd >= 0) {
      const start = lineEnd + 2;
      lineEnd = text.indexOf("\r\n", start);
      const line = lineEnd < 0 ? text.slice(start) : text.slice(start, lineEnd);
      const colon = line.indexOf(":");
      const name = colon > 0 ? line.slice(0, colon) : "";
      if (!isToken(name)) throw new HttpParseError("HPE_INVALID_HEADER_TOKEN", "malformed header field");
      const value = trimOws(line.slice(colon + 1));
      rawHeaders.push(name, value);
      const len = name.length;
      if (len !== 10 && len !== 14 && len !== 17) continue;
      const lower = name.toLowerCase();
      if (lower === "content-length") {
        for (const v of value.split(",")) {
          const digits = trimOws(v);
          if (!DIGITS.test(digits) || !Number.isSafeInteger(Number(digits))) throw new HttpParseError("HPE_INVALID_CONTENT_LENGTH", "malformed Content-Length");
          const length = Number(digits);
          if (contentLength !== undefined && contentLength !== length)
            throw new HttpParseError("HPE_UNEXPECTED_CONTENT_LENGTH", "conflicting Content-Length values");
          contentLength = length;
        }
      } else if (lower === "transfer-encoding") {
        const codings = value.split(",");
        chunked = trimOws(codings[codings.length - 1]).toLowerCase() === "chunked";
      } else if (lower === "connection") {
        const v = value.toLowerCase();
        if (connectionHas(v, "close")) connectionClose = true;
        else if (connectionHas(v, "keep-alive")) connectionKeepAlive = true;
      } else if (lower === "keep-alive") {
        const hint = /(?:^|[,;\s])timeout\s*=\s*([0-9]+)/i.exec(value);
        if (hint) keepAliveTimeoutS = Number(hint[1]);
      }
    }
    if (status < 200) {
      this.pending = undefined;
      return undefined;
    }
    let keepAlive = httpVersion === "1.1" ? !connectionClose : connectionKeepAlive && !connectionClose;
    if (this.headRequest || status === 204 || status === 304) {
      this.state = State.Length;
      this.remaining = 0;
    } else if (chunked !== undefined) {
      if (contentLength !== undefined) throw new HttpParseError("HPE_UNEXPECTED_CONTENT_LENGTH", "Content-Length together with Transfer-Encoding");
      if (chunked) this.state = State.ChunkSize;
      else {
        this.state = State.UntilClose;
        keepAlive = false;
      }
    } else if (contentLength !== undefined) {
      this.state = State.Length;
      this.remaining = contentLength;
    } else {
      this.state = State.UntilClose;
      keepAlive = false;
    }
    return { status, statusMessage: m[3] ?? "", httpVersion, rawHeaders, keepAlive, keepAliveTimeoutS };
  }

  private chunkSize(line: string): void {
    const semi = line.indexOf(";");
    const size = trimOws(semi < 0 ? line : line.slice(0, semi));
    if (!HEX.test(size) || size.length > 12) throw new HttpParseError("HPE_INVALID_CHUNK_SIZE", "malformed chunk size");
    this.remaining = Number.parseInt(size, 16);
    this.state = this.remaining === 0 ? State.Trailers : State.ChunkData;
  }

  /** Reads up to a line's CRLF: the offset after it, or -1 (the line continues in the next chunk). */
  private readLine(chunk: Buffer, off: number): number {
    const lf = chunk.indexOf(0x0a, off);
    if (lf < 0) {
      this.line += chunk.toString("latin1", off);
      if (this.line.length > MAX_LINE) throw new HttpParseError("HPE_INVALID_CHUNK_SIZE", "chunk line too long");
      return -1;
    }
    this.line += chunk.toString("latin1", off, lf);
    if (this.line.length > MAX_LINE) throw new HttpParseError("HPE_INVALID_CHUNK_SIZE", "chunk line too long");
    return lf + 1;
  }

  private takeLine(): string {
    const line = this.line;
    this.line = "";
    if (line.charCodeAt(line.length - 1) !== 0x0d) throw new HttpParseError("HPE_LF_EXPECTED", "line not ended by CRLF");
    return line.slice(0, -1);
  }
}
