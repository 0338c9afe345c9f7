import protobuf from "protobufjs";
import { envoyType } from "../wire/envoy_protos.ts";
import { type Resource, resourceVersion } from "./resource_set.ts";

/**
 * ADS messages on the wire, built from bytes encoded once: each resource
 * list a response carries (a shared selection, or an incremental push's
 * shared changes) is encoded once and copied into every proxy's response
 * beside the few fields that are the proxy's own (nonce, version). Field
 * numbers are envoy.service.discovery.v3's (discovery.proto); a protobuf
 * reader takes a message's fields in any order.
 */

const LENGTH_DELIMITED = 2;
const tag = (w: protobuf.Writer, field: number) => w.uint32((field << 3) | LENGTH_DELIMITED);

/** google.protobuf.Any (type_url 1, value 2) as field `field` of the enclosing message. */
function writeAny(w: protobuf.Writer, field: number, any: Resource["any"]): void {
  tag(w, field).fork();
  tag(w, 1).string(any.type_url);
  tag(w, 2).bytes(any.value);
  w.ldelim();
}

/**
 * Bytes to cache: in a buffer of their own. Small encodings are slices of
 * Node's shared 8 KiB pool, and one kept slice (a pod's listeners) keeps
 * its whole pool block alive.
 */
const kept = (bytes: Uint8Array): Uint8Array => (bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes));

const sotwLists = new WeakMap<readonly Resource[], Uint8Array>();

/** DiscoveryResponse.resources (field 2) of a list, encoded once per list object. */
export function sotwResourceBytes(resources: readonly Resource[]): Uint8Array {
  let bytes = sotwLists.get(resources);
  if (!bytes) {
    const w = protobuf.Writer.create();
    for (const r of resources) writeAny(w, 2, r.any);
    sotwLists.set(resources, (bytes = kept(w.finish())));
  }
  return bytes;
}

const deltaEntries = new WeakMap<Resource, Uint8Array>();
const deltaLists = new WeakMap<readonly Resource[], Uint8Array>();

/** One DeltaDiscoveryResponse.resources entry (field 2): a Resource with its version (1), Any (2) and name (3); encoded once per resource object. */
function deltaEntry(r: Resource): Uint8Array {
  let bytes = deltaEntries.get(r);
  if (!bytes) {
    const w = protobuf.Writer.create();
    tag(w, 2).fork();
    tag(w, 1).string(resourceVersion(r));
    writeAny(w, 2, r.any);
    tag(w, 3).string(r.name);
    w.ldelim();
    deltaEntries.set(r, (bytes = kept(w.finish())));
  }
  return bytes;
}

/**
 * DeltaDiscoveryResponse.resources of a list (each with its resourceVersion);
 * encoded once per list object when the list is `shared` by many responses
 * (a selection, a push's changes), else each time (a list made for one
 * proxy: caching its bytes would only keep them alive longer).
 */
export function deltaResourceBytes(resources: readonly Resource[], shared: boolean): Uint8Array {
  if (!shared) return Buffer.concat(resources.map(deltaEntry));
  let bytes = deltaLists.get(resources);
  if (!bytes) deltaLists.set(resources, (bytes = kept(Buffer.concat(resources.map(deltaEntry)))));
  return bytes;
}

const controlPlanes = new Map<string, Uint8Array>();

/** ControlPlane{identifier} as field `field`, encoded once per identifier. */
function controlPlane(field: number, identifier: string | undefined): Uint8Array {
  if (identifier === undefined) return new Uint8Array();
  const key = `${field}\0${identifier}`;
  let bytes = controlPlanes.get(key);
  if (!bytes) {
    const w = protobuf.Writer.create();
    tag(w, field).fork();
    tag(w, 1).string(identifier);
    w.ldelim();
    controlPlanes.set(key, (bytes = w.finish()));
  }
  return bytes;
}

/** A message's length-delimited fields (numbers 1 to 15: one-byte tags) in order: strings, and fields already encoded. */
type Part = readonly [field: number, value: string] | Uint8Array;

const varintSize = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

