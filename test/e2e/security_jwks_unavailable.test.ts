import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DISCOVERY_BIN } from "../../host/demo/binaries.ts";
import { type SecureWorkload, startMeshCa, startSecureWorkload, writeWorkloadCertFiles } from "../../host/demo/secure_mesh.ts";
import { ISSUER, type JwtKit, type Outcome, send, startJwtKit, stats } from "./security_support.ts";
import { type Daemon, startDaemon, tempDir } from "../support/processes.ts";

// Issue 25 item 6: a RequestAuthentication whose key set cannot be had
// (jwksUri answering 404, 500, not JSON, or refusing connections). Upstream
// fails closed: istiod serves a key set no token verifies against and Envoy
// answers 401 (tests/integration/security/jwt_test.go, "invalid-jwks-*").
// A request without a token is still let through (no authorization policy).

const status = (o: Outcome) => (o.outcome === "http" ? o.status : o.outcome);

describe("security: a key set that cannot be fetched fails closed (issue 25 item 6)", { timeout: 300_000 }, () => {
  const dir = tempDir("mesh-jwks-unavailable-");
  let ca: Awaited<ReturnType<typeof startMeshCa>>;
  let kit: JwtKit;
  let broken: Server;
  let httpbin: SecureWorkload;
  let overAds: SecureWorkload | undefined;
  let disco: Daemon<{ secureGrpc?: string }> | undefined;
  let refusedPort: number;
  const call = (path: string, token?: string) =>
    send(httpbin.inbound, { path, host: "httpbin.foo:8000", headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

  before(async () => {
    kit = await startJwtKit();
    // A key server that answers, but never a key set.
    broken = createServer((req, res) => {
      if (req.url === "/500") return res.writeHead(500).end("oops");
      if (req.url === "/html") return res.writeHead(200, { "content-type": "text/html" }).end("<html>keys</html>");
      if (req.url === "/notaset") return res.writeHead(200, { "content-type": "application/json" }).end('{"kes": []}');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => broken.listen(0, "127.0.0.1", () => r()));
    const base = `http://127.0.0.1:${(broken.address() as { port: number }).port}`;
    // A port nobody listens on: bind one, note it, close it.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    refusedPort = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const rule = (issuer: string, uri: string) => `  - {issuer: "${issuer}", jwksUri: "${uri}"}`;
    writeFileSync(
      join(dir, "policies.yaml"),
      `apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: {name: jwt, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  jwtRules:
${rule(ISSUER, `${base}/jwks.json`)}
${rule("five-hundred", `${base}/500`)}
${rule("html", `${base}/html`)}
${rule("not-a-set", `${base}/notaset`)}
${rule("refused", `http://127.0.0.1:${refusedPort}/jwks.json`)}
${rule("good", kit.jwksUri)}
`,
    );
    ca = await startMeshCa();
    httpbin = await startSecureWorkload({ configDir: dir, ca, name: "httpbin", namespace: "foo" });
  });
  after(async () => {
    await overAds?.stop();
    await disco?.stop();
    await httpbin?.stop();
    await ca?.stop();
    kit?.close();
    broken?.close();
  });

  it("a valid token of an issuer whose jwksUri answers 404 is refused with 401, and the app sees nothing", async () => {
    const before = httpbin.app.seen.length;
    const token = await kit.token();
    const res = await call("/headers", token);
    assert.equal(status(res), 401);
    assert.equal(res.outcome === "http" && res.body, "Jwks remote fetch is failed");
    assert.equal(res.outcome === "http" && res.headers["www-authenticate"], 'Bearer realm="http://httpbin.foo:8000/headers", error="invalid_token"');
    // Again, now that the failure is cached (within the refetch cool-down).
    assert.equal(status(await call("/headers", token)), 401);
    assert.equal(httpbin.app.seen.length, before, "no request reached the app");
  });

  it("500, a body that is not JSON, JSON that is not a key set, a refused connection: all 401", async () => {
    for (const iss of ["five-hundred", "html", "not-a-set", "refused"]) {
      const res = await call("/headers", await kit.token({ iss }));
      assert.equal(status(res), 401, iss);
      assert.equal(res.outcome === "http" && res.body, "Jwks remote fetch is failed", iss);
    }
    const s = await stats(httpbin.adminUrl);
    assert.ok((s.get("jwt_authn.denied") ?? 0) >= 6);
  });

  it("an expired token is 401 too; no token is let through (no authorization policy), as upstream", async () => {
    assert.equal(status(await call("/headers", await kit.token({ exp: Math.floor(Date.now() / 1000) - 60 }))), 401);
    assert.equal(status(await call("/headers")), 200);
  });

  it("an issuer whose key set is served verifies as usual beside the broken ones", async () => {
    assert.equal(status(await call("/headers", await kit.token({ iss: "good" }))), 200);
  });

  it("the same through disco-discovery: a sidecar configured over ADS refuses the token (401)", async () => {
    const certDir = tempDir("mesh-jwks-disco-certs-");
    await writeWorkloadCertFiles(ca, "mesh-system", "disco-discovery", certDir);
    disco = await startDaemon<{ secureGrpc?: string }>(
      DISCOVERY_BIN,
      [
        "discovery",
        "--configDir",
        dir,
        "--grpcAddr",
        "",
        "--secureGrpcAddr",
        "127.0.0.1:0",
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "127.0.0.1:0",
        "--httpsAddr",
        "",
        "--ctrlz_port",
        "0",
        "--ctrlz_address",
        "127.0.0.1",
      ],
      "disco-discovery listening: ",
      undefined,
      { ...process.env, DISCO_CERT_DIR: certDir },
    );
    overAds = await startSecureWorkload({
      ca,
      name: "httpbin",
      namespace: "foo",
      configDir: "",
      discoveryAddress: disco.listening.secureGrpc,
      extraArgs: ["--discoIdentity", "sa/disco-discovery"],
    });
    const before = overAds.app.seen.length;
    const res = await send(overAds.inbound, { path: "/headers", host: "httpbin.foo:8000", headers: { authorization: `Bearer ${await kit.token()}` } });
    assert.equal(status(res), 401);
    assert.equal(res.outcome === "http" && res.body, "Jwks remote fetch is failed");
    assert.equal(overAds.app.seen.length, before);
    assert.equal(
      status(
        await send(overAds.inbound, { path: "/headers", host: "httpbin.foo:8000", headers: { authorization: `Bearer ${await kit.token({ iss: "good" })}` } }),
      ),
      200,
    );
  });
});
