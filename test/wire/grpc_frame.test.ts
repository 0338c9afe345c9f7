// gRPC message framing: a message copied with room for the prefix is framed
// in place, and the result is the same bytes as framing a plain copy; nothing
// else is ever written in front of a message.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { copyWithFrameRoom, framedMessage } from "../../host/wire/grpc_frame.ts";

/** The framing rule written out: flag 0, big-endian length, the message. */
function expected(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

describe("gRPC framing", () => {
  it("frames copies with room and plain messages alike, of every size up to a Report batch's", () => {
    let seed = 7;
    for (const size of [0, 1, 4, 5, 6, 255, 256, 4096, 65_535, 65_536, 52_486]) {
      const bytes = new Uint8Array(size).map(() => (seed = (seed * 1_103_515_245 + 12_345) >>> 0) & 0xff);
      const copy = copyWithFrameRoom(bytes);
      assert.deepEqual(copy, bytes);
      assert.deepEqual(framedMessage(copy), expected(bytes));
      // In place: the framed message shares the copy's memory (no second copy of a 50 KB Report).
      assert.equal(framedMessage(copy).buffer, copy.buffer);
      assert.deepEqual(framedMessage(bytes), expected(bytes));
      // Framed again (a retry frames the same message): the same bytes, the message unchanged.
      assert.deepEqual(framedMessage(copy), expected(bytes));
      assert.deepEqual(copy, bytes);
    }
  });

  it("a copy with room is a copy: changing the source afterwards changes nothing", () => {
    const source = Uint8Array.of(1, 2, 3);
    const copy = copyWithFrameRoom(source);
    source[0] = 9;
    assert.deepEqual(framedMessage(copy), expected(Uint8Array.of(1, 2, 3)));
  });

  it("never writes in front of a message it did not copy, even one 5 octets into its buffer", () => {
    const shared = Buffer.from([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 1, 2, 3]);
    const view = new Uint8Array(shared.buffer, shared.byteOffset + 5, 3);
    const ownBuffer = new Uint8Array(new ArrayBuffer(8), 5, 3);
    ownBuffer.set([1, 2, 3]);
    for (const message of [view, ownBuffer, Buffer.from(shared.subarray(5))]) {
      const before = Buffer.from(new Uint8Array(message.buffer, message.byteOffset - Math.min(5, message.byteOffset), Math.min(5, message.byteOffset)));
      assert.deepEqual(framedMessage(message), expected(Uint8Array.of(1, 2, 3)));
      assert.deepEqual(Buffer.from(new Uint8Array(message.buffer, message.byteOffset - before.length, before.length)), before);
    }
  });
});
