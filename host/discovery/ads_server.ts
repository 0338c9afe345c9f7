import type * as grpc from "@grpc/grpc-js";
import { envoyType } from "../wire/envoy_protos.ts";
import { type ResourceSet, contentVersion, selectResources } from "./resource_set.ts";
import { SHORT_TYPE, WILDCARD_TYPES } from "./type_urls.ts";

/**
 * The Aggregated Discovery Service (envoy.service.discovery.v3, state of the
 * world) over one gRPC method: each proxy opens a stream, subscribes per
 * resource type, and is sent that type's resources whenever they change for
 * it. ACKs and NACKs are honoured: a NACKed version is logged and counted and
 * nothing is resent until the resources change again, so the proxy keeps its
 * last good configuration.
 */

const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const identity = (b: Buffer): Buffer => b;

/** The proxy on the other end of a stream, as its Node message says. */
export interface ProxyNode {
  readonly id: string;
  readonly cluster: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Node.user_agent_name: `envoy`, `gRPC Node Pure JS`, `disco-agent`, … (host/discovery/proxy_kind.ts). */
  readonly userAgentName: string;
}

/** What happened on the streams, for counters and logs (all optional). */
export interface AdsObserver {
  connected?(node: ProxyNode): void;
  disconnected?(node: ProxyNode): void;
  /** A response was written; `sinceChangeMs` is the time since the change that caused it (pushes only). */
  sent?(node: ProxyNode, type: string, version: string, resources: number, push: boolean): void;
  acked?(node: ProxyNode, type: string, version: string): void;
  nacked?(node: ProxyNode, type: string, version: string, message: string): void;
}

interface Subscription {
  names: ReadonlySet<string> | "*";
  sentVersion?: string;
  sentNonce?: string;
  ackedVersion?: string;
  nacked?: { version: string; message: string };
}

/** One connected proxy (for the debug pages). */
export interface ConnectionState {
  readonly id: string;
  readonly node: ProxyNode;
  readonly connectedAt: Date;
  readonly subscriptions: ReadonlyMap<string, Readonly<Subscription>>;
}

class Connection {
  readonly subscriptions = new Map<string, Subscription>();
  readonly connectedAt = new Date();
  node: ProxyNode | undefined;
  private nonce = 0;

  constructor(
    readonly id: string,
    private readonly call: grpc.ServerDuplexStream<Buffer, Buffer>,
  ) {}

  send(type: string, version: string, resources: ReturnType<typeof selectResources>): string {
    const nonce = String(++this.nonce);
    const response = envoyType("envoy.service.discovery.v3.DiscoveryResponse");
    const message = response.encode(response.fromObject({ version_info: version, type_url: type, nonce, resources: resources.map((r) => r.any) })).finish();
    this.call.write(Buffer.from(message));
    return nonce;
  }
}

export class AggregatedDiscoveryService {
  private readonly connections = new Set<Connection>();
  private nextId = 0;

  /**
   * @param resourcesFor the resources a proxy may be served, computed from the
   *   mesh model; called again for every connection on each push.
   */
  constructor(
    private resourcesFor: (node: ProxyNode) => ResourceSet,
    private readonly observer: AdsObserver = {},
  ) {}

