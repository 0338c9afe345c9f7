// The discovery bench's light ADS clients. They run in the bench process,
// beside disco-discovery on the same cores, so each reads only what an ACK
// needs straight off the wire (protobufjs's Reader: the nonce, the version,
// for incremental streams each resource's name and version) and writes
// requests whose fixed part (type URL, subscribed names) is encoded once for
// all clients. Still honest: every response is read, and ACKed with its own
// nonce and version (per resource on incremental streams), as Envoy does.
import type * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { envoyType } from "../../host/wire/envoy_protos.ts";

const ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const DELTA = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";
const identity = (b: Buffer) => b;
const LENGTH_DELIMITED = 2;

/** What a light client subscribes to, and which resources the bench times. */
export interface LightPlan {
  /** Type URL → names (empty: wildcard). */
  readonly subscriptions: Readonly<Record<string, readonly string[]>>;
  /** The resource whose version every client's first configuration ends at (the filter's extension config): `version`. */
  readonly extension: { readonly type: string; readonly name: string };
  /** The type of the resource a one-service change changes (the load assignments). */
  readonly watchedType: string;
}

export interface LightNode {
  readonly id: string;
  readonly cluster: string;
  readonly user_agent_name: string;
}

/** A response's fields an ACK needs. */
interface Seen {
  typeUrl: string;
  nonce: string;
  /** version_info (state of the world) or system_version_info (incremental). */
  version: string;
  resources: number;
}

/** What both kinds of client record. */
export abstract class LightClientBase {
  /** Version of the extension config last ACKed, and when. */
  version = "";
  ackedAt = 0;
  /** Resources received, responses received, since `mark()`; when the watched resource was last ACKed after it. */
  resourcesSinceMark = 0;
  responsesSinceMark = 0;
  watchedAckedAt = 0;
  lastResponseAt = 0;
  protected readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  /** The resource a one-service change touches (set by `mark`), and the version held of it at that moment. */
  protected watchedName = "";

  constructor(channel: grpc.Client, path: string) {
    this.stream = channel.makeBidiStreamRequest(path, identity, identity);
    this.stream.on("error", () => {});
  }

  /** Starts counting what arrives from now, and timing the next version of `watched`. */
  mark(watched: string): void {
    this.watchedName = watched;
    this.resourcesSinceMark = 0;
    this.responsesSinceMark = 0;
    this.watchedAckedAt = 0;
  }

  close(): void {
    this.stream.cancel();
  }
}

const fieldBytes = (w: protobuf.Writer, field: number, value: string) => w.uint32((field << 3) | LENGTH_DELIMITED).string(value);

/** The fixed part of each type's requests, encoded once for every client that subscribes alike. */
const sotwPrefixes = new WeakMap<LightPlan, Map<string, Uint8Array>>();
function sotwPrefix(plan: LightPlan, type: string): Uint8Array {
  let byType = sotwPrefixes.get(plan);
  if (!byType) sotwPrefixes.set(plan, (byType = new Map()));
  let prefix = byType.get(type);
  if (!prefix) {
    const w = protobuf.Writer.create();
    for (const n of plan.subscriptions[type] ?? []) fieldBytes(w, 3, n); // resource_names
    prefix = fieldBytes(w, 4, type).finish(); // type_url
    byType.set(type, prefix);
  }
  return prefix;
}

/** DiscoveryResponse's version_info (1), resources (2, counted), type_url (4), nonce (5). */
function readResponse(b: Uint8Array): Seen {
  const r = protobuf.Reader.create(b);
  const seen: Seen = { typeUrl: "", nonce: "", version: "", resources: 0 };
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1) seen.version = r.string();
    else if (field === 4) seen.typeUrl = r.string();
    else if (field === 5) seen.nonce = r.string();
    else {
      if (field === 2) seen.resources++;
      r.skipType(tag & 7);
    }
  }
  return seen;
}

