// Where a captured outbound connection goes, from its original destination
// (host/capture/original_destination.ts), as Envoy's virtualOutbound hands a
// redirected socket to the listener owning that address (research
// mesh-runtime.md §3): a Service's cluster address and port → that service
// (HTTP ports to the HTTP connection manager, which routes by Host; TCP
// ports proxied as TCP to its endpoints); an endpoint's own address and port
// → that endpoint; anything else → the original destination itself
// (PassthroughCluster, ALLOW_ANY) or nowhere (BlackHoleCluster, REGISTRY_ONLY).
// Pure.
import { clusterName } from "../../mesh/cluster_names.ts";
import type { MeshService, MeshServicePort } from "../../mesh/registry.ts";

export interface Destination {
  readonly address: string;
  readonly port: number;
}

/** What the router knows: the registry's services (cluster addresses, ports, endpoints) and endpoints known otherwise (`--endpoint`). */
export interface CaptureRegistry {
  readonly services: readonly Pick<MeshService, "fqdn" | "addresses" | "ports" | "instances">[];
  readonly endpoints?: readonly (Destination & { readonly protocol?: string })[];
}

export type CapturedOutbound =
  /** HTTP: the connection manager routes each request (by Host; `service` when the address named one). */
  | { readonly kind: "http"; readonly service?: string }
  /** Not declared HTTP or TCP: look at the client's first bytes, then `http` or `otherwise`. */
  | { readonly kind: "sniff"; readonly service?: string; readonly otherwise: CapturedOutbound & { kind: "tcp" } }
  /** Proxied as TCP to one of `endpoints` (none: the connection is closed, upstream's "no healthy upstream"). */
  | {
      readonly kind: "tcp";
      readonly cluster: string;
      readonly endpoints: readonly Destination[];
      /** The registry's service port the connection is for: the cluster manager picks its endpoint and client TLS (round robin, auto mutual TLS). */
      readonly service?: { readonly fqdn: string; readonly port: number };
    }
  /** Unknown destination: REGISTRY_ONLY closes it. */
  | { readonly kind: "blackhole" };

/** Protocols the sidecar's HTTP connection manager serves. */
const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(["http", "http2", "grpc", "grpc-web"]);

export type OutboundTrafficMode = "ALLOW_ANY" | "REGISTRY_ONLY";

/** The route of a captured outbound connection to `d`. */
export function routeCapturedOutbound(registry: CaptureRegistry, d: Destination, mode: OutboundTrafficMode): CapturedOutbound {
  for (const s of registry.services) {
    if (!s.addresses.includes(d.address)) continue;
    const port = s.ports.find((p) => p.port === d.port);
    if (!port) continue;
    return byProtocol(port.protocol, s.fqdn, {
      kind: "tcp",
      cluster: clusterName(s.fqdn, d.port),
      endpoints: endpointsOf(s, port),
      service: { fqdn: s.fqdn, port: d.port },
    });
  }
  // An endpoint's own address (a pod IP): that endpoint, as the protocol of the service port it serves says.
  for (const s of registry.services) {
    for (const instance of s.instances ?? []) {
      if (instance.address !== d.address || !instance.ports.some((p) => p.port === d.port)) continue;
      const served = instance.ports.find((p) => p.port === d.port)!;
      const port = s.ports.find((p) => (served.name !== undefined && p.name === served.name) || p.targetPort === d.port);
      return byProtocol(port?.protocol, s.fqdn, { kind: "tcp", cluster: clusterName(s.fqdn, port?.port ?? d.port), endpoints: [d] });
    }
  }
  const known = registry.endpoints?.find((e) => e.address === d.address && e.port === d.port);
  if (known) return byProtocol(known.protocol, undefined, { kind: "tcp", cluster: PASSTHROUGH_CLUSTER, endpoints: [d] });
  return mode === "REGISTRY_ONLY" ? { kind: "blackhole" } : { kind: "tcp", cluster: PASSTHROUGH_CLUSTER, endpoints: [d] };
}

/** Upstream's cluster of an ALLOW_ANY destination (the original destination itself). */
export const PASSTHROUGH_CLUSTER = "PassthroughCluster";
/** Upstream's cluster of a REGISTRY_ONLY refusal. */
export const BLACKHOLE_CLUSTER = "BlackHoleCluster";

function byProtocol(protocol: string | undefined, service: string | undefined, tcp: CapturedOutbound & { kind: "tcp" }): CapturedOutbound {
  const named = service !== undefined ? { service } : {};
  if (protocol === undefined) return { kind: "sniff", ...named, otherwise: tcp };
  return HTTP_PROTOCOLS.has(protocol) ? { kind: "http", ...named } : tcp;
}

/** The addresses of a service port's endpoints: the Endpoints port of the same name (upstream's EDS matches by name), else the numeric targetPort. */
function endpointsOf(s: Pick<MeshService, "instances" | "ports">, port: MeshServicePort): Destination[] {
  const out: Destination[] = [];
  for (const instance of s.instances ?? []) {
    const byName = port.name !== undefined ? instance.ports.find((p) => p.name === port.name) : undefined;
    const only = instance.ports.length === 1 ? instance.ports[0] : undefined;
    const number = byName?.port ?? (typeof port.targetPort === "number" ? port.targetPort : only?.port);
    if (number !== undefined) out.push({ address: instance.address, port: number });
  }
  return out;
}

/** Methods an HTTP/1.x request line starts with, and HTTP/2's prior-knowledge preface. */
const HTTP_STARTS = ["GET ", "POST ", "PUT ", "DELETE ", "HEAD ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE ", "PRI * HTTP/2.0"];

/** Whether a client's first bytes look like HTTP (upstream's http_inspector): a request line's method, or the HTTP/2 preface. */
export function looksLikeHttp(first: Buffer): boolean {
  const text = first.subarray(0, 16).toString("latin1");
  return HTTP_STARTS.some((start) => (text.length >= start.length ? text.startsWith(start) : start.startsWith(text)));
}

/**
 * The protocol of a captured inbound connection's original destination (the
 * pod's address and the port called): that of the service port the address
 * serves, when the registry has it as an endpoint; `tcp` for any declared
 * protocol the HTTP connection manager does not serve; undefined when
 * undeclared or unknown (the first bytes decide).
 */
export function capturedInboundProtocol(registry: CaptureRegistry, d: Destination): "http" | "tcp" | undefined {
  for (const s of registry.services) {
    for (const instance of s.instances ?? []) {
      const served = instance.address === d.address ? instance.ports.find((p) => p.port === d.port) : undefined;
      if (!served) continue;
      const port = s.ports.find((p) => (served.name !== undefined && p.name === served.name) || p.targetPort === d.port);
      if (port?.protocol === undefined) return undefined;
      return HTTP_PROTOCOLS.has(port.protocol) ? "http" : "tcp";
    }
  }
  return undefined;
}
