// HTTP/2 frames (RFC 9113 §4, §6): the 9-octet header, the frames a client
// sends, reading frames off a byte stream, and the payload rules of the
// frames it receives (padding, priority fields, lengths).

import { readU32BE, writeU32BE } from "../big_endian.ts";

export const FRAME_HEADER_BYTES = 9;
/** SETTINGS_MAX_FRAME_SIZE's initial value and lower bound. */
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const MAX_ALLOWED_FRAME_SIZE = 16_777_215;
export const DEFAULT_WINDOW = 65_535;
export const MAX_WINDOW = 2 ** 31 - 1;
/** The client connection preface (§3.4). */
export const CLIENT_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** Error codes (§7). */
export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** A breach of the protocol that ends the connection with GOAWAY `code`. */
export class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** One frame as read: its payload is a view into the bytes received (valid until the next read). */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

function writeHeader(out: Buffer, at: number, length: number, type: number, flags: number, streamId: number): void {
  out[at] = length >>> 16;
  out[at + 1] = (length >>> 8) & 0xff;
  out[at + 2] = length & 0xff;
  out[at + 3] = type;
  out[at + 4] = flags;
  writeU32BE(out, at + 5, streamId & MAX_WINDOW);
}

/** A frame with `payload` (copied). */
export function frame(type: number, flags: number, streamId: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  writeHeader(out, 0, payload.length, type, flags, streamId);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

export function settingsFrame(settings: ReadonlyArray<readonly [id: number, value: number]>): Buffer {
  const payload = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FrameType.SETTINGS, 0, 0, payload);
}

export const SETTINGS_ACK = frame(FrameType.SETTINGS, Flag.ACK, 0);

export function pingFrame(opaque: Uint8Array, ack: boolean): Buffer {
  return frame(FrameType.PING, ack ? Flag.ACK : 0, 0, opaque);
}

export function goawayFrame(lastStreamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(code, 4);
  return frame(FrameType.GOAWAY, 0, 0, payload);
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(code, 0);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
}

/** A header block as HEADERS plus as many CONTINUATION frames as `maxFrameSize` needs, in one buffer. */
export function headersFrames(streamId: number, block: Uint8Array, endStream: boolean, maxFrameSize: number): Buffer {
  const count = Math.max(1, Math.ceil(block.length / maxFrameSize));
  const out = Buffer.allocUnsafe(count * FRAME_HEADER_BYTES + block.length);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const start = i * maxFrameSize;
    const end = Math.min(block.length, start + maxFrameSize);
    const flags = (i === count - 1 ? Flag.END_HEADERS : 0) | (i === 0 && endStream ? Flag.END_STREAM : 0);
    writeHeader(out, at, end - start, i === 0 ? FrameType.HEADERS : FrameType.CONTINUATION, flags, streamId);
    out.set(block.subarray(start, end), at + FRAME_HEADER_BYTES);
    at += FRAME_HEADER_BYTES + end - start;
  }
  return out;
}

/**
 * DATA frames carrying `data` in pieces of at most `maxFrameSize`, END_STREAM
 * on the last when `endStream`: each frame's 9-octet header, then a view of
 * its piece of `data` (not copied: the caller keeps `data` unchanged until
 * written).
 */
export function dataFrames(streamId: number, data: Buffer, endStream: boolean, maxFrameSize: number): Buffer[] {
  const count = Math.max(1, Math.ceil(data.length / maxFrameSize));
  const headers = Buffer.allocUnsafe(count * FRAME_HEADER_BYTES);
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const start = i * maxFrameSize;
    const end = Math.min(data.length, start + maxFrameSize);
    writeHeader(headers, i * FRAME_HEADER_BYTES, end - start, FrameType.DATA, i === count - 1 && endStream ? Flag.END_STREAM : 0, streamId);
    out.push(headers.subarray(i * FRAME_HEADER_BYTES, (i + 1) * FRAME_HEADER_BYTES));
    if (end > start) out.push(data.subarray(start, end));
  }
  return out;
}

/**
 * Cuts a byte stream into frames. `push` hands every complete frame to
 * `onFrame` (its payload a view, valid during the call) and keeps the rest
 * for the next chunk. A frame longer than `maxFrameSize` (the size this side
 * advertised) is a connection error FRAME_SIZE_ERROR.
 */
export class FrameReader {
  private rest: Buffer | undefined;

  constructor(
    private readonly onFrame: (frame: Frame) => void,
    private readonly maxFrameSize = DEFAULT_MAX_FRAME_SIZE,
  ) {}

  push(chunk: Buffer): void {
    let bytes = chunk;
    if (this.rest) {
      bytes = Buffer.concat([this.rest, chunk]);
      this.rest = undefined;
    }
    let at = 0;
    while (bytes.length - at >= FRAME_HEADER_BYTES) {
      const length = (bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2];
      if (length > this.maxFrameSize)
        throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `frame of ${length} octets, above the ${this.maxFrameSize} allowed`);
      const end = at + FRAME_HEADER_BYTES + length;
      if (end > bytes.length) break;
      this.onFrame({
        type: bytes[at + 3],
        flags: bytes[at + 4],
        streamId: readU32BE(bytes, at + 5) & MAX_WINDOW,
        payload: bytes.subarray(at + FRAME_HEADER_BYTES, end),
      });
      at = end;
    }
    // Copied: the socket may reuse its chunk's memory.
    if (at < bytes.length) this.rest = Buffer.from(bytes.subarray(at));
  }
}

/** The content of a DATA or HEADERS payload without its padding (and HEADERS' priority fields). */
export function unpadded(frame: Frame): Buffer {
  let { payload } = frame;
  let start = 0;
  let padding = 0;
  if (frame.flags & Flag.PADDED) {
    if (payload.length < 1) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, "padded frame without a pad length");
    padding = payload[0];
    start = 1;
  }
  if (frame.type === FrameType.HEADERS && frame.flags & Flag.PRIORITY) start += 5;
  if (start + padding > payload.length) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, "padding longer than the frame");
  payload = payload.subarray(start, payload.length - padding);
  return payload;
}

/** A SETTINGS payload's entries. */
export function readSettings(payload: Buffer): Array<[id: number, value: number]> {
  if (payload.length % 6 !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `SETTINGS of ${payload.length} octets, not a multiple of 6`);
  const entries: Array<[number, number]> = [];
  for (let at = 0; at < payload.length; at += 6) entries.push([payload.readUInt16BE(at), payload.readUInt32BE(at + 2)]);
  return entries;
}

/** The 4-octet value of RST_STREAM (error code) and WINDOW_UPDATE (increment, reserved bit cleared). */
export function readWord(frame: Frame, name: string): number {
  if (frame.payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `${name} of ${frame.payload.length} octets, not 4`);
  const word = readU32BE(frame.payload, 0);
  return frame.type === FrameType.WINDOW_UPDATE ? word & MAX_WINDOW : word;
}
