// Header and property names and common values matched by a perfect hash
// (assembly/known_strings.ts): a known string comes back as the shared
// string, anything else as null.
import { knownString } from "../../assembly/known_strings";

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