/** The message in one buffer, sized first: no writer, no intermediate buffers (small ones come from Node's pool). */
function message(parts: readonly Part[]): Buffer {
  let size = 0;
  const lengths: number[] = [];
  for (const p of parts) {
    if (p instanceof Uint8Array) size += p.byteLength;
    else {
      const n = Buffer.byteLength(p[1]);
      lengths.push(n);
      size += 1 + varintSize(n) + n;
    }
  }
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  let i = 0;
  for (const p of parts) {
    if (p instanceof Uint8Array) {
      out.set(p, pos);
      pos += p.byteLength;
      continue;
    }
    out[pos++] = (p[0] << 3) | LENGTH_DELIMITED;
    let n = lengths[i++];
    const length = n;
    while (n >= 0x80) {
      out[pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    out[pos++] = n;
    pos += out.write(p[1], pos, length, "utf8");
  }
  return out;
}

/** DiscoveryResponse: version_info 1, resources 2 (pre-encoded), type_url 4, nonce 5, control_plane 6. */
export function discoveryResponse(version: string, type: string, nonce: string, resources: Uint8Array, identifier: string | undefined): Buffer {
  return message([...(version === "" ? [] : [[1, version] as const]), resources, [4, type], [5, nonce], controlPlane(6, identifier)]);
}

/** DeltaDiscoveryResponse: system_version_info 1, resources 2 (pre-encoded), type_url 4, nonce 5, removed_resources 6, control_plane 7. */
export function deltaDiscoveryResponse(
  version: string,
  type: string,
  nonce: string,
  resources: Uint8Array,
  removed: readonly string[],
  identifier: string | undefined,
): Buffer {
  return message([
    ...(version === "" ? [] : [[1, version] as const]),
    resources,
    [4, type],
    [5, nonce],
    ...removed.map((n) => [6, n] as const),
    controlPlane(7, identifier),
  ]);
}

export interface NodeFields {
  id?: string;
  cluster?: string;
  metadata?: unknown;
  user_agent_name?: string;
}

export interface DiscoveryRequest {
  version_info: string;
  node?: NodeFields;
  resource_names: string[];
  type_url: string;
  response_nonce: string;
  error_detail?: { code?: number; message?: string };
}

export interface DeltaDiscoveryRequest {
  node?: NodeFields;
  type_url: string;
  resource_names_subscribe: string[];
  resource_names_unsubscribe: string[];
  initial_resource_versions?: Record<string, string>;
  response_nonce: string;
  error_detail?: { code?: number; message?: string };
}

let requestTypes: { sotw: protobuf.Type; delta: protobuf.Type } | undefined;
const types = () =>
  (requestTypes ??= {
    sotw: envoyType("envoy.service.discovery.v3.DiscoveryRequest"),
    delta: envoyType("envoy.service.discovery.v3.DeltaDiscoveryRequest"),
  });

/**
 * A decoded request in plain object form. Most requests are ACKs (a type,
 * a nonce, a version): decoded, their fields are read as they are; only a
 * request with a Node (the first of a stream) takes the slower conversion
 * to plain objects, for its metadata Struct.
 */
function decodeRequest<T>(type: protobuf.Type, bytes: Uint8Array): T {
  const message = type.decode(bytes) as unknown as Record<string, unknown>;
  if (message.node) return type.toObject(message as unknown as protobuf.Message, { defaults: true, longs: String }) as T;
  const out: Record<string, unknown> = {};
  for (const f of type.fieldsArray) {
    const v = message[f.name];
    if (f.map) out[f.name] = v ?? {};
    else if (f.repeated) out[f.name] = v ?? [];
    else if (f.resolvedType instanceof protobuf.Type) out[f.name] = v ?? undefined;
    else out[f.name] = v;
  }
  if (out.error_detail) out.error_detail = (out.error_detail as protobuf.Message).toJSON();
  return out as T;
}

export const decodeDiscoveryRequest = (bytes: Uint8Array): DiscoveryRequest => decodeRequest(types().sotw, bytes);
export const decodeDeltaDiscoveryRequest = (bytes: Uint8Array): DeltaDiscoveryRequest => decodeRequest(types().delta, bytes);

/** A state-of-the-world ACK as read off the wire: its names left encoded (`names`: their fields' bytes, in order). */
export interface SotwAck {
  readonly version: string;
  readonly typeUrl: string;
  readonly nonce: string;
  readonly names: Uint8Array;
}

/**
 * A DiscoveryRequest that holds only version_info (1), resource_names (3,
 * one run of them), type_url (4) and response_nonce (5), read without
 * decoding its names: an ACK, which repeats every name the proxy
 * subscribes to (Envoy's EDS: one per cluster). Undefined for anything
 * else (a Node, an error_detail, names split by other fields): decode it.
 */
export function readSotwAck(bytes: Uint8Array): SotwAck | undefined {
  const r = protobuf.Reader.create(bytes);
  let version = "";
  let typeUrl = "";
  let nonce = "";
  let start = -1;
  let end = -1;
  while (r.pos < r.len) {
    const at = r.pos;
    const tag = r.uint32();
    if ((tag & 7) !== LENGTH_DELIMITED) return undefined;
    const field = tag >>> 3;
    if (field === 3) {
      if (start < 0) start = at;
      else if (end !== at) return undefined;
      r.skip(r.uint32());
      end = r.pos;
    } else if (field === 1) version = r.string();
    else if (field === 4) typeUrl = r.string();
    else if (field === 5) nonce = r.string();
    else return undefined;
  }
  return { version, typeUrl, nonce, names: start < 0 ? new Uint8Array() : bytes.subarray(start, end) };
}
