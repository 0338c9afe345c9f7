import assert from "node:assert/strict";
import { webcrypto } from "node:crypto";
import { writeFileSync } from "node:fs";
import { request } from "node:https";
import { connect } from "node:tls";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { x509 } from "../../host/anchor/x509.ts";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { send } from "./security_support.ts";
import { tempDir } from "../support/processes.ts";

// Issue 11: HTTPS Gateway servers, after upstream's secure ingress task
// (renamed): a root for example.com and a certificate for
// httpbin.example.com made here, stored as the Secret `httpbin-credential`
// (type kubernetes.io/tls, as `kubectl create secret tls` makes it) in the
// gateway's namespace; a Gateway server on the gateway Service's port 443
// (container port 8443) with tls.mode SIMPLE and that credentialName; a real
// TLS client that trusts only the example.com root.

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const pem = (der: ArrayBuffer, label: string) => x509.PemConverter.encode(der, label);

async function exampleCertificates(): Promise<{ rootPem: string; certPem: string; keyPem: string }> {
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const rootKeys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: "O=example Inc.,CN=example.com",
    notBefore,
    notAfter,
    keys: rootKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: "02",
    subject: "CN=httpbin.example.com,O=httpbin organization",
    issuer: root.subject,
    notBefore,
    notAfter,
    signingKey: rootKeys.privateKey,
    publicKey: leafKeys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: "httpbin.example.com" }]),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    ],
  });
  return {
    rootPem: root.toString("pem"),
    certPem: leaf.toString("pem"),
    keyPem: pem(await webcrypto.subtle.exportKey("pkcs8", leafKeys.privateKey), "PRIVATE KEY"),
  };
}

function httpsGet(
  port: number,
  o: { ca: string; servername: string; path: string },
): Promise<{ status: number; body: string; peer: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, path: o.path, servername: o.servername, ca: o.ca, headers: { host: o.servername, connection: "close" }, agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body, peer: String((res.socket as import("node:tls").TLSSocket).getPeerCertificate().subject?.CN ?? "") }),
        );
      },
    );
    req.on("error", (e) => resolve({ error: e.message }));
    req.end();
  });
}

describe("HTTPS gateway: tls.mode SIMPLE with a credentialName Secret (upstream's secure ingress task)", { timeout: 600_000 }, () => {
  const dir = tempDir("mesh-secure-gateway-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let httpbin: SecureWorkload;
  let gateway: SecureWorkload;
  let certs: Awaited<ReturnType<typeof exampleCertificates>>;

  before(async () => {
    certs = await exampleCertificates();
    const indent = (s: string) =>
      s
        .trim()
        .split("\n")
        .map((l) => `    ${l}`)
        .join("\n");
    writeFileSync(
      join(dir, "resources.yaml"),
      `apiVersion: v1
kind: Service
metadata: {name: mesh-ingressgateway, namespace: mesh-system}
spec: {selector: {mesh: ingressgateway}, ports: [{name: http2, port: 80, targetPort: 8080}, {name: https, port: 443, targetPort: 8443}]}
---
apiVersion: v1
kind: Secret
metadata: {name: httpbin-credential, namespace: mesh-system}
type: kubernetes.io/tls
stringData:
  tls.crt: |
${indent(certs.certPem)}
  tls.key: |
${indent(certs.keyPem)}
---
apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: {name: mygateway, namespace: mesh-system}
spec:
  selector: {mesh: ingressgateway}
  servers:
  - port: {number: 443, name: https, protocol: HTTPS}
    tls: {mode: SIMPLE, credentialName: httpbin-credential}
    hosts: [httpbin.example.com]
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: httpbin, namespace: foo}
spec:
  hosts: [httpbin.example.com]
  gateways: [mesh-system/mygateway]
  http:
  - match: [{uri: {prefix: /status}}, {uri: {prefix: /delay}}]
    route: [{destination: {port: {number: 8000}, host: httpbin.foo.svc.cluster.local}}]
`,
    );
    ca = await startMeshCa();
    httpbin = await startSecureWorkload({ configDir: dir, ca, name: "httpbin", namespace: "foo", labels: { app: "httpbin" } });
    gateway = await startSecureWorkload({
      configDir: dir,
      ca,
      name: "mesh-ingressgateway",
      namespace: "mesh-system",
      serviceAccount: "mesh-ingressgateway-service-account",
      labels: { mesh: "ingressgateway" },
      containerPort: 8443,
      gateway: true,
      endpoints: [`httpbin.foo.svc.cluster.local:8000=127.0.0.1:${httpbin.inbound},sidecar,sa=httpbin`],
    });
  });
  after(async () => {
    await Promise.all([gateway, httpbin].filter(Boolean).map((w) => w.stop()));
    await ca?.stop();
  });

  it("a client trusting the example.com root gets httpbin.example.com's certificate and is routed to httpbin over mutual TLS", async () => {
    const r = await httpsGet(gateway.inbound, { ca: certs.rootPem, servername: "httpbin.example.com", path: "/status/418" });
    assert.ok("status" in r, "error" in r ? r.error : "");
    assert.equal(r.status, 200, r.body);
    assert.equal(r.peer, "httpbin.example.com");
    const echoed = JSON.parse(r.body);
    assert.equal(echoed.path, "/status/418");
    assert.match(echoed.headers["x-forwarded-client-cert"], /URI=spiffe:\/\/cluster\.local\/ns\/mesh-system\/sa\/mesh-ingressgateway-service-account$/);
  });

  it("a path no route matches is 404 over HTTPS too", async () => {
    const r = await httpsGet(gateway.inbound, { ca: certs.rootPem, servername: "httpbin.example.com", path: "/headers" });
    assert.ok("status" in r);
    assert.equal(r.status, 404);
  });

  it("a client that does not trust the root fails the handshake; plain HTTP on the HTTPS port gets no answer", async () => {
    const untrusted = await httpsGet(gateway.inbound, { ca: (await exampleCertificates()).rootPem, servername: "httpbin.example.com", path: "/status/200" });
    assert.ok("error" in untrusted);
    assert.match(untrusted.error, /certificate|self.signed|unable to verify/i);
    const plain = await send(gateway.inbound, { host: "httpbin.example.com", path: "/status/200" });
    assert.equal(plain.outcome, "connection-failure");
  });

  it("the credential is chosen by SNI: a name no server covers gets no certificate", async () => {
    const outcome = await new Promise<string>((resolve) => {
      const s = connect({ host: "127.0.0.1", port: gateway.inbound, servername: "other.example.com", ca: certs.rootPem });
      s.on("secureConnect", () => resolve(`connected: ${s.getPeerCertificate().subject?.CN}`));
      s.on("error", (e) => resolve(`error: ${e.message}`));
    });
    // As Envoy, which finds no filter chain for a name no server covers.
    assert.match(outcome, /^error: /);
  });
});
