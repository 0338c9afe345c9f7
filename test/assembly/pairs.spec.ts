// The proxy-wasm serialized map (u32 count, count × (key len, value len), then
// each key and value NUL-terminated; little-endian), as proxies hand over
// headers (proxy-wasm ABI spec, "proxy_get_header_map_pairs").
import { decodePairs, decodePairsBuffer, encodePairs } from "../../assembly/pairs";

function raw(words: u32[], tail: string): Uint8Array {
  const t = String.UTF8.encode(tail);
  const out = new Uint8Array(words.length * 4 + t.byteLength);
  for (let i = 0; i < words.length; i++) store<u32>(out.dataStart + <usize>i * 4, words[i]);
  memory.copy(out.dataStart + <usize>words.length * 4, changetype<usize>(t), <usize>t.byteLength);
  return out;
}

describe("proxy-wasm map pairs", () => {
  it("decodes a hand-built map", () => {
    const m = decodePairsBuffer(raw([2, 5, 4, 2, 0], ":path\0/a/b\0ab\0\0"))!;
    expect(m.keys).toStrictEqual([":path", "ab"]);
    expect(m.values).toStrictEqual(["/a/b", ""]);
  });

  it("round-trips keys and values, including UTF-8 and empty strings", () => {
    const keys = [":authority", "x-é", "", "cookie"];
    const values = ["svc.ns", "valüe", "empty-key", ""];
    const m = decodePairsBuffer(encodePairs(keys, values))!;
    expect(m.keys).toStrictEqual(keys);
    expect(m.values).toStrictEqual(values);
  });

  it("keeps the last value of a repeated name", () => {
    const m = decodePairsBuffer(encodePairs(["cookie", "a", "cookie"], ["1", "2", "3"]))!;
    expect(m.keys).toStrictEqual(["cookie", "a"]);
    expect(m.get("cookie")).toBe("3");
  });

  it("decodes an empty buffer and a zero count as an empty map", () => {
    expect(decodePairsBuffer(new Uint8Array(0))!.size).toBe(0);
    expect(decodePairsBuffer(encodePairs([], []))!.size).toBe(0);
  });

  it("refuses buffers that are not well-formed", () => {
    const rows: Uint8Array[] = [
      new Uint8Array(3), // shorter than the count
      raw([1], ""), // count without sizes
      raw([1, 5, 0], "ab"), // key runs past the end
      raw([1, 0, 0], "\0"), // missing the value's NUL
      raw([1000], ""), // count larger than the buffer
      raw([2, 1, 1], "a\0b\0"), // second pair's sizes missing
    ];
    for (let i = 0; i < rows.length; i++) expect(decodePairsBuffer(rows[i])).toBeNull(i.toString());
  });

  // A length near 2^32 wraps the 32-bit bounds check and the decoder reads
  // (and traps) far outside the buffer instead of refusing it.
  it("refuses a key length that would wrap the address space", () => {
    const b = raw([1, 0xffffffff, 0], "\0\0");
    expect(decodePairs(b.dataStart, <usize>b.length)).toBeNull();
  });
});
