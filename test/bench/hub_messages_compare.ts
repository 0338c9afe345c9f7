// Two builds of the module, the same hub messages (issue 30: a change to
// the module's code must leave every decision and report byte for byte as it
// was). Each workload drives FilterHost in process with one checkout's
// module and then the other's, over the same requests on a virtual clock,
// and records every hub call (method and message bytes), every decision,
// every response-header change and every log line; the two records must be
// equal. Workloads vary the configuration (the shipped one; caches and
// report batching off; FAIL_OPEN with a failing hub; forwarded attributes
// ignored; static attributes over derived ones), the hub's answers (grants,
// denials, quota exhausted, failures) and the requests (methods, paths with
// and without queries and API keys, matched and unmatched patterns, host
// without :authority, user agents, request ids, referers, sizes, gRPC
// content types and statuses, tracing headers, forwarded attributes,
// connection properties, mTLS peers, JWT payloads, response codes).
//   node --import tsx test/bench/hub_messages_compare.ts <checkout A> <checkout B>   (both built)
// Prints one line per workload and exits 1 on the first difference. Each
// workload is run once with each checkout before the two recorded runs.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BENCH_SOCKETS } from "./sidecar_like_requests.ts";

const REQUESTS = Number(process.env.HUB_COMPARE_REQUESTS ?? 450);

type Answer = "grant" | "deny" | "no-quota" | "fail" | "mixed";

interface Workload {
  name: string;
  config: (shipped: Record<string, unknown>) => Record<string, unknown>;
  answer: Answer;
}

function transport(c: Record<string, unknown>, change: Record<string, unknown>): Record<string, unknown> {
  const http = c.httpClientConfig as Record<string, unknown>;
  return { ...c, httpClientConfig: { ...http, transport: { ...(http.transport as object), ...change } } };
}

function http(c: Record<string, unknown>, change: Record<string, unknown>): Record<string, unknown> {
  return { ...c, httpClientConfig: { ...(c.httpClientConfig as object), ...change } };
}

const WORKLOADS: Workload[] = [
  { name: "shipped, grants", config: (c) => c, answer: "grant" },
  { name: "shipped, mixed answers", config: (c) => c, answer: "mixed" },
  { name: "shipped, denials", config: (c) => c, answer: "deny" },
  { name: "shipped, quota exhausted", config: (c) => c, answer: "no-quota" },
  {
    name: "caches and batching off",
    config: (c) => transport(c, { disableCheckCache: true, disableQuotaCache: true, disableReportBatch: true }),
    answer: "mixed",
  },
  {
    name: "FAIL_OPEN, failing hub",
    config: (c) => transport(c, { networkFailPolicy: { policy: "FAIL_OPEN", maxRetry: 0 } }),
    answer: "fail",
  },
  { name: "forwarded attributes ignored", config: (c) => http(c, { ignoreForwardedAttributes: true }), answer: "grant" },
  {
    name: "static attributes over derived ones",
    config: (c) =>
      http(c, {
        hubAttributes: {
          attributes: {
            "destination.uid": { stringValue: "kubernetes://petstore-v1.demo" },
            "request.host": { stringValue: "static.host" },
            "destination.ip": { bytesValue: "CgAACQ==" },
            "destination.port": { int64Value: "9090" },
          },
        },
      }),
    answer: "mixed",
  },
];

const PATHS = ["/pets/42?key=bench", "/pets", "/pets/7", "/pets/7?key=k2&x=%41", "/owners/3/files/a.txt", "/nope?key=", "/pets?key=k3", "/pets/9?x=1"];
const METHODS = ["GET", "GET", "POST", "GET", "DELETE", "GET", "PUT"];

/** Request `i`'s headers, properties' stage and outcome: every field varies with its own period. */
function requestOf(i: number) {
  const headers: Array<[string, string]> = [
    [":method", METHODS[i % METHODS.length]],
    [":path", PATHS[i % PATHS.length]],
    [":scheme", i % 11 === 3 ? "https" : "http"],
  ];
  if (i % 9 !== 4) headers.push([":authority", i % 5 === 0 ? "petstore.demo.svc.cluster.local:8080" : "petstore.demo.svc.cluster.local"]);
  else headers.push(["host", "petstore.demo"]);
  if (i % 3 !== 1) headers.push(["user-agent", `agent/${i % 4}`]);
  if (i % 4 === 2) headers.push(["x-request-id", `id-${i % 13}`]);
  if (i % 7 === 5) headers.push(["referer", "http://frontend/ü"]);
  if (i % 6 === 1) headers.push(["content-length", String(i % 50)]);
  if (i % 8 === 3) headers.push(["content-type", i % 16 === 3 ? "application/grpc+proto" : "application/json"]);
  if (i % 10 === 7) headers.push(["x-api-key", `hk${i % 3}`]);
  if (i % 12 === 5) headers.push(["x-b3-traceid", `t${i % 5}`], ["x-b3-spanid", "s1"]);
  if (i % 17 === 2) headers.push(["cookie", `a=b; key=c${i % 2}`]);
  if (i % 14 === 9) headers.push(["x-mesh-attributes", "CgwKCnNvdXJjZS51aWQ="]);
  const stage: Record<string, string> | undefined =
    i % 5 === 1
      ? {
          "connection.uri_san_peer_certificate": "spiffe://cluster.local/ns/demo/sa/frontend",
          "connection.uri_san_local_certificate": "spiffe://cluster.local/ns/demo/sa/petstore",
          "connection.requested_server_name": "petstore.demo",
          ...(i % 10 === 1 ? { "mesh.authn_payload": JSON.stringify({ iss: "https://issuer", sub: `u${i % 3}`, aud: ["a", "b"] }) } : {}),
        }
      : undefined;
  const status = [200, 200, 404, 503, 201][i % 5];
  const responseHeaders: Array<[string, string]> = [
    [":status", String(status)],
    ["content-type", i % 16 === 3 ? "application/grpc" : "application/json"],
  ];
  if (i % 16 === 3) responseHeaders.push(["grpc-status", String(i % 3)], ["grpc-message", "m"]);
  const outcome = { code: status, requestBytes: i % 50, responseBytes: 27 + (i % 3), durationNs: BigInt(1_000_000 + i * 1000) };
  return { headers, stage, responseHeaders, outcome, upstream: i % 6 === 5 ? undefined : `10.0.0.${9 + (i % 2)}:8080` };
}

