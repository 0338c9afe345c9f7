// The proxy-wasm serialized map (u32 count, count × (key len, value len), then
// each key and value NUL-terminated; little-endian), as proxies hand over
// headers (proxy-wasm ABI spec, "proxy_get_header_map_pairs").
import { decodePairs, decodePairsBuffer, encodePairs } from "../../assembly/pairs";
import { HeaderMap } from "../../assembly/attributes/header_map";

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

// What a map holds: each entry, and each name found where it is.
function listed(m: HeaderMap): string {
  let s = m.size.toString() + ":";
  for (let i = 0; i < m.size; i++) {
    s += m.keyAt(i) + "=" + m.valueAt(i) + ";";
    expect(m.indexOf(m.keyAt(i))).toBe(i, "found where it is");
  }
  return s;
}

function freshly(block: Uint8Array): string {
  const m = new HeaderMap();
  expect(m.fill(block.dataStart, <usize>block.length)).toBe(true);
  return listed(m);
}

function copyOf(block: Uint8Array): Uint8Array {
  const c = new Uint8Array(block.length);
  memory.copy(c.dataStart, block.dataStart, <usize>block.length);
  return c;
}

// A repeated name (the last value wins) and an unknown one too.
const A = encodePairs([":method", ":path", "x-custom", "user-agent", ":path"], ["GET", "/pets/1", "c", "ua", "/pets/2"]);
const B = encodePairs([":method", ":path", "x-custom", "user-agent", ":path"], ["GET", "/pets/1", "c", "ua", "/pets/3"]);

describe("HeaderMap.fill with the block it was last filled from", () => {
  it("holds what a fresh fill gives, read from its own copy of the bytes", () => {
    const m = new HeaderMap();
    expect(m.fill(A.dataStart, <usize>A.length)).toBe(true);
    const again = copyOf(A);
    expect(m.fill(again.dataStart, <usize>again.length)).toBe(true);
    expect(listed(m)).toBe(freshly(A));
    expect(m.sourceFormat).toBe(1);
    expect(m.sourceLength).toBe(<usize>A.length);
    // The host's block is freed after the fill: the map does not read it.
    again.fill(0);
    expect(listed(m)).toBe(freshly(A));
  });

  it("reads a block of the same length with other bytes", () => {
    const m = new HeaderMap();
    m.fill(A.dataStart, <usize>A.length);
    expect(m.fill(B.dataStart, <usize>B.length)).toBe(true);
    expect(listed(m)).toBe(freshly(B));
    expect(m.get(":path")).toBe("/pets/3");
  });

  it("reads a block that differs only in the middle, or is too short to compare by its end", () => {
    const m = new HeaderMap();
    const before = encodePairs([":path", "x-custom", "user-agent"], ["/a", "one", "curl"]);
    const after = encodePairs([":path", "x-custom", "user-agent"], ["/a", "two", "curl"]);
    m.fill(before.dataStart, <usize>before.length);
    expect(m.fill(after.dataStart, <usize>after.length)).toBe(true);
    expect(listed(m)).toBe(freshly(after));
    const none = encodePairs([], []);
    expect(m.fill(none.dataStart, <usize>none.length)).toBe(true);
    expect(m.size).toBe(0);
    expect(m.fill(none.dataStart, <usize>none.length)).toBe(true);
    expect(m.size).toBe(0);
    m.fill(after.dataStart, <usize>after.length);
    expect(listed(m)).toBe(freshly(after));
  });

  it("reads the block again after the map was changed or emptied", () => {
    const m = new HeaderMap();
    m.fill(A.dataStart, <usize>A.length);
    m.remove(":path");
    m.fill(A.dataStart, <usize>A.length);
    expect(listed(m)).toBe(freshly(A));
    m.set("x-custom", "changed");
    m.fill(A.dataStart, <usize>A.length);
    expect(listed(m)).toBe(freshly(A));
    expect(m.isViewing).toBe(true);
    const extra = String.UTF8.encode("x-added");
    m.add(changetype<usize>(extra), <usize>extra.byteLength, changetype<usize>(extra), <usize>extra.byteLength);
    m.fill(A.dataStart, <usize>A.length);
    expect(listed(m)).toBe(freshly(A));
    m.clear();
    expect(m.size).toBe(0);
    m.fill(A.dataStart, <usize>A.length);
    expect(listed(m)).toBe(freshly(A));
  });

  it("is left empty by a malformed block after a good one, and reads the good one again", () => {
    const m = new HeaderMap();
    m.fill(A.dataStart, <usize>A.length);
    const bad = copyOf(A);
    store<u32>(bad.dataStart, 1000);
    expect(m.fill(bad.dataStart, <usize>bad.length)).toBe(false);
    expect(m.size).toBe(0);
    m.fill(A.dataStart, <usize>A.length);
    expect(listed(m)).toBe(freshly(A));
  });
});
