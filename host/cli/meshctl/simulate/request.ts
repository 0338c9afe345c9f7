import { type OutgoingHttpHeaders, request } from "node:http";
import { serviceDomains } from "../../../mesh/hosts.ts";
import { SCENARIO_DOMAIN, workloadServiceFqdn } from "./resources.ts";
import type { RequestSpec } from "./scenario.ts";
import type { ScenarioMesh } from "./scenario_mesh.ts";
import type { TokenKeys } from "./tokens.ts";

/** The output line of one scenario (issue 6 item 6; fixed format, optional fields only added). */
export interface SimulateResult {
  id: string | number;
  outcome: "http" | "connection-failure";
  status: number | null;
  body: string | null;
  responseHeaders: Record<string, string | string[]>;
  sent: { path: string; headers: Record<string, string | string[]> };
  upstream: null | { workload: string; headers: Record<string, string | string[]> };
  /** Added: where the client connected (`outbound sidecar of foo/sleep`, `127.0.0.1:port`). */
  via?: string;
  /** Added: the socket error of a connection failure. */
  error?: string;
  /** Added (issue 11): the VirtualService, route index and destination that served the request, and which sidecar routed it. */
  route?: { by: string; virtualService: string; routeIndex: number; destination: string };
  /** Added: milliseconds from sending the request to the end of the answer (an injected delay shows here). */
  elapsedMs?: number;
}

/** How long one request may take before it counts as a connection failure. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** The request as the client sends it: tokens minted and placed, Host set. */
export async function buildRequest(spec: RequestSpec, keys: TokenKeys): Promise<{ path: string; headers: Record<string, string | string[]> }> {
  const host = spec.authority ?? ("host" in spec.to ? `${spec.to.host}:${spec.to.port}` : undefined);
  const headers: Record<string, string | string[]> = { ...(host ? { host } : {}), ...spec.headers };
  const query: string[] = [];
  for (const t of spec.tokens) {
    const token = await keys.mint(t, spec.clockOffsetSeconds);
    if ("query" in t.location) {
      query.push(`${encodeURIComponent(t.location.query)}=${encodeURIComponent(token)}`);
      continue;
    }
    const value = `${t.location.prefix}${token}`;
    const earlier = headers[t.location.header];
    headers[t.location.header] = earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value];
  }
  const path = query.length === 0 ? spec.path : `${spec.path}${spec.path.includes("?") ? "&" : "?"}${query.join("&")}`;
  headers.connection = "close";
  return { path, headers };
}

/**
 * Where the client connects: its sidecar's outbound listener when it has
 * one (a `{workload, containerPort}` target bypasses it, like a call to a
 * pod address); otherwise the destination directly — a service FQDN or an
 * external hostname resolves to its loopback stand-in.
 */
export function resolveConnection(spec: RequestSpec, mesh: ScenarioMesh): { port: number; via: string } | { error: string } {
  const client = mesh.workloads.get(spec.from)!;
  if ("workload" in spec.to) {
    const port = mesh.workloads.get(spec.to.workload)?.address(spec.to.containerPort);
    return port === undefined
      ? { error: `${spec.to.workload} does not listen on container port ${spec.to.containerPort}` }
      : { port, via: `${spec.to.workload}:${spec.to.containerPort}` };
  }
  const outbound = [...client.sidecars.values()][0];
  if (outbound && client.spec.kind === "app") return { port: outbound.outbound, via: `outbound sidecar of ${client.spec.id}` };
  const { host, port } = spec.to;
  // Cluster DNS as upstream's clients see it: every host form of a service (`httpbin`, `httpbin.foo`, …) from the client's namespace.
  const clientNamespace = client.spec.namespace;
  for (const w of mesh.workloads.values()) {
    for (const p of w.spec.ports) {
      const byService =
        w.spec.service !== undefined &&
        p.servicePort === port &&
        serviceDomains(workloadServiceFqdn(w.spec.service, w.spec.namespace), clientNamespace, SCENARIO_DOMAIN).includes(host);
      const byHostname = w.spec.hostname !== undefined && host === w.spec.hostname.toLowerCase() && (p.servicePort ?? p.containerPort) === port;
      const at = byService || byHostname ? w.address(p.containerPort) : undefined;
      if (at !== undefined) return { port: at, via: `${w.spec.id}:${p.containerPort}` };
    }
  }
  return { error: `getaddrinfo ENOTFOUND ${host}` };
}

/** Sends one plain-text HTTP/1.1 request on a fresh connection to 127.0.0.1:port. */
export function send(
  port: number,
  method: string,
  sent: { path: string; headers: Record<string, string | string[]> },
): Promise<Pick<SimulateResult, "outcome" | "status" | "body" | "responseHeaders" | "error">> {
  return new Promise((resolve) => {
    const failure = (e: Error) => resolve({ outcome: "connection-failure", status: null, body: null, responseHeaders: {}, error: e.message });
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: sent.path,
        headers: sent.headers as OutgoingHttpHeaders,
        agent: false,
        setHost: false,
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => {
          const responseHeaders: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) responseHeaders[k] = v;
          resolve({ outcome: "http", status: res.statusCode ?? 0, body, responseHeaders });
        });
        res.on("error", failure);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on("error", failure);
    req.end();
  });
}
