// Workload identities (hub-client §2.2, §2.3): the SAN rule strips
// `spiffe://`; source.namespace is the text between the first `/ns/` and the
// next `/` (upstream src/envoy/utils/authn.cc).
import { namespaceOfPrincipal, principalFromSan } from "../../assembly/attributes/principal";

describe("principalFromSan", () => {
  it("strips the spiffe:// prefix and leaves other forms unchanged", () => {
    const rows: string[][] = [
      ["spiffe://cluster.local/ns/foo/sa/bar", "cluster.local/ns/foo/sa/bar"],
      ["cluster.local/ns/foo/sa/bar", "cluster.local/ns/foo/sa/bar"],
      ["spiffe://", ""],
      ["SPIFFE://cluster.local/ns/a", "SPIFFE://cluster.local/ns/a"],
      ["https://example.com/id", "https://example.com/id"],
      ["x-spiffe://a", "x-spiffe://a"],
      ["", ""],
    ];
    for (let i = 0; i < rows.length; i++) expect(principalFromSan(rows[i][0])).toBe(rows[i][1], rows[i][0]);
  });
});

describe("namespaceOfPrincipal", () => {
  it("finds the namespace after the first /ns/ (upstream authn.cc examples)", () => {
    const rows: string[][] = [
      ["cluster.local/ns/abc/sa/x", "abc"],
      ["cluster.local/ns/abc", "abc"],
      ["cluster.local/ns/", ""],
      ["cluster.local/ns/a/ns/b", "a"],
      ["td/ns/default/sa/sleep", "default"],
      ["spiffe://cluster.local/ns/foo/sa/bar", "foo"],
    ];
    for (let i = 0; i < rows.length; i++) expect(namespaceOfPrincipal(rows[i][0])).toBe(rows[i][1], rows[i][0]);
  });

  it("is null without /ns/ (case-sensitive)", () => {
    const rows: string[] = ["cluster.local/NS/abc", "cluster.local/sa/x", "ns/abc", "", "cluster.local/nsabc/x"];
    for (let i = 0; i < rows.length; i++) expect(namespaceOfPrincipal(rows[i])).toBeNull(rows[i]);
  });
});
