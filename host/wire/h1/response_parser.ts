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

import {
  type BodyFraming,
  CHUNKED,
  HttpParseError,
  type ResponseHead,
  UNTIL_CLOSE,
  isStatusLine,
  isToken,
  parseResponseHead,
  trimOws,
} from "./response_head.ts";

const CRLFCRLF = Buffer.from("\r\n\r\n", "latin1");
const EMPTY = Buffer.alloc(0);
/** Longest chunk-size line (size, extensions) or trailer line kept while it is incomplete. */
const MAX_LINE = 16 * 1024;
/** Most hex digits a chunk size may have (2^48: more is not a size anyone sends). */
const MAX_CHUNK_SIZE_DIGITS = 12;

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

/** A control character other than HTAB (a trailer line without its CRLF has no CR or LF). */
const BAD_LINE_CHARS = /[\x00-\x08\x0a-\x1f\x7f]/;
const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const SEMICOLON = 0x3b;
const HEX = /^[0-9a-fA-F]+$/;
const HTTP_PREFIX = "HTTP/1.";

/** The start of a head whose end has not arrived: what there is of its status line must be one. */
function checkStatusLineSoFar(buf: Buffer): void {
  const n = Math.min(buf.length, HTTP_PREFIX.length);
  for (let i = 0; i < n; i++) if (buf[i] !== HTTP_PREFIX.charCodeAt(i)) throw new HttpParseError("HPE_INVALID_CONSTANT", "not an HTTP/1 response");
  const lineEnd = buf.indexOf("\r\n");
  if (lineEnd >= 0 && !isStatusLine(buf.toString("latin1", 0, lineEnd))) throw new HttpParseError("HPE_INVALID_CONSTANT", "malformed status line");
}

/** `buf[at, at + 2)` is CRLF. */
function crlfAt(buf: Buffer, at: number): boolean {
  return at + 1 < buf.length && buf[at] === CR && buf[at + 1] === LF;
}

/** The value of hex digit `c`, or -1. */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
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
  private readonly framing: BodyFraming = { length: 0 };
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
          const whole = this.line === "" ? this.chunkSizeInPlace(chunk, off) : -1;
          if (whole >= 0) {
            off = whole;
            break;
          }
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
          if (this.line === "" && crlfAt(chunk, off)) {
            off += 2;
            this.state = State.ChunkSize;
            break;
          }
          const next = this.readLine(chunk, off);
          if (next < 0) return;
          off = next;
          if (this.takeLine() !== "") throw new HttpParseError("HPE_STRICT", "chunk data not followed by CRLF");
          this.state = State.ChunkSize;
          break;
        }
        case State.Trailers: {
          if (this.line === "" && crlfAt(chunk, off)) {
            off += 2;
            this.state = State.Done;
            this.events.end();
            break;
          }
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
          if (colon <= 0 || !isToken(line.slice(0, colon)) || BAD_LINE_CHARS.test(line))
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
    const head = parseResponseHead(buf.toString("latin1", 0, end), this.headRequest, this.framing);
    if (head === undefined) return next; // interim: the next head follows
    this.current = head;
    this.headBytes = 0;
    const length = this.framing.length;
    if (length === CHUNKED) this.state = State.ChunkSize;
    else if (length === UNTIL_CLOSE) this.state = State.UntilClose;
    else {
      this.state = State.Length;
      this.remaining = length;
    }
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

  /** A chunk-size line wholly in `chunk` from `off`, read from its bytes: the offset after it, or -1 to read it as text (it goes on in the next chunk, or is over MAX_LINE). */
  private chunkSizeInPlace(chunk: Buffer, off: number): number {
    const lf = chunk.indexOf(LF, off);
    if (lf < 0 || lf - off > MAX_LINE) return -1;
    if (lf === off || chunk[lf - 1] !== CR) throw new HttpParseError("HPE_LF_EXPECTED", "line not ended by CRLF");
    const lineEnd = lf - 1;
    let i = off;
    while (i < lineEnd && (chunk[i] === SP || chunk[i] === HTAB)) i++;
    let size = 0;
    let digits = 0;
    for (let d = i < lineEnd ? hexValue(chunk[i]) : -1; d >= 0; d = ++i < lineEnd ? hexValue(chunk[i]) : -1) {
      size = size * 16 + d;
      digits++;
    }
    while (i < lineEnd && (chunk[i] === SP || chunk[i] === HTAB)) i++;
    if (digits === 0 || digits > MAX_CHUNK_SIZE_DIGITS || (i < lineEnd && chunk[i] !== SEMICOLON))
      throw new HttpParseError("HPE_INVALID_CHUNK_SIZE", "malformed chunk size");
    this.remaining = size;
    this.state = size === 0 ? State.Trailers : State.ChunkData;
    return lf + 1;
  }

  private chunkSize(line: string): void {
    const semi = line.indexOf(";");
    const size = trimOws(semi < 0 ? line : line.slice(0, semi));
    if (!HEX.test(size) || size.length > MAX_CHUNK_SIZE_DIGITS) throw new HttpParseError("HPE_INVALID_CHUNK_SIZE", "malformed chunk size");
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
