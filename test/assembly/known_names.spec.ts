// Header and property names matched by a perfect hash (assembly/known_names.ts):
// a known name comes back as the shared string, anything else as null.
import { knownName } from "../../assembly/known_names";

function lookup(name: string): string | null {
  const bytes = String.UTF8.encode(name);
  return knownName(changetype<usize>(bytes), <usize>bytes.byteLength);
}

describe("known names", () => {
  it("finds every known name, as the one shared string", () => {
    const names = [":authority", ":method", ":path", ":scheme", "user-agent", "x-request-id", "x-mesh-attributes", "grpc-status", "source.address", "mesh.authn.payload"];
    for (let i = 0; i < names.length; i++) {
      const found = lookup(names[i]);
      expect(found).toBe(names[i]);
      expect(changetype<usize>(found)).toBe(changetype<usize>(lookup(names[i])));
    }
  });

  it("answers null for other names, prefixes, longer names and other cases", () => {
    const others = ["", "x-custom", ":pat", ":paths", ":PATH", "User-Agent", "source.addresses", "x-request-i\u00e9"];
    for (let i = 0; i < others.length; i++) expect(lookup(others[i])).toBeNull();
  });
});
