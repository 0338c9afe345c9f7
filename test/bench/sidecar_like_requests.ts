// The requests the in-process filter-host benches drive (filter_host_callgrind.ts,
// module_footprint.ts, filter_host_locality.ts): what the sidecar bench's traffic gives FilterHost
// (16 keep-alive connections, the listener's request headers, a 200 answer), and
// a hub that grants every Check for the whole run, so the check cache never
// expires and wall time does not change what is measured. Types and classes
// come from the caller, which may load them from another checkout
// (`checkoutRequests` does that).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

type CheckMessages = (name: "mesh.hub.v1.CheckRequest" | "mesh.hub.v1.CheckResponse") => {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: { longs: NumberConstructor }): unknown;
  fromObject(object: object): unknown;
  encode(message: unknown): { finish(): Uint8Array };
};

/** A hub answering at once: every Check granted (and every quota asked) for an hour, every Report accepted. */
export function grantingHub(messageType: CheckMessages) {
  const checkRequest = messageType("mesh.hub.v1.CheckRequest");
  const checkResponse = messageType("mesh.hub.v1.CheckResponse");
  return {
    async call(call: { method: string; message: Uint8Array }) {
      if (call.method !== "Check") return { ok: true as const, message: new Uint8Array(), attempts: 1 };
      const asked = checkRequest.toObject(checkRequest.decode(call.message), { longs: Number }) as { quotas?: Record<string, { amount: number }> };
      const quotas = Object.fromEntries(
        Object.entries(asked.quotas ?? {}).map(([name, q]) => [name, { grantedAmount: q.amount, validDuration: { seconds: 3600 } }]),
      );
      const grant = { precondition: { status: { code: 0 }, validDuration: { seconds: 3600 }, validUseCount: 1_000_000 }, quotas };
      return { ok: true as const, message: checkResponse.encode(checkResponse.fromObject(grant)).finish(), attempts: 1 };
    },
  };
}

/** The peers of the 16 connections (as `connectionFacts` reads a socket); request `i` comes on connection `i % 16`. */
export const BENCH_SOCKETS = Array.from({ length: 16 }, (_, i) => ({
  remoteAddress: "10.0.0.5",
  remotePort: 41000 + i,
  localAddress: "10.0.0.9",
  localPort: 15006,
}));

export const BENCH_ROUTE = { "mesh.destination_service": "petstore.demo.svc.cluster.local" };

/** The request headers the listener hands the filter (names lower-case), a fresh list per request. */
export function benchRequestHeaders(): Array<[string, string]> {
  return [
    [":method", "GET"],
    [":path", "/pets/42?key=bench"],
    [":authority", "petstore.demo.svc.cluster.local"],
    [":scheme", "http"],
    ["host", "petstore.demo.svc.cluster.local"],
    ["connection", "keep-alive"],
    ["user-agent", "autocannon"],
  ];
}

/** The app's answer as the filter sees it. */
export function benchResponseHeaders(): Array<[string, string]> {
  return [
    [":status", "200"],
    ["content-type", "application/json"],
    ["content-length", "27"],
    ["connection", "keep-alive"],
  ];
}

export const BENCH_UPSTREAM_ADDRESS = "10.0.0.9:8080";

/** The request's outcome at its end (`RequestProperties#outcome`). */
export function benchOutcome() {
  return { code: 200, requestBytes: 0, responseBytes: 27, durationNs: 1_000_000n };
}

/**
 * `checkout`'s FilterHost (its code and its build/filter.wasm) with the
 * shipped configuration and a granting hub, and one sidecar-like request
 * through it: request headers, response headers, the stream's end;
 * `between` runs after the request side and after the end. An event-loop
 * turn every 100 requests lets hub answers and report batches go on, as in
 * the agent.
 */
export async function checkoutRequests(checkout: string, between: () => void = () => {}) {
  const load = (path: string) => import(pathToFileURL(join(checkout, path)).href);
  const { FilterHost } = await load("host/proxy/filters/filter_host.ts");
  const { RequestProperties, connectionFacts } = await load("host/proxy/request_properties.ts");
  const { messageType } = await load("host/wire/protos.ts");
  const config = JSON.parse(readFileSync(join(checkout, "build", "deploy", "plugin-config.json"), "utf8"));
  delete config.tcpClientConfig;
  const host = new FilterHost({ wasm: join(checkout, "build", "filter.wasm"), hub: grantingHub(messageType), log: () => {}, failOpenOnTrap: () => true });
  if (!host.configure(JSON.stringify(config))) throw new Error("the filter refused the shipped configuration");
  const request = async (i: number): Promise<void> => {
    const props = new RequestProperties(connectionFacts(BENCH_SOCKETS[i % 16]), "HTTP/1.1");
    props.route = BENCH_ROUTE;
    const pending = host.onRequestHeaders(benchRequestHeaders(), props, true);
    const decision = pending instanceof Promise ? await pending : pending;
    if (decision.kind !== "continue") throw new Error(`request ${i} was not let through: ${JSON.stringify(decision)}`);
    between();
    props.upstreamAddress = BENCH_UPSTREAM_ADDRESS;
    host.onResponseHeaders(decision.id, benchResponseHeaders());
    props.outcome = benchOutcome();
    host.finish(decision.id);
    between();
    if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
  };
  return { request, close: (): Promise<void> => host.close() };
}
