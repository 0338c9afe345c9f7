// Instructions per request of a client sidecar originating mutual TLS
// (issue 30: the sidecar-to-sidecar hop of a mesh), counted by callgrind as
// test/bench/sidecar_callgrind.ts counts the inbound agent. A local mesh
// (hub, echo app), a plain-text mesh_ca and a server workload whose sidecar
// is STRICT are started; then the client sidecar of the checkout named,
// under callgrind, sends each request to the server's sidecar with its
// workload certificate. After a warm-up the counts are zeroed, a fixed
// number of requests is sent with 16 connections to its outbound listener,
// and the counts are dumped.
//   node --import tsx test/bench/mtls_callgrind.ts [checkout]   (after npm run build there)
// One checkout per invocation (a second one in the same run counts more:
// docs/benchmarks.md). SIDECAR_CALLGRIND_WARM_UP (12000) and
// SIDECAR_CALLGRIND_REQUESTS (3000) set the request counts.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { DEMO_DIR, DEMO_SERVICE, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { secureWorkloadArgs, startMeshCa, startSecureWorkload } from "../../host/demo/secure_mesh.ts";
import { dumpFileTotal, startUnderCallgrind } from "./callgrind_node.ts";
import { withoutHubHandlers } from "./sidecar.ts";

const WARM_UP = Number(process.env.SIDECAR_CALLGRIND_WARM_UP ?? 12000);
const REQUESTS = Number(process.env.SIDECAR_CALLGRIND_REQUESTS ?? 3000);
const NS = "demo";
const SERVICE_PORT = 8000;

export async function runMtlsCallgrind(checkout: string): Promise<string[]> {
  const scratch = mkdtempSync(join(tmpdir(), "mtls-callgrind-"));
  const mesh = await startLocalMesh({ hubConfig: "" });
  const stops: Array<() => Promise<unknown>> = [];
  try {
    await withoutHubHandlers(mesh);
    const ca = await startMeshCa(["--grpc-plaintext"]);
    stops.push(() => ca.stop());
    const configDir = join(scratch, "config");
    mkdirSync(configDir);
    writeFileSync(join(configDir, "petstore.yaml"), readFileSync(join(DEMO_DIR, "petstore.yaml"), "utf8"));
    writeFileSync(
      join(configDir, "security.yaml"),
      `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: strict, namespace: ${NS}}
spec: {selector: {matchLabels: {mtls: strict}}, mtls: {mode: STRICT}}
`,
    );
    const base = {
      configDir,
      ca,
      namespace: NS,
      app: mesh.app,
      extraArgs: ["--cluster", `hub_server=127.0.0.1:${mesh.hub.listening.grpcPort}`, "--inboundService", DEMO_SERVICE],
    };
    const server = await startSecureWorkload({ ...base, name: "petstore-mtls", serviceAccount: "petstore", labels: { app: "petstore", mtls: "strict" } });
    stops.push(() => server.stop());
    const client = {
      ...base,
      name: "frontend-mtls",
      serviceAccount: "frontend",
      labels: { app: "frontend" },
      endpoints: [`${DEMO_SERVICE}:${SERVICE_PORT}=127.0.0.1:${server.inbound},sidecar,sa=petstore`],
    };
    const out = mkdtempSync(join(scratch, "cg-"));
    const agent = await startUnderCallgrind<{ outbound: number }>(
      join(checkout, "build", "out", "disco-agent.mjs"),
      secureWorkloadArgs(client, mesh.app.port, await ca.tokenFile(NS, "frontend")),
      out,
      "disco-agent listening ",
      { env: { ...process.env, POD_NAME: client.name, POD_NAMESPACE: NS } },
    );
    stops.push(() => agent.stop("SIGKILL"));
    const url = `http://127.0.0.1:${agent.listening.outbound}/pets/42?key=bench`;
    const headers = { host: `${DEMO_SERVICE}:${SERVICE_PORT}` };
    await autocannon({ url, headers, connections: 16, amount: WARM_UP, timeout: 60 });
    const xfcc = mesh.app.seen.at(-1)?.headers["x-forwarded-client-cert"];
    if (!xfcc) throw new Error("the app saw no X-Forwarded-Client-Cert: the requests did not go over mutual TLS");
    mesh.app.seen.length = 0;
    const tlsBefore = await tlsConnections(server.adminUrl);
    const pid = String(agent.proc.pid);
    execFileSync("callgrind_control", ["--instr=on", pid], { stdio: "ignore" });
    execFileSync("callgrind_control", ["--zero", pid], { stdio: "ignore" });
    const r = await autocannon({ url, headers, connections: 16, amount: REQUESTS, timeout: 60 });
    mesh.app.seen.length = 0;
    const handshakes = (await tlsConnections(server.adminUrl)) - tlsBefore;
    for (const f of readdirSync(out)) rmSync(join(out, f));
    execFileSync("callgrind_control", ["--dump", pid], { stdio: "ignore" });
    const totals = readdirSync(out)
      .filter((f) => f.startsWith(`callgrind.out.${pid}.`))
      .map((f) => dumpFileTotal(join(out, f)))
      .sort((a, b) => b - a);
    const n = r.requests.total;
    const failed = r.non2xx + r.errors;
    return [
      `client sidecar instructions per request over mutual TLS (callgrind; ${WARM_UP} requests of warm-up, ${REQUESTS} counted, 16 connections; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")})`,
      `${checkout}: main thread ${Math.round(totals[0] / n)}, all threads ${Math.round(totals.reduce((a, b) => a + b, 0) / n)} (${totals.length} threads); ${handshakes} TLS connections accepted by the server during the count${failed ? `; ${failed} not 2xx: ${JSON.stringify(r.statusCodeStats)}` : ""}`,
    ];
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await mesh.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The TLS connections the server's sidecar accepted so far (its /stats). */
async function tlsConnections(adminUrl: string): Promise<number> {
  const body = await (await fetch(`${adminUrl}/stats`)).text();
  const line = body.split("\n").find((l) => l.startsWith("listener.inbound.tls_connections: "));
  return Number(line?.split(": ")[1] ?? Number.NaN);
}

const here = join(import.meta.dirname, "..", "..");
const named = process.argv[2];
for (const line of await runMtlsCallgrind(named === undefined || named === "." ? here : named)) console.log(line);
process.exit(0);
