import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodePairs, pairsCapacity, writePairs } from "../../host/wasm/pairs.ts";
import { PairsCache } from "../../host/wasm/pairs_cache.ts";

// The header maps the module reads are written through the last map of their
// kind: every serialization must be byte for byte what writePairs makes.

type Pairs = Array<[string, string]>;

/** A string with the same text as `s` but not the same object (as a new request's headers are). */
const fresh = (s: string) => Buffer.from(s, "utf8").toString("utf8");
const copy = (pairs: Pairs): Pairs => pairs.map(([k, v]) => [fresh(k), fresh(v)]);

function expected(pairs: Pairs): Buffer {
  const out = Buffer.alloc(pairsCapacity(pairs));
  return out.subarray(0, writePairs(out, 0, pairs));
}

/** Writes through `cache` into memory that held other bytes, at an offset. */
function viaCache(cache: PairsCache, pairs: Pairs, at = 13): Buffer {
  const out = Buffer.alloc(at + pairsCapacity(pairs) + 7, 0xa5);
  const length = cache.write(out, at, pairs);
  return out.subarray(at, at + length);
}

const base: Pairs = [
  [":method", "GET"],
  [":path", "/pets/42?key=bench"],
  [":authority", "petstore.demo.svc.cluster.local"],
  ["user-agent", "autocannon"],
  ["x-request-id", "7f1c"],
];

describe("PairsCache", () => {
  it("writes what writePairs writes over a run of maps that repeat, change, grow and shrink", () => {
    const cache = new PairsCache();
    const maps: Pairs[] = [
      base,
      copy(base),
      copy(base),
      base.map(([k, v]) => [k, k === ":path" ? "/pets/43" : v]),
      base.map(([k, v]) => [k, k === "x-request-id" ? "8a2d9" : v]),
      [...copy(base), ["accept", "*/*"]],
      [...copy(base), ["accept", "*/*"]],
      base.slice(0, 2),
      [],
      base.slice(1),
      [["x-a", "é ünïcode ✓ 😀"], ...copy(base)],
      [["x-a", "é ünïcode ✓ 😀"], ...copy(base)],
      [["x-a", "\ud800 lone"], ["", ""], ...copy(base)],
      copy(base).reverse(),
      copy(base),
    ];
    for (const [i, pairs] of maps.entries()) {
      const got = viaCache(cache, pairs);
      assert.deepEqual(got, expected(pairs), `map ${i}`);
      assert.deepEqual(
        decodePairs(got),
        pairs.map(([k, v]) => [k, v.replace("\ud800", "\ufffd")]),
        `map ${i} decoded`,
      );
    }
  });

  it("does not keep a serialization larger than 16 KiB, and still writes it exactly", () => {
    const cache = new PairsCache();
    const big: Pairs = [...base, ["cookie", "c".repeat(20_000)]];
    assert.deepEqual(viaCache(cache, big), expected(big));
    assert.deepEqual(viaCache(cache, copy(big)), expected(big));
    assert.deepEqual(viaCache(cache, copy(base)), expected(base));
    assert.deepEqual(viaCache(cache, copy(base)), expected(base));
  });
});
