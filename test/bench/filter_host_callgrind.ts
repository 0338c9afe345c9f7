// Instructions per request of the filter host and module in process (issue
// 30): FilterHost driven as the sidecar drives it — RequestProperties of 16
// keep-alive connections, the request headers the listener makes, the
// response headers, the outcome, finish — with the hub answered at once
// (grants valid for the whole run, so the check cache never expires and
// wall time does not change the count). Each checkout is run under
// `valgrind --tool=callgrind` with V8's --single-threaded; only the measured
// requests are counted (callgrind_control zeroes the counts after the
// warm-up and dumps them after the last request).
//   node --import tsx test/bench/filter_host_callgrind.ts [checkout ...]   (after npm run build)
// A checkout is `.` (default) or the directory of another checkout whose
// build/ holds filter.wasm and deploy/plugin-config.json, for a before and
// after. FILTER_HOST_CALLGRIND_WARM_UP (2000) and FILTER_HOST_CALLGRIND_REQUESTS
// (3000) set the request counts. Not part of `npm run bench`: valgrind is slow.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const WARM_UP = Number(process.env.FILTER_HOST_CALLGRIND_WARM_UP ?? 2000);
const REQUESTS = Number(process.env.FILTER_HOST_CALLGRIND_REQUESTS ?? 3000);
const HERE = resolve(join(import.meta.dirname, "..", ".."));

/** Runs the requests through `checkout`'s FilterHost (inside valgrind: this file with --drive). */
async function drive(checkout: string): Promise<void> {
  const load = (path: string) => import(pathToFileURL(join(checkout, path)).href);
  const { FilterHost } = await load("host/proxy/filters/filter_host.ts");
  const { RequestProperties, connectionFacts } = await load("host/proxy/request_properties.ts");
  const { messageType } = await load("host/wire/protos.ts");
  const config = JSON.parse(readFileSync(join(checkout, "build", "deploy", "plugin-config.json"), "utf8"));
  delete config.tcpClientConfig;
  const checkRequest = messageType("mesh.hub.v1.CheckRequest");
  const checkResponse = messageType("mesh.hub.v1.CheckResponse");
  const hub = {
    async call(call: { method: string; message: Uint8Array }) {
      if (call.method !== "Check") return { ok: true, message: new Uint8Array(), attempts: 1 };
      const asked = checkRequest.toObject(checkRequest.decode(call.message), { longs: Number }) as { quotas?: Record<string, { amount: number }> };
      const quotas = Object.fromEntries(
        Object.entries(asked.quotas ?? {}).map(([name, q]) => [name, { grantedAmount: q.amount, validDuration: { seconds: 3600 } }]),
      );
      const grant = { precondition: { status: { code: 0 }, validDuration: { seconds: 3600 }, validUseCount: 1_000_000 }, quotas };
      return { ok: true, message: checkResponse.encode(checkResponse.fromObject(grant)).finish(), attempts: 1 };
    },
  };
  const host = new FilterHost({ wasm: join(checkout, "build", "filter.wasm"), hub, log: () => {}, failOpenOnTrap: () => true });
  if (!host.configure(JSON.stringify(config))) throw new Error("the filter refused the shipped configuration");
  const sockets = Array.from({ length: 16 }, (_, i) => ({ remoteAddress: "10.0.0.5", remotePort: 41000 + i, localAddress: "10.0.0.9", localPort: 15006 }));
  const route = { "mesh.destination_service": "petstore.demo.svc.cluster.local" };
  const request = async (i: number) => {
    const props = new RequestProperties(connectionFacts(sockets[i % 16]), "HTTP/1.1");
    props.route = route;
    const headers = [
      [":method", "GET"],
      [":path", "/pets/42?key=bench"],
      [":authority", "petstore.demo.svc.cluster.local"],
      [":scheme", "http"],
      ["host", "petstore.demo.svc.cluster.local"],
      ["connection", "keep-alive"],
      ["user-agent", "autocannon"],
    ];
    const pending = host.onRequestHeaders(headers, props, true);
    const decision = pending instanceof Promise ? await pending : pending;
    if (decision.kind !== "continue") throw new Error(`request ${i} was not let through: ${JSON.stringify(decision)}`);
    props.upstreamAddress = "10.0.0.9:8080";
    host.onResponseHeaders(decision.id, [
      [":status", "200"],
      ["content-type", "application/json"],
      ["content-length", "27"],
      ["connection", "keep-alive"],
    ]);
    props.outcome = { code: 200, requestBytes: 0, responseBytes: 27, durationNs: 1_000_000n };
    host.finish(decision.id);
    // Hub answers and report batches go on between requests, as in the agent.
    if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
  };
  const control = (flag: string) => execFileSync("callgrind_control", [flag, String(process.pid)], { stdio: "ignore" });
  for (let i = 0; i < WARM_UP; i++) await request(i);
  control("-z");
  for (let i = 0; i < REQUESTS; i++) await request(WARM_UP + i);
  control("-d");
  await host.close();
}

/** Instructions per measured request of `checkout` (the dump callgrind_control -d wrote). */
function count(checkout: string): number {
  const out = mkdtempSync(join(tmpdir(), "mesh-filter-host-callgrind-"));
  try {
    execFileSync(
      "valgrind",
      [
        "--tool=callgrind",
        `--callgrind-out-file=${join(out, "cg.%p")}`,
        "--smc-check=all-non-file",
        process.execPath,
        "--single-threaded",
        "--import",
        "tsx",
        fileURLToPath(import.meta.url),
        "--drive",
        checkout,
      ],
      { cwd: HERE, stdio: ["ignore", "ignore", "pipe"], maxBuffer: 1 << 26 },
    );
    const dump = readdirSync(out).find((f) => /^cg\.\d+\.1$/.test(f));
    if (!dump) throw new Error(`no dump of the measured requests for ${checkout}`);
    const m = /^(?:totals|summary): (\d+)/m.exec(readFileSync(join(out, dump), "utf8"));
    if (!m) throw new Error(`no totals in ${dump}`);
    return Number(m[1]) / REQUESTS;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--drive") {
  await drive(resolve(process.argv[3]));
} else {
  const checkouts = process.argv.length > 2 ? process.argv.slice(2) : ["."];
  console.log(`filter host in process under callgrind: ${REQUESTS} requests after ${WARM_UP}, load average ${loadavg()[0].toFixed(1)}`);
  for (const checkout of checkouts) console.log(`  ${checkout}: ${Math.round(count(resolve(checkout)))} instructions per request`);
}
