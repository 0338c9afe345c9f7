// Header and property names and common values matched by a perfect hash
// (assembly/known_strings.ts): a known string comes back as the shared
// string, anything else as null.
import { knownAt, knownSlotOfString, knownString } from "../../assembly/known_strings";

function lookup(name: string): string | null {
  const bytes = String.UTF8.encode(name);
  return knownString(changetype<usize>(bytes), <usize>bytes.byteLength);
}

describe("known strings", () => {
  it("finds every known name, as the one shared string", () => {
    const names = [":authority", ":method", ":path", ":scheme", "user-agent", "x-request-id", "x-mesh-attributes", "grpc-status", "source.address", "mesh.authn.payload", "GET", "https", "0"];
    for (let i = 0; i < names.length; i++) {
      const found = lookup(names[i]);
      expect(found).toBe(names[i]);
      expect(changetype<usize>(found)).toBe(changetype<usize>(lookup(names[i])));
    }
  });

  it("answers null for other names, prefixes, longer names and other cases", () => {
    const others = ["", "x-custom", ":pat", ":paths", ":PATH", "User-Agent", "source.addresses", "x-request-i\u00e9", "get", "GETS", "00"];
    for (let i = 0; i < others.length; i++) expect(lookup(others[i])).toBeNull();
  });
});

describe("knownSlotOfString", () => {
  it("gives a string the slot of its bytes, asked once or many times, for many strings in turn", () => {
    const names = [":authority", "user-agent", "x-api-key", "content-type", "source.address", "GET"];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < names.length; i++) {
        const slot = knownSlotOfString(names[i]);
        expect(slot).toBeGreaterThanOrEqual(0);
        expect(knownAt(slot)).toBe(names[i]);
      }
    }
  });

  it("answers each new string by its text, never by an earlier string's answer", () => {
    // Strings made at run time: new objects, some where freed ones were.
    for (let i = 0; i < 200; i++) {
      const known = ("user-" + "agent").slice(0);
      const other = "x-custom-" + i.toString();
      expect(knownAt(knownSlotOfString(known))).toBe("user-agent");
      expect(knownSlotOfString(other)).toBe(-1);
    }
    expect(knownSlotOfString("")).toBe(-1);
  });
});
