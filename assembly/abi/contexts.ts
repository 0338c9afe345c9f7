import { HttpStream } from "../proxy/http_stream";
import { Plugin } from "../proxy/plugin";

// The context table: root contexts (one plugin each) and HTTP streams by the
// ids the host assigns. The only module-level state of the ABI layer: the
// host addresses everything by context id, so something must map ids to state.

export const plugins = new Map<u32, Plugin>();
export const streams = new Map<u32, HttpStream>();

export function pluginFor(rootId: u32): Plugin | null {
  return plugins.has(rootId) ? plugins.get(rootId) : null;
}

export function streamFor(id: u32): HttpStream | null {
  return streams.has(id) ? streams.get(id) : null;
}
