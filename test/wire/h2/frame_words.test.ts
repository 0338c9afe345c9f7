// The frames' 31- and 32-bit fields are written and read byte by byte (big_endian.ts):
// the same octets and values as Buffer's big-endian methods, the reserved
// bit cleared where RFC 9113 says so, for ids and words over the whole range.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Frame, FrameReader, FrameType, dataFrames, headersFrames, readWord } from "../../../host/wire/h2/frames.ts";

const IDS = [0, 1, 3, 255, 256, 65_535, 65_537, 16_777_215, 16_777_217, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 5, 2 ** 32 - 1];

/** A frame header written with Buffer's methods: length, type, flags, stream id without the reserved bit. */
function header(length: number, type: number, flags: number, streamId: number): Buffer {
  const out = Buffer.alloc(9);
  out.writeUIntBE(length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE((streamId & 0x7fffffff) >>> 0, 5);
  return out;
}

describe("HTTP/2 frame words", () => {
  it("writes each frame's stream id as Buffer#writeUInt32BE would, reserved bit cleared", () => {
    for (const id of IDS) {
      const block = Buffer.from([0x82, 0x86]);
      assert.deepEqual(headersFrames(id, block, true, 16_384), Buffer.concat([header(2, FrameType.HEADERS, 0x5, id), block]));
      const data = Buffer.alloc(40_000, 7);
      const frames = dataFrames(id, data, true, 16_384);
      assert.deepEqual(frames[0], header(16_384, FrameType.DATA, 0, id));
      assert.deepEqual(frames[4], header(40_000 - 32_768, FrameType.DATA, 0x1, id));
    }
  });

  it("reads stream ids and RST_STREAM / WINDOW_UPDATE words as Buffer#readUInt32BE would", () => {
    for (const id of IDS) {
      const seen: Frame[] = [];
      const reader = new FrameReader((f) => seen.push({ ...f, payload: Buffer.from(f.payload) }));
      const word = Buffer.alloc(4);
      word.writeUInt32BE(id >>> 0);
      reader.push(Buffer.concat([header(4, FrameType.WINDOW_UPDATE, 0, 0).fill(0xff, 5, 9), word, header(4, FrameType.RST_STREAM, 0, id), word]));
      assert.equal(seen.length, 2);
      assert.equal(seen[0].streamId, 0x7fffffff);
      assert.equal(seen[1].streamId, (id & 0x7fffffff) >>> 0);
      assert.equal(readWord(seen[0], "WINDOW_UPDATE"), (word.readUInt32BE(0) & 0x7fffffff) >>> 0);
      assert.equal(readWord(seen[1], "RST_STREAM"), word.readUInt32BE(0));
    }
  });
});