  /** Registers the service on a gRPC server. */
  addTo(server: grpc.Server): void {
    const definition = {
      StreamAggregatedResources: {
        path: ADS_PATH,
        requestStream: true,
        responseStream: true,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    };
    server.addService(definition as unknown as grpc.ServiceDefinition, {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => this.serve(call),
    });
  }

  /** The connected proxies and what each was sent and acknowledged. */
  state(): ConnectionState[] {
    return [...this.connections].filter((c) => c.node).map((c) => ({ id: c.id, node: c.node!, connectedAt: c.connectedAt, subscriptions: c.subscriptions }));
  }

  /** New resources for every proxy: each subscription whose content changed is sent again. */
  push(resourcesFor?: (node: ProxyNode) => ResourceSet): void {
    if (resourcesFor) this.resourcesFor = resourcesFor;
    for (const c of this.connections) {
      if (!c.node) continue;
      const set = this.resourcesFor(c.node);
      for (const [type, sub] of c.subscriptions) this.respond(c, type, sub, set, true);
    }
  }

  private serve(call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    const connection = new Connection(`${call.getPeer()}-${++this.nextId}`, call);
    this.connections.add(connection);
    const close = () => {
      if (!this.connections.delete(connection)) return;
      if (connection.node) this.observer.disconnected?.(connection.node);
    };
    call.on("data", (bytes: Buffer) => {
      try {
        this.onRequest(connection, bytes);
      } catch (e) {
        call.destroy(e as Error);
        close();
      }
    });
    call.on("end", () => {
      close();
      call.end();
    });
    call.on("error", close);
    call.on("cancelled", close);
  }

  private onRequest(c: Connection, bytes: Buffer): void {
    const type = envoyType("envoy.service.discovery.v3.DiscoveryRequest");
    const req = type.toObject(type.decode(bytes), { defaults: true, longs: String }) as {
      version_info: string;
      node?: { id?: string; cluster?: string; metadata?: unknown; user_agent_name?: string };
      resource_names: string[];
      type_url: string;
      response_nonce: string;
      error_detail?: { code?: number; message?: string };
    };
    if (!c.node) {
      const n = req.node ?? {};
      c.node = { id: n.id ?? "", cluster: n.cluster ?? "", metadata: structToJson(n.metadata), userAgentName: n.user_agent_name ?? "" };
      this.observer.connected?.(c.node);
    }
    const node = c.node;
    const names: ReadonlySet<string> | "*" = req.resource_names.length === 0 && WILDCARD_TYPES.has(req.type_url) ? "*" : new Set(req.resource_names);
    let sub = c.subscriptions.get(req.type_url);
    if (sub && req.response_nonce && req.response_nonce !== sub.sentNonce) return; // answers an older response: superseded
    if (sub && req.response_nonce) {
      if (req.error_detail) {
        sub.nacked = { version: sub.sentVersion ?? "", message: req.error_detail.message ?? "" };
        this.observer.nacked?.(node, req.type_url, sub.nacked.version, sub.nacked.message);
      } else {
        sub.ackedVersion = req.version_info;
        sub.nacked = undefined;
        this.observer.acked?.(node, req.type_url, req.version_info);
      }
      if (sameNames(sub.names, names)) return;
    }
    if (!sub) {
      sub = { names };
      c.subscriptions.set(req.type_url, sub);
    }
    sub.names = names;
    sub.sentVersion = undefined; // a new subscription is answered even when nothing changed
    this.respond(c, req.type_url, sub, this.resourcesFor(node), false);
  }

  private respond(c: Connection, type: string, sub: Subscription, set: ResourceSet, push: boolean): void {
    const resources = selectResources(set, type, sub.names);
    const version = contentVersion(resources);
    if (version === sub.sentVersion) return;
    sub.sentNonce = c.send(type, version, resources);
    sub.sentVersion = version;
    this.observer.sent?.(c.node!, type, version, resources.length, push);
  }
}

function sameNames(a: ReadonlySet<string> | "*", b: ReadonlySet<string> | "*"): boolean {
  if (a === "*" || b === "*") return a === b;
  return a.size === b.size && [...a].every((n) => b.has(n));
}

/** google.protobuf.Struct (protobufjs object form) as plain JSON. */
function structToJson(struct: unknown): Record<string, unknown> {
  const fields = (struct as { fields?: Record<string, unknown> } | undefined)?.fields ?? {};
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, valueToJson(v)]));
}

// protobufjs defines the well-known types itself, with camelCase field names.
function valueToJson(v: unknown): unknown {
  const value = v as Record<string, unknown>;
  if ("stringValue" in value) return value.stringValue;
  if ("numberValue" in value) return value.numberValue;
  if ("boolValue" in value) return value.boolValue;
  if ("structValue" in value) return structToJson(value.structValue);
  if ("listValue" in value) return ((value.listValue as { values?: unknown[] }).values ?? []).map(valueToJson);
  return null;
}

export { SHORT_TYPE };
