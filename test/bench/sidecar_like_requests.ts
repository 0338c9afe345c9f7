// The requests the in-process filter-host benches drive (filter_host_callgrind.ts,
// filter_host_locality.ts): what the sidecar bench's traffic gives FilterHost
// (16 keep-alive connections, the listener's request headers, a 200 answer), and
// a hub that grants every Check for the whole run, so the check cache never
// expires and wall time does not change what is measured. Types and classes
// come from the caller, which may load them from another checkout.

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
