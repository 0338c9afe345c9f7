// gRPC's length-prefixed message framing (5 octets: compressed flag, then
// the length big-endian), made without copying a message twice: the host
// copies each hub call's message out of the module's memory anyway (the
// module reuses that memory), and a Report batch is about 50 KB; when that
// copy is made with room for the prefix in front, framing it only writes
// the prefix.

import { writeU32BE } from "./big_endian.ts";

/** The prefix's length. */
export const GRPC_PREFIX_BYTES = 5;

/** Buffers made by copyWithFrameRoom: only these may be written in front of the message they hold. */
const WITH_ROOM = new WeakSet<ArrayBufferLike>();

/**
 * A copy of `bytes` (a Uint8Array of exactly its length) in a buffer of its
 * own with GRPC_PREFIX_BYTES free in front, which `framedMessage` fills.
 */
export function copyWithFrameRoom(bytes: Uint8Array): Uint8Array {
  // Not zero-filled (a new ArrayBuffer would be: a second pass over ~50 KB), and not from Node's shared pool.
  const buffer = Buffer.allocUnsafeSlow(GRPC_PREFIX_BYTES + bytes.length).buffer;
  const message = new Uint8Array(buffer, GRPC_PREFIX_BYTES, bytes.length);
  message.set(bytes);
  WITH_ROOM.add(buffer);
  return message;
}

/** `message` with the prefix (uncompressed): in place when copyWithFrameRoom made it, else copied into a new buffer. */
export function framedMessage(message: Uint8Array): Buffer {
  const length = message.byteLength;
  let framed: Buffer;
  if (message.byteOffset === GRPC_PREFIX_BYTES && message.buffer.byteLength === GRPC_PREFIX_BYTES + length && WITH_ROOM.has(message.buffer))
    framed = Buffer.from(message.buffer, 0, GRPC_PREFIX_BYTES + length);
  else {
    framed = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + length);
    framed.set(message, GRPC_PREFIX_BYTES);
  }
  framed[0] = 0;
  writeU32BE(framed, 1, length);
  return framed;
}
