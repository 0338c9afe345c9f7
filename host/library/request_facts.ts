// One embedded request as the module reads it: the header list (pseudo-headers
// first, as Envoy's codec makes them) and the properties a proxy would answer
// (proxy-wasm.md §1.5) from the connection facts the application gives.

import type { PropertySource, PropertyValue } from "../wasm/abi_host.ts";
import type { HeaderList } from "../wasm/abi_types.ts";
import { type StreamOutcome, outcomeProperty } from "../proxy/request_properties.ts";
import type { CheckRequest, HeaderValue } from "./types.ts";

/** The request's headers: `:method`, `:path`, `:authority`, `:scheme`, then the others with lower-case names (`host` is `:authority`). */
export function requestHeaderList(request: CheckRequest): HeaderList {
  const headers: HeaderList = [];
  let host: string | undefined;
  const add = (name: string, value: HeaderValue) => {
    const lower = name.toLowerCase();
    if (value === undefined || lower.startsWith(":")) return;
    if (lower === "host") {
      host ??= String(value);
      return;
    }
    if (typeof value === "string") headers.push([lower, value]);
    else if (typeof value === "number") headers.push([lower, String(value)]);
    else for (const v of value) headers.push([lower, v]);
  };
  const given = request.headers;
  if (Array.isArray(given)) for (const [name, value] of given as ReadonlyArray<readonly [string, string]>) add(name, value);
  else if (given) for (const name of Object.keys(given)) add(name, (given as Record<string, HeaderValue>)[name]);
  const authority = request.authority ?? host ?? "";
  return [[":method", request.method], [":path", request.path], [":authority", authority], [":scheme", request.scheme ?? "http"], ...headers];
}

/** Response headers as the module reads them: lower-case names, a value per entry. */
export function headerPairs(headers: Readonly<Record<string, HeaderValue>>): HeaderList {
  const out: HeaderList = [];
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (typeof value === "string") out.push([lower, value]);
    else if (typeof value === "number") out.push([lower, String(value)]);
    else for (const v of value) out.push([lower, v]);
  }
  return out;
}

/** What a request's report needs once its response is over (the sidecar's StreamOutcome). */
export type RequestOutcome = StreamOutcome;

/** `ip:port`, bracketing an IPv6 address (Envoy's form of source.address). */
function socketAddress(ip: string | undefined, port: number | undefined): string | undefined {
  if (!ip) return undefined;
  const host = ip.includes(":") ? `[${ip}]` : ip;
  return `${host}:${port ?? 0}`;
}

/**
 * The properties of one embedded request, answered when the module reads
 * them (request time, then log time with the outcome set).
 */
export class CheckProperties implements PropertySource {
  outcome: RequestOutcome | undefined;
  private readonly source: string | undefined;
  private readonly destination: string | undefined;

  constructor(
    private readonly request: CheckRequest,
    private readonly service: string | undefined,
  ) {
    this.source = socketAddress(request.sourceAddress, request.sourcePort);
    this.destination = socketAddress(request.destinationAddress, request.destinationPort);
  }

  property(name: string): PropertyValue | undefined {
    const completed = this.outcome && outcomeProperty(this.outcome, name);
    if (completed !== undefined) return completed;
    switch (name) {
      case "source.address":
        return this.source;
      case "destination.address":
        return this.destination;
      case "connection.mtls":
        return this.request.peerIdentity !== undefined;
      case "connection.uri_san_peer_certificate":
        return this.request.peerIdentity;
      case "request.protocol":
        return this.request.protocol ?? "HTTP/1.1";
      case "mesh.destination_service":
        return this.service;
    }
    return undefined;
  }
}
