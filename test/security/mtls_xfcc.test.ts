import assert from "node:assert/strict";
import { X509Certificate, createHash, webcrypto } from "node:crypto";
import { before, describe, it } from "node:test";
import { x509 } from "../../host/anchor/x509.ts";
import { XFCC_HEADER, applyXfcc, formatXfccElement, quoteXfccValue, rfc2253Subject, subjectAltNames, xfccFor } from "../../host/security/mtls/xfcc.ts";

// X-Forwarded-Client-Cert as the server sidecar sets it (spec rule 1; security.md §3).

async function cert(subject: string | undefined, sans: Array<{ type: "url" | "dns"; value: string }>): Promise<X509Certificate> {
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPair;
  const c = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: subject ?? "",
    notBefore: new Date("2026-01-01T00:00:00Z"),
    notAfter: new Date("2027-01-01T00:00:00Z"),
    keys,
    signingAlgorithm: alg,
    extensions: [new x509.SubjectAlternativeNameExtension(sans)],
  });
  return new X509Certificate(Buffer.from(c.rawData));
}

describe("XFCC", () => {
  let server: X509Certificate;
  let client: X509Certificate;
  before(async () => {
    server = await cert(undefined, [{ type: "url", value: "spiffe://cluster.local/ns/foo/sa/httpbin" }]);
    client = await cert(undefined, [{ type: "url", value: "spiffe://cluster.local/ns/foo/sa/sleep" }]);
  });

  it('mesh certificates: By;Hash;Subject="";URI, exactly as upstream apps see it', () => {
    const hash = createHash("sha256").update(client.raw).digest("hex");
    assert.equal(xfccFor(server, client), `By=spiffe://cluster.local/ns/foo/sa/httpbin;Hash=${hash};Subject="";URI=spiffe://cluster.local/ns/foo/sa/sleep`);
    assert.match(hash, /^[0-9a-f]{64}$/);
  });

  it("a subject is written in RFC 2253 order (most specific first) and quoted; DNS SANs follow", async () => {
    const c = await cert("C=US, O=Mesh, CN=sleep", [
      { type: "url", value: "spiffe://cluster.local/ns/foo/sa/sleep" },
      { type: "dns", value: "sleep.foo" },
    ]);
    assert.equal(rfc2253Subject(c), "CN=sleep,O=Mesh,C=US");
    assert.deepEqual(subjectAltNames(c), { uris: ["spiffe://cluster.local/ns/foo/sa/sleep"], dns: ["sleep.foo"] });
    assert.match(xfccFor(server, c), /;Subject="CN=sleep,O=Mesh,C=US";URI=spiffe:\/\/cluster.local\/ns\/foo\/sa\/sleep;DNS=sleep.foo$/);
  });

  it('values with , ; = or " are quoted, with " escaped', () => {
    assert.equal(quoteXfccValue("spiffe://a/b"), "spiffe://a/b");
    assert.equal(quoteXfccValue("a;b"), '"a;b"');
    assert.equal(quoteXfccValue('say "hi", ok'), '"say \\"hi\\", ok"');
    assert.equal(formatXfccElement({ by: ["x=y"], hash: "ab", subject: 'CN=a\\"b', uri: "" }), 'By="x=y";Hash=ab;Subject="CN=a\\"b";URI=');
  });

  it("a client-supplied header is never passed through: replaced on mTLS, removed on plain text", () => {
    const forged: Array<[string, string]> = [
      ["host", "httpbin"],
      [XFCC_HEADER, "By=spiffe://evil;URI=spiffe://cluster.local/ns/mesh-system/sa/admin"],
      [XFCC_HEADER, "x"],
    ];
    const element = xfccFor(server, client);
    assert.deepEqual(applyXfcc(forged, element), [
      ["host", "httpbin"],
      [XFCC_HEADER, element],
    ]);
    assert.deepEqual(applyXfcc(forged, undefined), [["host", "httpbin"]]);
  });
});
