// Recent header and property values are shared across requests: a repeat
// returns the same string, and different bytes never get another's string.
import { recentString, RepeatedText } from "../../assembly/recent_strings";

function bytes(values: Array<u8>): Uint8Array {
  const b = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) b[i] = values[i];
  return b;
}

function recent(b: Uint8Array): string {
  return recentString(b.dataStart, <usize>b.length);
}

describe("recentString", () => {
  it("returns the same string for the same bytes, decoded once", () => {
    const a = recent(Uint8Array.wrap(String.UTF8.encode("bench.default.svc.cluster.local")));
    const b = recent(Uint8Array.wrap(String.UTF8.encode("bench.default.svc.cluster.local")));
    expect(a).toBe("bench.default.svc.cluster.local");
    expect(changetype<usize>(a)).toBe(changetype<usize>(b), "a repeat shares the string");
  });

  it("other bytes in the same place get their own string", () => {
    const first = recent(Uint8Array.wrap(String.UTF8.encode("10.1.2.3:51000")));
    const other = recent(Uint8Array.wrap(String.UTF8.encode("10.1.2.3:51001")));
    expect(first).toBe("10.1.2.3:51000");
    expect(other).toBe("10.1.2.3:51001");
  });

  it("non-ASCII text goes through the decoder: invalid UTF-8 is never mistaken for a recent string", () => {
    expect(recent(Uint8Array.wrap(String.UTF8.encode("é")))).toBe("é");
    // 0xE9 alone is not UTF-8: U+FFFD, not the "é" (U+00E9) seen just before.
    expect(recent(bytes([0xe9]))).toBe("\uFFFD");
    expect(recent(bytes([0xe9]))).toBe("\uFFFD");
    expect(recent(bytes([]))).toBe("");
  });
});

function repeat(r: RepeatedText, text: string): string {
  const b = String.UTF8.encode(text);
  return r.of(changetype<usize>(b), <usize>b.byteLength);
}

describe("RepeatedText", () => {
  it("gives back the last string while the same bytes come, and the new text when they change", () => {
    const r = new RepeatedText();
    const first = repeat(r, "petstore.demo.svc.cluster.local");
    expect(first).toBe("petstore.demo.svc.cluster.local");
    expect(changetype<usize>(repeat(r, "petstore.demo.svc.cluster.local"))).toBe(changetype<usize>(first), "a repeat is the same string");
    // Same length, one byte different: in the overlapping last word, in a middle word, in a short value.
    expect(repeat(r, "petstore.demo.svc.cluster.locaL")).toBe("petstore.demo.svc.cluster.locaL");
    expect(repeat(r, "petstore.demX.svc.cluster.locaL")).toBe("petstore.demX.svc.cluster.locaL");
    expect(repeat(r, "a:1")).toBe("a:1");
    expect(repeat(r, "a:2")).toBe("a:2");
    expect(repeat(r, "")).toBe("");
    expect(repeat(r, "10.1.2.3:51000")).toBe("10.1.2.3:51000");
    // Longer than the room kept at first.
    const long = "x".repeat(100) + "y";
    expect(repeat(r, long)).toBe(long);
    expect(repeat(r, "x".repeat(101))).toBe("x".repeat(101));
    expect(repeat(r, "\u00e9t\u00e9")).toBe("\u00e9t\u00e9");
  });
});
