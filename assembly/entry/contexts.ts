import { HttpStream } from "../proxy/http_stream";
import { Plugin } from "../proxy/plugin";
import { TcpConnection } from "../proxy/tcp_connection";
import { ContextTable } from "../abi/context_table";
import { Spares } from "../spares";

// The context table: root contexts (one plugin each), HTTP streams and TCP
// connections by the ids the host assigns. The only module-level state of the
// ABI layer: the host addresses everything by context id, so something must
// map ids to state. A context created under a root starts as an HTTP stream;
// proxy_on_new_connection turns it into a TCP connection (the ABI tells the
// two apart only by the callbacks that follow).

export const plugins = new Map<u32, Plugin>();
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
export function createStream(id: u32, rootId: u32): void {
  let stream = spareStreams.take();
  if (stream !== null) stream.reuse(id, rootId);
  else stream = new HttpStream(id, rootId);
  streams.set(id, stream);
}

/** Takes stream `id` out of the table; its object becomes a spare. False when `id` is no stream. */
export function deleteStream(id: u32): bool {
  const stream = streams.find(id);
  if (stream === null) return false;
  streams.delete(id);
  spareStreams.give(stream);
  return true;
}

export function pluginFor(rootId: u32): Plugin | null {
  return plugins.has(rootId) ? plugins.get(rootId) : null;
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
