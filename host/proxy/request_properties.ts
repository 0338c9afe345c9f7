import type { Socket } from "node:net";
import type { PropertySource, PropertyValue } from "../wasm/abi_host.ts";

/**
 * What the requests of one connection share: its `source.address` and
 * `destination.address` (`ip:port`), made once and shared by its keep-alive
 * requests (the filter writes them into module memory from strings already
 * flat), and the identity of their request-time answers (answersKey).
 */
export class ConnectionFacts {
  readonly source: string;
  readonly destination: string;
  private route: Readonly<Record<string, string>> | undefined;
  private protocol = "";
  private key: object | undefined;

  constructor(socket: Socket) {
    this.source = `${socket.remoteAddress}:${socket.remotePort}`;
    this.destination = `${socket.localAddress}:${socket.localPort}`;
  }

  /** One object for as long as the connection's requests go to the same route properties with the same protocol. */
  keyFor(route: Readonly<Record<string, string>> | undefined, protocol: string): object {
    if (this.key === undefined || route !== this.route || protocol !== this.protocol) {
      this.route = route;
      this.protocol = protocol;
      this.key = {};
    }
    return this.key;
  }
}

const factsOf = new WeakMap<Socket, ConnectionFacts>();

/** The facts of the connection `socket` is, made on its first request. */
export function connectionFacts(socket: Socket): ConnectionFacts {
  let known = factsOf.get(socket);
  if (known === undefined) {
    known = new ConnectionFacts(socket);
    factsOf.set(socket, known);
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

/** The properties a stream's outcome answers (response code, sizes, duration); undefined for any other name. */
export function outcomeProperty(o: StreamOutcome, name: string): PropertyValue | undefined {
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
  return undefined;
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
    private readonly connection: ConnectionFacts,
    private readonly protocol: string,
  ) {}

  /**
   * Before the security stage, the outcome and the upstream are known, a
   * request answers as every request of its connection to the same route
   * does: the host may keep the serialized answer under this key.
   */
  answersKey(): object | undefined {
    if (this.stage !== undefined || this.outcome !== undefined || this.upstreamAddress !== undefined || this.mtls) return undefined;
    return this.connection.keyFor(this.route, this.protocol);
  }

  property(name: string): PropertyValue | undefined {
    const completed = this.outcome && outcomeProperty(this.outcome, name);
    if (completed !== undefined) return completed;
    if (name === "upstream.address" && this.upstreamAddress !== undefined) return this.upstreamAddress;
    if (this.stage) {
      if (Object.hasOwn(this.stage, name)) return this.stage[name];
      if (name === "connection.mtls") return this.mtls;
    }
    if (this.route && Object.hasOwn(this.route, name)) return this.route[name];
    switch (name) {
      case "source.address":
        return this.connection.source;
      case "destination.address":
        return this.connection.destination;
      case "connection.mtls":
        return false;
      case "request.protocol":
        return this.protocol;
    }
    return undefined;
  }
}