/** Everything one checkout's module did over a workload, as lines. */
async function record(checkout: string, workload: Workload): Promise<string[]> {
  const load = (path: string) => import(pathToFileURL(join(checkout, path)).href);
  const { FilterHost } = await load("host/proxy/filters/filter_host.ts");
  const { RequestProperties, connectionFacts } = await load("host/proxy/request_properties.ts");
  const { messageType } = await load("host/wire/protos.ts");
  const checkRequest = messageType("mesh.hub.v1.CheckRequest");
  const checkResponse = messageType("mesh.hub.v1.CheckResponse");
  const shipped = JSON.parse(readFileSync(join(checkout, "build", "deploy", "plugin-config.json"), "utf8"));
  delete shipped.tcpClientConfig;
  const out: string[] = [];
  let calls = 0;
  const hub = {
    async call(call: { method: string; message: Uint8Array }) {
      out.push(`hub ${call.method} ${Buffer.from(call.message).toString("hex")}`);
      const n = calls++;
      if (workload.answer === "fail" || (workload.answer === "mixed" && n % 7 === 6))
        return { ok: false as const, code: 14, message: "unavailable", attempts: 1 };
      if (call.method !== "Check") return { ok: true as const, message: new Uint8Array(), attempts: 1 };
      const asked = checkRequest.toObject(checkRequest.decode(call.message), { longs: Number }) as { quotas?: Record<string, { amount: number }> };
      const noQuota = workload.answer === "no-quota" || (workload.answer === "mixed" && n % 5 === 3);
      const quotas = Object.fromEntries(
        Object.entries(asked.quotas ?? {}).map(([name, q]) => [name, { grantedAmount: noQuota ? 0 : q.amount, validDuration: { seconds: 5 } }]),
      );
      const denied = workload.answer === "deny" || (workload.answer === "mixed" && n % 4 === 1);
      const status = denied ? { code: 7, message: "not allowed" } : { code: 0 };
      const grant = { precondition: { status, validDuration: { seconds: 2 }, validUseCount: 20 }, quotas };
      return { ok: true as const, message: checkResponse.encode(checkResponse.fromObject(grant)).finish(), attempts: 1 };
    },
  };
  let clock = 1_800_000_000_000_000_000n;
  const host = new FilterHost({
    wasm: join(checkout, "build", "filter.wasm"),
    hub,
    log: (level: number, message: string) => out.push(`log ${level} ${message}`),
    now: () => clock,
    failOpenOnTrap: () => true,
  });
  if (!host.configure(JSON.stringify(workload.config(shipped)))) throw new Error(`${workload.name}: the filter refused the configuration`);
  for (let i = 0; i < REQUESTS; i++) {
    clock += 37_000_000n;
    const r = requestOf(i);
    const props = new RequestProperties(connectionFacts(BENCH_SOCKETS[i % 16]), "HTTP/1.1");
    props.route = { "mesh.destination_service": "petstore.demo.svc.cluster.local" };
    if (r.stage) {
      props.stage = r.stage;
      props.mtls = true;
    }
    const pending = host.onRequestHeaders(r.headers, props, true);
    const decision = pending instanceof Promise ? await pending : pending;
    out.push(`decision ${i} ${JSON.stringify(decision)}`);
    if (decision.kind === "continue") {
      if (r.upstream) props.upstreamAddress = r.upstream;
      out.push(`response ${i} ${JSON.stringify(host.onResponseHeaders(decision.id, r.responseHeaders))}`);
      props.outcome = r.outcome;
      host.finish(decision.id);
    } else if (decision.kind === "reply") {
      props.outcome = { ...r.outcome, code: decision.reply.status };
      host.finish(decision.id);
    }
    if (i % 50 === 49) await new Promise((done) => setImmediate(done));
  }
  await host.close();
  return out;
}

const [a, b] = process.argv.slice(2).map((c) => resolve(c));
if (!a || !b) throw new Error("usage: hub_messages_compare.ts <checkout A> <checkout B>");
let total = 0;
for (const workload of WORKLOADS) {
  // Each checkout once unrecorded first: the module's ticks run on real
  // timers, and the first run of a workload (compiling the module and the
  // host's code) was slow enough on a loaded machine to get a batch flush
  // earlier than the second, even with the same checkout twice.
  await record(a, workload);
  await record(b, workload);
  const [ra, rb] = [await record(a, workload), await record(b, workload)];
  const hubMessages = ra.filter((l) => l.startsWith("hub ")).length;
  const first = ra.findIndex((l, k) => l !== rb[k]);
  if (first >= 0 || ra.length !== rb.length) {
    const k = first >= 0 ? first : Math.min(ra.length, rb.length);
    console.log(`${workload.name}: DIFFERENT at line ${k}\n  A: ${ra[k]?.slice(0, 400)}\n  B: ${rb[k]?.slice(0, 400)}`);
    process.exit(1);
  }
  total += hubMessages;
  console.log(`${workload.name}: identical (${ra.length} lines, ${hubMessages} hub messages)`);
}
console.log(`all ${WORKLOADS.length} workloads identical: ${total} hub messages`);
