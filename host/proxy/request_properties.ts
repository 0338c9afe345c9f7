import type { Socket } from "node:net";
import type { PropertySource, PropertyValue } from "../wasm/abi_host.ts";

/** A connection's `source.address` and `destination.address` (`ip:port`). */
export interface ConnectionAddresses {
  readonly source: string;
  readonly destination: string;
}

const addressesOf = new WeakMap<Socket, ConnectionAddresses>();

/**
 * The addresses of a connection, made once per connection: its keep-alive
 * requests share the strings instead of building them each time (and the
 * filter writes them into module memory from a string already flat).
 */
export function connectionAddresses(socket: Socket): ConnectionAddresses {
  let known = addressesOf.get(socket);
  if (known === undefined) {
    known = { source: `${socket.remoteAddress}:${socket.remotePort}`, destination: `${socket.localAddress}:${socket.localPort}` };
    addressesOf.set(socket, known);
  }
  return known;
}

/** What a stream's report needs once it is over, recorded in one step. */
export interface StreamOutcome {
  code: number;
  requestBytes: number;
  responseBytes: number;
  durationNs: bigint;
}

/**
 * The properties the filter may read for one HTTP request, answered when
 * read (the module reads some at request time and the report's at log time):
 * nothing is encoded for a property it never asks for, and the values go
 * straight into module memory. Later facts take precedence, as they replaced
 * earlier ones before: the outcome, the upstream address, the security
 * stage's properties and mTLS flag, the listener's route properties, then
 * the connection's.
 */
export class RequestProperties implements PropertySource {
  /** The listener's properties for the authority (e.g. `mesh.destination_service`). */
  route: Readonly<Record<string, string>> | undefined;
  /** The security stage's (`connection.*`, `mesh.authn_payload`), when it ran. */
  stage: Readonly<Record<string, string>> | undefined;
  mtls = false;
  upstreamAddress: string | undefined;
  outcome: StreamOutcome | undefined;

  constructor(
    private readonly sourceAddress: string,
    private readonly destinationAddress: string,
    private readonly protocol: string,
  ) {}

  property(name: string): PropertyValue | undefined {
    const o = this.outcome;
    if (o) {
      switch (name) {
        case "response.code":
          return o.code;
        case "request.size":
        case "request.total_size":
          return o.requestBytes;
        case "response.size":
        case "response.total_size":
          return o.responseBytes;
        case "request.duration":
          return o.durationNs;
      }
    }
    if (name === "upstream.address" && this.upstreamAddress !== undefined) return this.upstreamAddress;
    if (this.stage) {
      if (Object.hasOwn(this.stage, name)) return this.stage[name];
      if (name === "connection.mtls") return this.mtls;
    }
    if (this.route && Object.hasOwn(this.route, name)) return this.route[name];
    switch (name) {
      case "source.address":
        return this.sourceAddress;
      case "destination.address":
        return this.destinationAddress;
      case "connection.mtls":
        return false;
      case "request.protocol":
        return this.protocol;
    }
    return undefined;
  }
}
