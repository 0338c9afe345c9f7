// What cold caches cost the module's callbacks (issue 30): FilterHost driven
// in process as the sidecar drives it (the requests of
// filter_host_callgrind.ts, the hub answered at once), each request's
// request side (context create + request headers) and log side (log, done,
// delete) timed one by one, with something different between requests in
// each condition, run in alternating rounds on one host:
//   back to back      requests one after the other (a turn every 100)
//   a turn each       an event-loop turn (setImmediate) after each request
//   a 1 ms spin each  the process spins on the clock for 1 ms after each
//                     request (keeps its core; time passes, caches stay)
//   a 1 ms sleep each the process sleeps 1 ms after each request: its core
//                     runs something else meanwhile (or idles), as an
//                     agent's does between requests on a shared machine
//   N KiB between     N KiB of memory written between the request side and
//                     the log side (FILTER_LOCALITY_TRAFFIC_KIB, 2048: this
//                     machine's L2 per core)
// Medians of wall time (a loaded machine preempts some callbacks; the
// median is the typical callback), µs.
//   node --import tsx test/bench/filter_host_locality.ts   (after npm run build)
// Not part of `npm run bench`: an explanation, not a target.
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { loadavg } from "node:os";
import { join } from "node:path";
import { setImmediate as turn, setTimeout as sleep } from "node:timers/promises";
import { FilterHost } from "../../host/proxy/filters/filter_host.ts";
import { RequestProperties, connectionFacts } from "../../host/proxy/request_properties.ts";
import { RELEASE_WASM, BUILD_DIR } from "../../host/wasm/filter_module.ts";
import { messageType } from "../../host/wire/protos.ts";
import {
  BENCH_ROUTE,
  BENCH_SOCKETS,
  BENCH_UPSTREAM_ADDRESS,
  benchOutcome,
  benchRequestHeaders,
  benchResponseHeaders,
  grantingHub,
} from "./sidecar_like_requests.ts";

const WARM_UP = 10_000;
const REQUESTS = Number(process.env.FILTER_LOCALITY_REQUESTS ?? 2000);
const ROUNDS = Number(process.env.FILTER_LOCALITY_ROUNDS ?? 3);
const TRAFFIC_KIB = Number(process.env.FILTER_LOCALITY_TRAFFIC_KIB ?? 2048);

const hub = grantingHub(messageType);

const config = JSON.parse(readFileSync(join(BUILD_DIR, "deploy", "plugin-config.json"), "utf8"));
delete config.tcpClientConfig;
const host = new FilterHost({ wasm: RELEASE_WASM, hub, log: () => {}, failOpenOnTrap: () => true });
if (!host.configure(JSON.stringify(config))) throw new Error("the filter refused the shipped configuration");
const traffic = new Float64Array((TRAFFIC_KIB * 1024) / 8);

type Between = "nothing" | "turn" | "spin" | "sleep" | "traffic";

// performance.now() allocates nothing (a bigint clock would, and its scavenges would touch memory).
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** One request; returns the request side's and the log side's wall time, ns. */
async function request(i: number, between: Between): Promise<[number, number]> {
  const props = new RequestProperties(connectionFacts(BENCH_SOCKETS[i % 16] as unknown as Socket), "HTTP/1.1");
  props.route = BENCH_ROUTE;
  const headers = benchRequestHeaders();
  const a = process.hrtime.bigint();
  const pending = host.onRequestHeaders(headers, props, true);
  const b = process.hrtime.bigint();
  const decision = pending instanceof Promise ? await pending : pending;
  if (decision.kind !== "continue") throw new Error(`request ${i} was not let through`);
  if (between === "traffic") for (let j = 0; j < traffic.length; j += 8) traffic[j]++;
  props.upstreamAddress = BENCH_UPSTREAM_ADDRESS;
  host.onResponseHeaders(decision.id, benchResponseHeaders());
  props.outcome = benchOutcome();
  const c = process.hrtime.bigint();
  host.finish(decision.id);
  const d = process.hrtime.bigint();
  if (between === "turn") await turn();
  else if (between === "spin") spin(1);
  else if (between === "sleep") await sleep(1);
  else if (i % 100 === 99) await turn();
  return [Number(b - a), Number(d - c)];
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] / 1000;

const conditions: Array<[string, Between]> = [
  ["back to back", "nothing"],
  ["a turn each", "turn"],
  ["a 1 ms spin each", "spin"],
  ["a 1 ms sleep each", "sleep"],
  [`${TRAFFIC_KIB} KiB between`, "traffic"],
];
let i = 0;
for (; i < WARM_UP; i++) await request(i, "nothing");
const times = conditions.map(() => ({ request: [] as number[], log: [] as number[] }));
const loadBefore = loadavg()[0];
for (let round = 0; round < ROUNDS; round++) {
  for (const [k, [, between]] of conditions.entries()) {
    for (let n = 0; n < REQUESTS; n++, i++) {
      const [req, log] = await request(i, between);
      times[k].request.push(req);
      times[k].log.push(log);
    }
  }
}
await host.close();
console.log(
  `filter host callbacks in process, median wall µs per request (${ROUNDS} rounds of ${REQUESTS} requests each, after ${WARM_UP}; load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)})`,
);
console.log(`${"".padEnd(22)}${"request side".padStart(14)}${"log side".padStart(10)}`);
for (const [k, [name]] of conditions.entries()) {
  console.log(`${name.padEnd(22)}${median(times[k].request).toFixed(2).padStart(14)}${median(times[k].log).toFixed(2).padStart(10)}`);
}
