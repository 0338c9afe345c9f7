// --signing-cert / --signing-key / --cert-chain / --root-cert: an intermediate CA plugged in from files.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { CertificateAuthority } from "../../host/anchor/certificate_authority.ts";
import { exportPrivateKeyPem, generateKeyPair } from "../../host/anchor/keys.ts";
import { AnchorMetrics } from "../../host/anchor/metrics.ts";
import { createSelfSignedRoot } from "../../host/anchor/self_signed_root.ts";
import { loadPluggedBundle, pemOf } from "../../host/anchor/signing_bundle.ts";
import { x509 } from "../../host/anchor/x509.ts";
import { csrFor } from "./support/ca_process.ts";
import { tempDir } from "../support/processes.ts";

const H = 3_600_000;
let dir: string;
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

describe("plugged-in signing certificate", () => {
  let files: {
    signingCert: string;
    signingKey: string;
    certChain: string;
    rootCert: string;
    otherKey: string;
    rootKey: string;
    rootCertOnly: string;
    unrelatedRoot: string;
  };
  before(async () => {
    dir = tempDir("mesh-ca-plugged-");
    const now = Date.now();
    const rootKeys = await generateKeyPair("ECDSA");
    const root = await createSelfSignedRoot({ keys: rootKeys, org: "Root Org", ttlMs: 100 * H, now });
    const interKeys = await generateKeyPair("ECDSA");
    const inter = await x509.X509CertificateGenerator.create({
      subject: [{ O: ["Intermediate Org"] }],
      issuer: root.subjectName,
      publicKey: interKeys.publicKey,
      signingKey: rootKeys.privateKey,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      notBefore: new Date(now - 1000),
      notAfter: new Date(now + 50 * H),
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(interKeys.publicKey),
      ],
    });
    files = {
      signingCert: file("ca-cert.pem", pemOf(inter)),
      signingKey: file("ca-key.pem", await exportPrivateKeyPem(interKeys.privateKey, false)),
      certChain: file("cert-chain.pem", pemOf(inter) + pemOf(root)),
      rootCert: file("root-cert.pem", pemOf(root)),
      otherKey: file("other-key.pem", await exportPrivateKeyPem((await generateKeyPair("ECDSA")).privateKey, true)),
      rootKey: file("root-key.pem", await exportPrivateKeyPem(rootKeys.privateKey, true)),
      rootCertOnly: file("root-only.pem", pemOf(root)),
      unrelatedRoot: file("unrelated-root.pem", pemOf(await createSelfSignedRoot({ keys: await generateKeyPair("ECDSA"), org: "Root Org", ttlMs: H, now }))),
    };
  });

  it("issues [leaf, intermediate, root]: the root is not repeated in the chain", async () => {
    const bundle = await loadPluggedBundle({
      signingCert: files.signingCert,
      signingKey: files.signingKey,
      certChain: files.certChain,
      rootCert: files.rootCert,
    });
    assert.equal(bundle.chain.length, 1);
    const ca = new CertificateAuthority(
      { trustDomain: "cluster.local", org: "", defaultTtlMs: H, maxTtlMs: H, allowedNamespaces: new Set(), dualUse: false, signCaCerts: false },
      { ratio: 0.5, minGraceMs: 0 },
      new AnchorMetrics(),
    );
    ca.setBundle(bundle);
    const res = await ca.createCertificate(await csrFor(["spiffe://cluster.local/ns/a/sa/b"]), 0);
    const [leaf, inter, root] = res.certChain.map((p) => new X509Certificate(p));
    assert.equal(res.certChain.length, 3);
    assert.equal(inter.subject, "O=Intermediate Org");
    assert.equal(root.subject, "O=Root Org");
    assert.ok(leaf.verify(inter.publicKey) && inter.verify(root.publicKey));
  });

  it("works without --cert-chain (the signing certificate is sent as the intermediate)", async () => {
    const bundle = await loadPluggedBundle({ signingCert: files.signingCert, signingKey: files.signingKey, certChain: "", rootCert: files.rootCert });
    assert.equal(bundle.chain.length, 1);
  });

  it("accepts a self-signed signing certificate as its own root", async () => {
    const bundle = await loadPluggedBundle({ signingCert: files.rootCertOnly, signingKey: files.rootKey, certChain: "", rootCert: "" });
    assert.deepEqual([bundle.chain.length, bundle.roots.length], [0, 1]);
  });

  const bad: Array<[string, () => Parameters<typeof loadPluggedBundle>[0], RegExp]> = [
    [
      "a key that is not the certificate's",
      () => ({ signingCert: files.signingCert, signingKey: files.otherKey, certChain: "", rootCert: files.rootCert }),
      /signing key does not match/,
    ],
    [
      "a missing root for an intermediate",
      () => ({ signingCert: files.signingCert, signingKey: files.signingKey, certChain: "", rootCert: "" }),
      /--root-cert is required/,
    ],
    [
      "a root that did not sign it",
      () => ({ signingCert: files.signingCert, signingKey: files.signingKey, certChain: "", rootCert: files.unrelatedRoot }),
      /does not chain up to the root certificate/,
    ],
    [
      "a root file without certificates",
      () => ({ signingCert: files.signingCert, signingKey: files.signingKey, certChain: "", rootCert: file("empty.pem", "") }),
      /no PEM certificate found/,
    ],
    [
      "a missing file",
      () => ({ signingCert: join(dir, "nope.pem"), signingKey: files.signingKey, certChain: "", rootCert: "" }),
      /--signing-cert .*nope\.pem: ENOENT/,
    ],
  ];
  for (const [name, make, message] of bad) it(`refuses ${name}`, async () => assert.rejects(loadPluggedBundle(make()), message));
});
