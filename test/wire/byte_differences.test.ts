// Where two ranges of a buffer first differ (host/wire/byte_differences.ts,
// WebAssembly): the module is its text compiled, and it answers what a byte
// loop answers, for any buffer (one larger than its memory too), ranges and
// starts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import binaryen from "binaryen";
import fc from "fast-check";
import { differencesIn, FIRST_DIFFERENCE_WASM, FIRST_DIFFERENCE_WAT } from "../../host/wire/byte_differences.ts";

function byteLoop(bytes: Uint8Array, a: number, b: number, i: number, n: number): number {
  for (; i < n; i++) if (bytes[a + i] !== bytes[b + i]) return i;
  return n;
}

describe("first difference of two byte ranges (WebAssembly)", () => {
  it("is the module compiled from its text", () => {
    const module = binaryen.parseText(FIRST_DIFFERENCE_WAT);
    try {
      assert.ok(module.validate());
      assert.deepEqual(Buffer.from(module.emitBinary()), FIRST_DIFFERENCE_WASM);
    } finally {
      module.dispose();
    }
  });

  it("answers what a byte loop answers", () => {
    // Ranges of mostly equal bytes (a second copy with a few changed), so that differences fall anywhere.
    const ranges = fc.uint8Array({ maxLength: 80 }).chain((half) =>
      fc.record({
        half: fc.constant(half),
        changes: fc.array(fc.record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }), { maxLength: 3 }),
        lead: fc.nat({ max: 9 }),
        i: fc.nat({ max: 90 }),
        n: fc.nat({ max: 90 }),
      }),
    );
    fc.assert(
      fc.property(ranges, ({ half, changes, lead, i, n }) => {
        const bytes = new Uint8Array(lead + 2 * half.length);
        bytes.set(half, lead);
        bytes.set(half, lead + half.length);
        for (const c of changes) if (half.length > 0) bytes[lead + half.length + (c.at % half.length)] ^= c.xor;
        const to = Math.min(n, half.length);
        const from = Math.min(i, to);
        const firstDifference = differencesIn(bytes);
        assert.equal(firstDifference(lead, lead + half.length, from, to), byteLoop(bytes, lead, lead + half.length, from, to));
      }),
      { numRuns: 2000 },
    );
  });

  it("takes a buffer larger than its memory, and then a smaller one", () => {
    const big = Buffer.alloc(200_000, 7);
    big[150_003] = 1;
    assert.equal(differencesIn(big)(0, 100_000, 0, 100_000), 50_003);
    const small = Buffer.from([1, 2, 3, 1, 2, 4]);
    assert.equal(differencesIn(small)(0, 3, 0, 3), 2);
    assert.equal(differencesIn(small)(0, 3, 0, 2), 2);
  });
});
