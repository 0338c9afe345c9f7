// An HTTP/2 client connection (RFC 9113) on a socket the caller made (TCP,
// Unix or TLS with ALPN h2): preface and SETTINGS, request streams with
// flow control both ways, PING, GOAWAY, RST_STREAM and connection errors.
// Just what a unary gRPC client needs: a request is a header block and a
// body sent whole; the response comes back as header blocks and data.
//
// Send side: the peer's SETTINGS (initial window, max frame size, max
// concurrent streams) are obeyed; data beyond the windows waits for
// WINDOW_UPDATE. Receive side: this side keeps the protocol's defaults
// (65 535-octet windows, 16 384-octet frames, 4 096-octet HPACK table),
// enforces them, and gives the window back as soon as data is consumed.

import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { ClientStream, headersObject, type StreamHandlers } from "./client_stream.ts";
import {
  CLIENT_PREFACE,
  ConnectionError,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  type Frame,
  FrameReader,
  FrameType,
  MAX_WINDOW,
  SETTINGS_ACK,
  Setting,
  dataFrames,
  goawayFrame,
  headersFrames,
  pingFrame,
  readSettings,
  readWord,
  rstStreamFrame,
  settingsFrame,
  unpadded,
  windowUpdateFrame,
} from "./frames.ts";
import { applySettings, DEFAULT_PEER_LIMITS, type PeerLimits, ReceiveWindow } from "./flow_control.ts";
import { type HeaderField, HpackDecoder, HpackError, encodeHeaderBlock } from "./hpack.ts";

export interface ClientSessionEvents {
  /** The socket connected (TLS: the handshake completed, ALPN h2). */
  onConnect?(): void;
  /** The peer sent GOAWAY; streams above `lastStreamId` have already ended as refused, the others may finish. */
  onGoaway?(code: number, lastStreamId: number): void;
  /** The session is over; `error` says why when it failed. Called once, after every stream ended. */
  onClose?(error: Error | undefined): void;
}

/** Largest header block accepted (all its frames together). */
const MAX_HEADER_BLOCK = 256 * 1024;
const LAST_STREAM_ID = MAX_WINDOW;
/** Up to this many octets of frames are copied into one buffer for one write; more are written as a vector. */
const COALESCED_WRITE_BYTES = 16 * 1024;

export class Http2ClientSession {
  /** The socket connected (and the TLS handshake completed). */
  connected = false;
  /** Over: no stream will make progress. */
  destroyed = false;
  /** Takes no new streams (GOAWAY received, close() called, or stream ids used up). */
  closing = false;
  private error: Error | undefined;

  private readonly streams = new Map<number, ClientStream>();
  /** Streams waiting for the peer's concurrency limit, in order. */
  private readonly waiting: ClientStream[] = [];
  /** Streams with body bytes waiting for window. */
  private readonly blocked = new Set<ClientStream>();
  private nextStreamId = 1;
  private peerSettingsSeen = false;
  private peer: PeerLimits = DEFAULT_PEER_LIMITS;
  private sendWindow = DEFAULT_WINDOW;
  private readonly recvWindow = new ReceiveWindow();
  private readonly decoder = new HpackDecoder();
  private readonly reader = new FrameReader((f) => this.onFrame(f));
  /** A header block in progress (HEADERS without END_HEADERS, then CONTINUATION). */
  private pendingBlock: { streamId: number; flags: number; fragments: Buffer[]; length: number } | undefined;
  private readonly pings: Array<{ opaque: Buffer; onAck: () => void }> = [];
  private pingCount = 0;
  private outbox: Buffer[] = [];
  private reading = false;

  constructor(
    private readonly socket: Socket | TLSSocket,
    secure: boolean,
    private readonly events: ClientSessionEvents = {},
  ) {
    socket.once(secure ? "secureConnect" : "connect", () => {
      const alpn = (socket as TLSSocket).alpnProtocol;
      if (secure && typeof alpn === "string" && alpn !== "h2") return this.destroy(new Error(`the peer chose ALPN protocol ${alpn}, not h2`));
      this.connected = true;
      this.events.onConnect?.();
    });
    socket.on("data", (chunk: Buffer) => this.onBytes(chunk));
    socket.on("error", (e) => this.destroy(e));
    socket.on("close", () => this.destroy(this.error));
    this.send(CLIENT_PREFACE);
    this.send(settingsFrame([[Setting.ENABLE_PUSH, 0]]));
    this.flushFrames();
  }

  /** Opens a stream: `fields` (pseudo-header fields first) and the whole `body`, END_STREAM after it. Throws when the session takes no new streams. */
  request(fields: readonly HeaderField[], body: Buffer, handlers: StreamHandlers): ClientStream {
    return this.requestEncoded(encodeHeaderBlock(fields), body, handlers);
  }