/** An Envoy-like state-of-the-world client: what Envoy subscribes to after its bootstrap, every response ACKed with its version and nonce. */
export class LightClient extends LightClientBase {
  constructor(
    channel: grpc.Client,
    node: LightNode,
    private readonly plan: LightPlan,
  ) {
    super(channel, ADS);
    this.stream.on("data", (b: Buffer) => this.onResponse(b));
    const request = envoyType("envoy.service.discovery.v3.DiscoveryRequest");
    let first = true;
    for (const type of Object.keys(plan.subscriptions)) {
      // The node goes with the first request only, as Envoy sends it.
      const head = first ? request.encode(request.fromObject({ node })).finish() : new Uint8Array();
      this.stream.write(Buffer.concat([head, sotwPrefix(plan, type)]));
      first = false;
    }
  }

  private onResponse(b: Buffer): void {
    const r = readResponse(b);
    const ack = protobuf.Writer.create();
    fieldBytes(ack, 1, r.version); // version_info
    fieldBytes(ack, 5, r.nonce); // response_nonce
    this.stream.write(Buffer.concat([sotwPrefix(this.plan, r.typeUrl), ack.finish()]));
    const now = performance.now();
    this.lastResponseAt = now;
    this.responsesSinceMark++;
    this.resourcesSinceMark += r.resources;
    if (r.typeUrl === this.plan.extension.type) {
      this.version = r.version;
      this.ackedAt = now;
    }
    // State of the world names no resource's version: a new version of the watched type after the mark is the change.
    if (this.watchedName !== "" && r.typeUrl === this.plan.watchedType) this.watchedAckedAt = now;
  }
}

/** DeltaDiscoveryResponse: system_version_info (1), each Resource's name (3) and version (1), type_url (4), nonce (5), removed_resources (6). */
function readDeltaResponse(b: Uint8Array, each: (name: string, version: string) => void): Seen & { removed: number } {
  const r = protobuf.Reader.create(b);
  const seen = { typeUrl: "", nonce: "", version: "", resources: 0, removed: 0 };
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1) seen.version = r.string();
    else if (field === 4) seen.typeUrl = r.string();
    else if (field === 5) seen.nonce = r.string();
    else if (field === 6) {
      r.skip(r.uint32());
      seen.removed++;
    } else if (field === 2) {
      const end = r.uint32() + r.pos;
      let name = "";
      let version = "";
      while (r.pos < end) {
        const t = r.uint32();
        if (t >>> 3 === 3) name = r.string();
        else if (t >>> 3 === 1) version = r.string();
        else r.skipType(t & 7);
      }
      each(name, version);
      seen.resources++;
    } else r.skipType(tag & 7);
  }
  return seen;
}

/** The same proxy on an incremental stream: subscribes name by name (the node on the first request only), ACKs each response by its nonce. */
export class LightDeltaClient extends LightClientBase {
  constructor(
    channel: grpc.Client,
    node: LightNode,
    private readonly plan: LightPlan,
  ) {
    super(channel, DELTA);
    this.stream.on("data", (b: Buffer) => this.onResponse(b));
    const request = envoyType("envoy.service.discovery.v3.DeltaDiscoveryRequest");
    let first = true;
    for (const [type_url, names] of Object.entries(plan.subscriptions)) {
      this.stream.write(Buffer.from(request.encode(request.fromObject({ ...(first ? { node } : {}), type_url, resource_names_subscribe: names })).finish()));
      first = false;
    }
  }

  private onResponse(b: Buffer): void {
    const now = performance.now();
    let watched = false;
    let extension = "";
    const { extension: ext } = this.plan;
    const r = readDeltaResponse(b, (name, version) => {
      if (name === this.watchedName) watched = true;
      if (name === ext.name) extension = version;
    });
    const ack = protobuf.Writer.create();
    fieldBytes(ack, 2, r.typeUrl); // type_url
    fieldBytes(ack, 6, r.nonce); // response_nonce
    this.stream.write(ack.finish() as Buffer); // a Buffer under Node (protobufjs's BufferWriter)
    this.lastResponseAt = now;
    this.responsesSinceMark++;
    this.resourcesSinceMark += r.resources;
    if (r.typeUrl === ext.type && extension !== "") {
      this.version = extension;
      this.ackedAt = now;
    }
    if (watched && r.typeUrl === this.plan.watchedType) this.watchedAckedAt = now;
  }
}
