import { HttpStream } from "../proxy/http_stream";
import { Spares } from "../proxy/stream_pool";
import { Plugin } from "../proxy/plugin";
import { TcpConnection } from "../proxy/tcp_connection";
import { ContextTable } from "../abi/context_table";

// The context table: root contexts (one plugin each), HTTP streams and TCP
// connections by the ids the host assigns. The only module-level state of the
// ABI layer: the host addresses everything by context id, so something must
// map ids to state. A context created under a root starts as an HTTP stream;
// proxy_on_new_connection turns it into a TCP connection (the ABI tells the
// two apart only by the callbacks that follow).

const plugins = new Map<u32, Plugin>();
// The root every stream of a proxy's plugin names: the last one found is
// kept, so a request finds its plugin without a hash lookup.
let lastRootId: u32 = 0;
let lastPlugin: Plugin | null = null;
// Streams and connections come and go with requests: tables that allocate
// only to grow (context_table.ts).
export const streams = new ContextTable<HttpStream>();
export const connections = new ContextTable<TcpConnection>();

// Streams of deleted contexts, handed to the next contexts created: a
// stream's objects are only reachable through this table (hub calls name
// their stream by id), so once deleted it can start over. Beyond this many
// spares the collector takes them.
const MAX_SPARE_STREAMS: i32 = 64;
const spareStreams = new Spares<HttpStream>(MAX_SPARE_STREAMS);

/** Files a new HTTP stream `id` under root `rootId`, reusing a deleted one's object when there is one. */
// @ts-ignore: decorator
@inline
export function createStream(id: u32, rootId: u32): void {
  let stream = spareStreams.take();
  if (stream !== null) {
    stream.reuse(id, rootId);
  } else {
    stream = new HttpStream(id, rootId);
  }
  streams.set(id, stream);
}

/** Takes stream `id` out of the table; its object becomes a spare. False when `id` is no stream. */
// @ts-ignore: decorator
@inline
export function deleteStream(id: u32): bool {
  const stream = streams.find(id);
  if (stream === null) return false;
  streams.delete(id);
  spareStreams.give(stream);
  return true;
}

/** Files root context `id`'s plugin, replacing one filed under the same id. */
export function addPlugin(id: u32, plugin: Plugin): void {
  plugins.set(id, plugin);
  if (lastRootId == id) lastPlugin = plugin;
}

/** Forgets root context `id`'s plugin (no-op when unknown). */
export function removePlugin(id: u32): void {
  plugins.delete(id);
  if (lastRootId == id) lastPlugin = null;
}

// @ts-ignore: decorator
@inline
export function pluginFor(rootId: u32): Plugin | null {
  const last = lastPlugin;
  return last !== null && lastRootId == rootId ? last : findPlugin(rootId);
}

function findPlugin(rootId: u32): Plugin | null {
  if (!plugins.has(rootId)) return null;
  const plugin = plugins.get(rootId);
  lastRootId = rootId;
  lastPlugin = plugin;
  return plugin;
}

export function streamFor(id: u32): HttpStream | null {
  return streams.find(id);
}

export function connectionFor(id: u32): TcpConnection | null {
  return connections.find(id);
}

/** Turns the stream context `id` into a TCP connection; null when the id is unknown. */
export function becomeConnection(id: u32): TcpConnection | null {
  const known = connections.find(id);
  if (known !== null) return known;
  const stream = streamFor(id);
  if (stream === null) return null;
  const rootId = stream.rootId;
  deleteStream(id);
  const conn = new TcpConnection(id, rootId);
  connections.set(id, conn);
  return conn;
}