  /**
   * `request` with the header block already encoded (`encodeHeaderBlock`, which
   * keeps no HPACK state, so a block made once may be sent on any stream).
   */
  requestEncoded(headerBlock: Buffer, body: Buffer, handlers: StreamHandlers): ClientStream {
    if (this.destroyed || this.closing) throw new Error("the HTTP/2 session is closing");
    const stream = new ClientStream(headerBlock, body, handlers, (s, code) => this.resetStream(s, code));
    if (this.streams.size < this.peer.maxConcurrentStreams) this.open(stream);
    else this.waiting.push(stream);
    this.flushFrames();
    return stream;
  }

  /** Sends a PING; `onAck` when the peer answers it. */
  ping(onAck: () => void): void {
    if (this.destroyed) return;
    const opaque = Buffer.alloc(8);
    opaque.writeUInt32BE(++this.pingCount >>> 0, 4);
    this.pings.push({ opaque, onAck });
    this.send(pingFrame(opaque, false));
    this.flushFrames();
  }

  /** Takes no new streams; the open ones may finish, then the connection closes. */
  close(): void {
    if (this.destroyed) return;
    this.closing = true;
    this.closeIfIdle();
  }

  /** Ends the connection now: every stream not yet ended ends as dropped. */
  destroy(error?: Error): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.closing = true;
    this.error ??= error;
    const streams = [...this.streams.values(), ...this.waiting];
    this.streams.clear();
    this.waiting.length = 0;
    this.blocked.clear();
    this.pings.length = 0;
    this.flushFrames();
    this.socket.destroy();
    for (const s of streams) s.end({ kind: "dropped", error: this.error, connected: this.connected });
    this.events.onClose?.(this.error);
  }

  /** Stops the socket from keeping the process alive. */
  unref(): void {
    this.socket.unref();
  }

  private open(stream: ClientStream): void {
    if (this.nextStreamId > LAST_STREAM_ID) {
      this.closing = true;
      stream.end({ kind: "reset", code: ErrorCode.REFUSED_STREAM });
      return;
    }
    stream.id = this.nextStreamId;
    this.nextStreamId += 2;
    if (this.nextStreamId > LAST_STREAM_ID) this.closing = true;
    stream.sendWindow = this.peer.initialWindow;
    this.streams.set(stream.id, stream);
    this.send(headersFrames(stream.id, stream.headerBlock, stream.body.length === 0, this.peer.maxFrameSize));
    if (stream.body.length === 0) stream.localEnded = true;
    else this.sendBody(stream);
  }

  /** Sends as much of the stream's body as the windows allow. */
  private sendBody(stream: ClientStream): void {
    const left = stream.body.length - stream.sendOffset;
    const n = Math.min(left, stream.sendWindow, this.sendWindow);
    if (n <= 0 && left > 0) {
      this.blocked.add(stream);
      return;
    }
    const last = n === left;
    const piece = stream.sendOffset === 0 && last ? stream.body : stream.body.subarray(stream.sendOffset, stream.sendOffset + n);
    for (const part of dataFrames(stream.id, piece, last, this.peer.maxFrameSize)) this.send(part);
    stream.sendOffset += n;
    stream.sendWindow -= n;
    this.sendWindow -= n;
    if (last) {
      stream.localEnded = true;
      this.blocked.delete(stream);
    } else this.blocked.add(stream);
  }

  private resumeBlocked(): void {
    for (const s of [...this.blocked]) {
      if (this.sendWindow <= 0) break;
      if (s.sendWindow > 0) this.sendBody(s);
    }
  }

  private resetStream(stream: ClientStream, code: number): void {
    const queued = this.waiting.indexOf(stream);
    if (queued >= 0) {
      this.waiting.splice(queued, 1);
      return;
    }
    if (this.streams.get(stream.id) !== stream) return;
    this.forget(stream);
    if (!this.destroyed) this.send(rstStreamFrame(stream.id, code));
    this.flushFrames();
  }

  /** Removes a stream that is over; opens waiting ones; closes the session if it is closing and idle. */
  private forget(stream: ClientStream): void {
    this.streams.delete(stream.id);
    this.blocked.delete(stream);
    while (this.waiting.length > 0 && this.streams.size < this.peer.maxConcurrentStreams && !this.destroyed) this.open(this.waiting.shift()!);
    this.closeIfIdle();
  }

  private closeIfIdle(): void {
    if (!this.closing || this.destroyed || this.streams.size > 0 || this.waiting.length > 0) return;
    this.send(goawayFrame(0, ErrorCode.NO_ERROR));
    this.destroy();
  }

  private send(bytes: Buffer): void {
    this.outbox.push(bytes);
  }

  private flushFrames(): void {
    if (this.reading || this.outbox.length === 0) return;
    const out = this.outbox;
    this.outbox = [];
    if (this.socket.destroyed) return;
    if (out.length === 1) return void this.socket.write(out[0]);
    let length = 0;
    for (const b of out) length += b.length;
    if (length <= COALESCED_WRITE_BYTES) return void this.socket.write(Buffer.concat(out, length));
    // Large bodies go out as they are (one writev), not copied once more.
    this.socket.cork();
    for (const b of out) this.socket.write(b);
    this.socket.uncork();
  }

  private onBytes(chunk: Buffer): void {
    if (this.destroyed) return;
    this.reading = true;
    try {
      this.reader.push(chunk);
    } catch (e) {
      this.reading = false;
      return this.connectionError(e);
    }
    this.reading = false;
    this.flushFrames();
  }

  private connectionError(e: unknown): void {
    const code = e instanceof ConnectionError ? e.code : e instanceof HpackError ? ErrorCode.COMPRESSION_ERROR : ErrorCode.INTERNAL_ERROR;
    const error = new Error(`HTTP/2 protocol error (code ${code}): ${e instanceof Error ? e.message : String(e)}`);
    this.outbox = [goawayFrame(0, code)];
    this.flushFrames();
    this.destroy(error);
  }

  private onFrame(f: Frame): void {
    if (this.destroyed) return;
    if (!this.peerSettingsSeen && (f.type !== FrameType.SETTINGS || f.flags & Flag.ACK))
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "the server's preface is not a SETTINGS frame");
    if (this.pendingBlock && (f.type !== FrameType.CONTINUATION || f.streamId !== this.pendingBlock.streamId))
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "a header block was interrupted by another frame");
    switch (f.type) {
      case FrameType.DATA:
        return this.onData(f);
      case FrameType.HEADERS:
        this.requireStream(f, "HEADERS");
        return this.onHeaderFragment(f.streamId, f.flags, unpadded(f));
      case FrameType.CONTINUATION:
        if (!this.pendingBlock) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "CONTINUATION without a header block");
        return this.onHeaderFragment(f.streamId, f.flags, f.payload);
      case FrameType.RST_STREAM: {
        this.requireStream(f, "RST_STREAM");
        const code = readWord(f, "RST_STREAM");
        const stream = this.streams.get(f.streamId);
        if (!stream) return;
        this.forget(stream);
        return stream.end({ kind: "reset", code });
      }
      case FrameType.SETTINGS:
        return this.onSettings(f);
      case FrameType.PING:
        return this.onPing(f);
      case FrameType.GOAWAY:
        return this.onGoaway(f);
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(f);
      case FrameType.PUSH_PROMISE:
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "PUSH_PROMISE although push is disabled");
      default:
        // PRIORITY and unknown frame types are ignored (§5.5).
        return;
    }
  }

  /** A frame that must be on a stream this side opened. */
  private requireStream(f: Frame, name: string): void {
    if (f.streamId === 0 || f.streamId % 2 === 0 || f.streamId >= this.nextStreamId)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `${name} on stream ${f.streamId}, which this client did not open`);
  }

  private onData(f: Frame): void {
    this.requireStream(f, "DATA");
    const length = f.payload.length;
    if (!this.recvWindow.receive(length)) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "DATA beyond the connection's receive window");
    const connectionIncrement = this.recvWindow.consume(length);
    if (connectionIncrement > 0) this.send(windowUpdateFrame(0, connectionIncrement));
    const data = unpadded(f);
    const stream = this.streams.get(f.streamId);
    if (!stream) return;
    if (!stream.recvWindow.receive(length)) return this.streamError(stream, ErrorCode.FLOW_CONTROL_ERROR);
    if (stream.headerBlocks === 0) return this.streamError(stream, ErrorCode.PROTOCOL_ERROR);
    const ends = (f.flags & Flag.END_STREAM) !== 0;
    const increment = ends ? 0 : stream.recvWindow.consume(length);
    if (increment > 0) this.send(windowUpdateFrame(stream.id, increment));
    if (data.length > 0) stream.handlers.onData(Buffer.from(data));
    if (ends && !stream.finished) this.remoteEnded(stream);
  }

  private onHeaderFragment(streamId: number, flags: number, fragment: Buffer): void {
    let block: Buffer;
    let blockFlags: number;
    const started = this.pendingBlock;
    if (started === undefined && flags & Flag.END_HEADERS) {
      // A whole block in one frame (every answer of a hub): decoded from the socket's chunk, which the decoder does not keep.
      if (fragment.length > MAX_HEADER_BLOCK) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, `header block over ${MAX_HEADER_BLOCK} octets`);
      block = fragment;
      blockFlags = flags;
    } else {
      const pending = started ?? { streamId, flags, fragments: [], length: 0 };
      pending.fragments.push(Buffer.from(fragment));
      pending.length += fragment.length;
      if (pending.length > MAX_HEADER_BLOCK) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, `header block over ${MAX_HEADER_BLOCK} octets`);
      if (!(flags & Flag.END_HEADERS)) {
        this.pendingBlock = pending;
        return;
      }
      this.pendingBlock = undefined;
      block = pending.fragments.length === 1 ? pending.fragments[0] : Buffer.concat(pending.fragments, pending.length);
      blockFlags = pending.flags;
    }
    // Decoded even for a stream already gone: the HPACK table must follow every block.
    const fields = this.decoder.decode(block);
    const stream = this.streams.get(streamId);
    if (!stream) return;
    const endStream = (blockFlags & Flag.END_STREAM) !== 0;
    const headers = headersObject(fields);
    if (stream.headerBlocks === 0) {
      const status = Number(headers[":status"]);
      if (status >= 100 && status < 200 && !endStream) return;
    } else if (!endStream) return this.streamError(stream, ErrorCode.PROTOCOL_ERROR);
    stream.headerBlocks++;
    stream.handlers.onHeaders(headers, endStream);
    if (endStream && !stream.finished) this.remoteEnded(stream);
  }

  /** The peer ended its side: the stream is done (what this side had not sent yet is no longer wanted). */
  private remoteEnded(stream: ClientStream): void {
    this.forget(stream);
    if (!stream.localEnded) this.send(rstStreamFrame(stream.id, ErrorCode.NO_ERROR));
    stream.end({ kind: "ended" });
  }

  private streamError(stream: ClientStream, code: number): void {
    this.forget(stream);
    this.send(rstStreamFrame(stream.id, code));
    stream.end({ kind: "reset", code });
  }

  private onSettings(f: Frame): void {
    if (f.streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "SETTINGS on a stream");
    if (f.flags & Flag.ACK) {
      if (f.payload.length !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS ACK with a payload");
      return;
    }
    this.peerSettingsSeen = true;
    const limits = applySettings(this.peer, readSettings(f.payload));
    const delta = limits.initialWindow - this.peer.initialWindow;
    this.peer = limits;
    for (const s of this.streams.values()) {
      s.sendWindow += delta;
      if (s.sendWindow > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "a stream's window grew past 2^31-1");
    }
    this.send(SETTINGS_ACK);
    while (this.waiting.length > 0 && this.streams.size < this.peer.maxConcurrentStreams) this.open(this.waiting.shift()!);
    this.resumeBlocked();
  }

  private onPing(f: Frame): void {
    if (f.streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "PING on a stream");
    if (f.payload.length !== 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `PING of ${f.payload.length} octets`);
    if (!(f.flags & Flag.ACK)) return this.send(pingFrame(f.payload, true));
    const i = this.pings.findIndex((p) => p.opaque.equals(f.payload));
    if (i < 0) return;
    const [ping] = this.pings.splice(i, 1);
    ping.onAck();
  }

  private onGoaway(f: Frame): void {
    if (f.streamId !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "GOAWAY on a stream");
    if (f.payload.length < 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `GOAWAY of ${f.payload.length} octets`);
    const lastStreamId = f.payload.readUInt32BE(0) & MAX_WINDOW;
    const code = f.payload.readUInt32BE(4);
    this.closing = true;
    // Streams the peer did not process, and those not yet sent, may be retried elsewhere.
    const refused = [...this.waiting, ...[...this.streams.values()].filter((s) => s.id > lastStreamId)];
    this.waiting.length = 0;
    for (const s of refused) {
      this.streams.delete(s.id);
      this.blocked.delete(s);
    }
    for (const s of refused) s.end({ kind: "reset", code: ErrorCode.REFUSED_STREAM });
    this.events.onGoaway?.(code, lastStreamId);
    this.closeIfIdle();
  }

  private onWindowUpdate(f: Frame): void {
    const increment = readWord(f, "WINDOW_UPDATE");
    if (f.streamId === 0) {
      if (increment === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0 on the connection");
      this.sendWindow += increment;
      if (this.sendWindow > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, "the connection's window grew past 2^31-1");
      return this.resumeBlocked();
    }
    const stream = this.streams.get(f.streamId);
    if (!stream) return;
    if (increment === 0) return this.streamError(stream, ErrorCode.PROTOCOL_ERROR);
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) return this.streamError(stream, ErrorCode.FLOW_CONTROL_ERROR);
    if (this.blocked.has(stream)) this.sendBody(stream);
  }
}
