import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { DEMO_DIR, DEMO_SERVICE, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { type SecureWorkload, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { cpuSeconds, rssMiB } from "./process_usage.ts";
import { median } from "./stats.ts";

// The cost of the security layers of issue 6 (mutual TLS, JWT, authorization)
// on top of the sidecar bench's filter, side by side in one run: same echo
// app, same hub (no rules: every check allowed), same load, same path
// (/pets/42?key=bench, so the filter does the same work everywhere).

const DURATION_S = Number(process.env.SECURITY_BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
const ROUNDS = 2;
const NS = "demo";
const TD = "cluster.local";
const ISSUER = "bench@secure.mesh.io";
const PATH = "/pets/42?key=bench";
const SERVICE_PORT = 8000;

interface Run {
  rps: number;
  p50: number;
  p99: number;
  cpuPer1000: number;
  requests: number;
  non2xx: number;
  errors: number;
}

interface Config {
  name: string;
  /** Processes of the path whose CPU and RSS are counted (sidecars only). */
  pids: number[];
  url: string;
  headers: Record<string, string>;
  runs: Run[];
}

async function load(c: Config): Promise<Run> {
  const cpuBefore = c.pids.map(cpuSeconds);
  const result = await autocannon({ url: c.url, headers: c.headers, connections: CONNECTIONS, duration: DURATION_S, pipelining: 1 });
  const cpu = c.pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - cpuBefore[i], 0);
  const requests = result.requests.total;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPer1000: requests > 0 ? (cpu / requests) * 1000 : Number.NaN,
    requests,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** One request, its status and body (the checks before and after the load). */
function once(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { ...headers, connection: "close" }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function stats(adminUrl: string): Promise<Map<string, number>> {
  const { body } = await once(`${adminUrl}/stats`, {});
  return new Map(
    body
      .trim()
      .split("\n")
      .map((l) => {
        const [k, v] = l.split(": ");
        return [k, Number(v)] as [string, number];
      }),
  );
}

/** An RS256 key, its JWKS served on loopback (what `jwksUri` fetches and the sidecar caches), and one valid token. */
async function startJwks(): Promise<{ jwksUri: string; token: string; close(): void }> {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "key-1", alg: "RS256", use: "sig" };
  const server = createServer((req, res) => {
    res.writeHead(req.url === "/jwks.json" ? 200 : 404, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const token = await new SignJWT({ group: "dev", scope: "pets.read" })
    .setProtectedHeader({ alg: "RS256", kid: "key-1", typ: "JWT" })
    .setIssuer(ISSUER)
    .setSubject("alice")
    .setAudience("petstore.demo")
    .setIssuedAt()
    .setExpirationTime("2h")
    .sign(privateKey);
  return { jwksUri: `http://127.0.0.1:${(server.address() as { port: number }).port}/jwks.json`, token, close: () => server.close() };
}

/**
 * The security resources. Server workloads are told apart by labels:
 * `mtls=strict` (PeerAuthentication STRICT), `jwt=on` (RequestAuthentication),
 * `authz=on` (one DENY and one ALLOW policy, three rules each; the request
 * matches none of the DENY rules and the last ALLOW rule, so all six are
 * evaluated on every request).
 */
const securityConfig = (jwksUri: string) => `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: strict, namespace: ${NS}}
spec: {selector: {matchLabels: {mtls: strict}}, mtls: {mode: STRICT}}
---
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: {name: jwt, namespace: ${NS}}
spec:
  selector: {matchLabels: {jwt: "on"}}
  jwtRules:
  - {issuer: "${ISSUER}", jwksUri: "${jwksUri}", audiences: [petstore.demo]}
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: ${NS}}
spec:
  selector: {matchLabels: {authz: "on"}}
  action: DENY
  rules:
  - to: [{operation: {paths: ["/admin*"]}}]
  - from: [{source: {notRequestPrincipals: ["*"]}}]
  - from: [{source: {notPrincipals: ["${TD}/ns/${NS}/sa/frontend"]}}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: allow, namespace: ${NS}}
spec:
  selector: {matchLabels: {authz: "on"}}
  action: ALLOW
  rules:
  - from: [{source: {principals: ["${TD}/ns/${NS}/sa/ops"]}}]
    to: [{operation: {methods: [DELETE]}}]
  - to: [{operation: {methods: [POST], paths: [/pets]}}]
  - from: [{source: {principals: ["${TD}/ns/${NS}/sa/frontend"], requestPrincipals: ["${ISSUER}/alice"]}}]
    to: [{operation: {methods: [GET], paths: ["/pets/*"]}}]
    when: [{key: "request.auth.claims[group]", values: [dev]}]
`;

const f = (x: number, digits: number, width: number) => (Number.isFinite(x) ? x.toFixed(digits) : "-").padStart(width);

/**
 * Requests per second, latency percentiles, CPU seconds per 1000 requests
 * and RSS of the sidecar process(es) on the path, for the filter alone and
 * with mutual TLS, JWT and authorization added one by one, interleaved in
 * one run; every request must answer 200.
 */
export async function runSecurityBench(): Promise<string[]> {
  const mesh = await startLocalMesh({ hubConfig: "" });
  const jwks = await startJwks();
  // The hub of (a) is plain text, so the secure sidecars use --controlPlaneAuthPolicy NONE, which
  // needs a plain-text mesh_ca; the request path measured here is the same either way.
  const ca = await startMeshCa(["--grpc-plaintext"]);
  const workloads: SecureWorkload[] = [];
  const configDir = mkdtempSync(join(tmpdir(), "mesh-bench-sec-"));
  try {
    writeFileSync(join(configDir, "petstore.yaml"), readFileSync(join(DEMO_DIR, "petstore.yaml"), "utf8"));
    writeFileSync(join(configDir, "security.yaml"), securityConfig(jwks.jwksUri));
    // Every secure sidecar runs the same filter with the same hub as (a).
    const filterArgs = ["--cluster", `hub_server=127.0.0.1:${mesh.hub.listening.grpcPort}`, "--inboundService", DEMO_SERVICE];
    const base = { configDir, ca, namespace: NS, app: mesh.app, extraArgs: filterArgs };
    const server = (name: string, labels: Record<string, string>) =>
      startSecureWorkload({ ...base, name, serviceAccount: "petstore", labels: { app: "petstore", ...labels } });
    const [plain, mtls, jwt, authz] = await Promise.all([
      server("petstore-plain", {}),
      server("petstore-mtls", { mtls: "strict" }),
      server("petstore-jwt", { mtls: "strict", jwt: "on" }),
      server("petstore-authz", { mtls: "strict", jwt: "on", authz: "on" }),
    ]);
    workloads.push(plain, mtls, jwt, authz);
    // One client sidecar per path, so each configuration's processes are its own.
    // Without `sidecar` on the endpoint the client sends plain text (the server is PERMISSIVE).
    const client = (name: string, to: SecureWorkload, tls: boolean) =>
      startSecureWorkload({
        ...base,
        name,
        serviceAccount: "frontend",
        labels: { app: "frontend" },
        endpoints: [`${DEMO_SERVICE}:${SERVICE_PORT}=127.0.0.1:${to.inbound}${tls ? ",sidecar,sa=petstore" : ""}`],
      });
    const clients = await Promise.all([
      client("frontend-plain", plain, false),
      client("frontend-mtls", mtls, true),
      client("frontend-jwt", jwt, true),
      client("frontend-authz", authz, true),
    ]);
    workloads.push(...clients);

    const host = { host: `${DEMO_SERVICE}:${SERVICE_PORT}` };
    const bearer = { ...host, authorization: `Bearer ${jwks.token}` };
    const via = (c: SecureWorkload) => `http://127.0.0.1:${c.outbound}${PATH}`;
    const pair = (c: SecureWorkload, s: SecureWorkload) => [c.sidecar.proc.pid!, s.sidecar.proc.pid!];
    const configs: Config[] = [
      { name: "(a) filter alone", pids: [mesh.sidecar.proc.pid!], url: `${mesh.inboundUrl}${PATH}`, headers: {}, runs: [] },
      { name: "(a') 2 sidecars, plain", pids: pair(clients[0], plain), url: via(clients[0]), headers: host, runs: [] },
      { name: "(b) + mTLS", pids: pair(clients[1], mtls), url: via(clients[1]), headers: host, runs: [] },
      { name: "(c) + mTLS + JWT", pids: pair(clients[2], jwt), url: via(clients[2]), headers: bearer, runs: [] },
      { name: "(d) + mTLS + JWT + authz", pids: pair(clients[3], authz), url: via(clients[3]), headers: bearer, runs: [] },
    ];
    const servers = [plain, mtls, jwt, authz];

    // Each path answers 200 through the layers it claims: XFCC only with mTLS,
    // the token consumed by the JWT filter; and the denials still work.
    for (const [i, c] of configs.entries()) {
      const res = await once(c.url, c.headers);
      if (res.status !== 200) throw new Error(`${c.name}: status ${res.status}: ${res.body}`);
      const seen = JSON.parse(res.body).headers as Record<string, string>;
      if (i >= 2 !== (seen["x-forwarded-client-cert"] !== undefined)) throw new Error(`${c.name}: unexpected XFCC ${seen["x-forwarded-client-cert"]}`);
      if (i >= 3 && seen.authorization !== undefined) throw new Error(`${c.name}: the token reached the app`);
    }
    const denied = await once(via(clients[3]), host);
    if (denied.status !== 403) throw new Error(`(d) without a token: expected 403, got ${denied.status}`);
    const badToken = await once(via(clients[2]), { ...host, authorization: `Bearer ${jwks.token.slice(0, -4)}AAAA` });
    if (badToken.status !== 401) throw new Error(`(c) with a bad signature: expected 401, got ${badToken.status}`);

    // Warm up (JIT, the check cache, keep-alive pools, TLS sessions).
    for (const c of configs) await autocannon({ url: c.url, headers: c.headers, connections: 4, amount: 2000 });
    const before = await Promise.all(servers.map((s) => stats(s.adminUrl)));
    for (let round = 0; round < ROUNDS; round++) for (const c of configs) c.runs.push(await load(c));

    // The layers really ran on every request of the load.
    const after = await Promise.all(servers.map((s) => stats(s.adminUrl)));
    const delta = (i: number, key: string) => (after[i].get(key) ?? 0) - (before[i].get(key) ?? 0);
    const sent = (i: number) => configs[i + 1].runs.reduce((a, r) => a + r.requests, 0);
    const checks = [
      `mutual TLS requests at the servers: (a') ${delta(0, "inbound.mtls_requests")}, (b) ${delta(1, "inbound.mtls_requests")}/${sent(1)}, (c) ${delta(2, "inbound.mtls_requests")}/${sent(2)}, (d) ${delta(3, "inbound.mtls_requests")}/${sent(3)}`,
      `tokens validated: (c) ${delta(2, "jwt_authn.authenticated")}/${sent(2)}, (d) ${delta(3, "jwt_authn.authenticated")}/${sent(3)}; authorization allowed by policy allow rule 2: (d) ${delta(3, `rbac.policy.${NS}/allow.rule_2.allowed`)}/${sent(3)}`,
    ];
    const layerOk =
      delta(0, "inbound.mtls_requests") === 0 &&
      [1, 2, 3].every((i) => delta(i, "inbound.mtls_requests") >= sent(i)) &&
      [2, 3].every((i) => delta(i, "jwt_authn.authenticated") >= sent(i)) &&
      delta(3, `rbac.policy.${NS}/allow.rule_2.allowed`) >= sent(3);

    const rss = (c: Config) => c.pids.reduce((a, pid) => a + rssMiB(pid), 0);
    const m = (c: Config, k: keyof Run) => median(c.runs.map((r) => r[k]));
    const [a, a2] = configs;
    const lines = [
      `security layers: ${CONNECTIONS} connections, ${DURATION_S} s x ${ROUNDS} interleaved rounds (medians); CPU and RSS summed over the sidecar process(es) on the path`,
      `${"".padEnd(26)} ${"req/s".padStart(8)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"CPU s/1000 req".padStart(15)} ${"RSS MiB".padStart(8)} ${"non-2xx".padStart(8)} ${"errors".padStart(7)} ${"req/s ÷ (a)".padStart(12)} ${"CPU ÷ (a)".padStart(10)}`,
      ...configs.map(
        (c) =>
          `${c.name.padEnd(26)} ${f(m(c, "rps"), 0, 8)} ${f(m(c, "p50"), 1, 7)} ${f(m(c, "p99"), 1, 7)} ${f(m(c, "cpuPer1000"), 3, 15)} ${f(rss(c), 0, 8)} ${String(c.runs.reduce((s, r) => s + r.non2xx, 0)).padStart(8)} ${String(c.runs.reduce((s, r) => s + r.errors, 0)).padStart(7)} ${f(m(c, "rps") / m(a, "rps"), 2, 12)} ${f(m(c, "cpuPer1000") / m(a, "cpuPer1000"), 2, 10)}`,
      ),
      `each layer against the step before (CPU ms per request added, p50 ms added, throughput ratio):`,
      ...[
        ["second sidecar, plain (a') - (a)", a2, a],
        ["mutual TLS        (b) - (a')", configs[2], a2],
        ["JWT (RS256)       (c) - (b)", configs[3], configs[2]],
        ["authorization     (d) - (c)", configs[4], configs[3]],
        ["all three         (d) - (a')", configs[4], a2],
      ].map(([label, x, y]) => {
        const cx = x as Config;
        const cy = y as Config;
        return `  ${(label as string).padEnd(34)} ${f(m(cx, "cpuPer1000") - m(cy, "cpuPer1000"), 3, 7)} ms  ${f(m(cx, "p50") - m(cy, "p50"), 1, 6)} ms  x${f(m(cx, "rps") / m(cy, "rps"), 2, 4)}`;
      }),
      ...checks,
    ];
    const failed = configs.some((c) => c.runs.some((r) => r.non2xx + r.errors > 0 || r.requests === 0));
    if (failed || !layerOk) {
      for (const l of lines) console.error(l);
      throw new Error(failed ? "security bench: some requests did not answer 2xx" : "security bench: a layer did not run on every request");
    }
    return lines;
  } finally {
    await Promise.all(workloads.map((w) => w.stop()));
    await ca.stop();
    jwks.close();
    await mesh.stop();
    rmSync(configDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) for (const line of await runSecurityBench()) console.log(line);
