import { StreamType, WasmStatus } from "./abi_types.ts";
import type { ModuleMemory } from "./abi_memory.ts";
import type { ContextState, DataDirection } from "./abi_contexts.ts";
import { decodePairs } from "./pairs.ts";

/**
 * Stream control: continue or close the effective stream or connection, and
 * send a local reply instead of the upstream's. Effects are recorded for the
 * embedder to apply once the callback has returned, as Envoy defers them.
 */
export function streamControlImports(state: ContextState, memory: ModuleMemory) {
  return {
    proxy_continue_stream(type: number) {
      const s = state.effectiveStream();
      if (!s) return WasmStatus.NotFound;
      if (type === StreamType.Request) s.continued = true;
      const c = s.connection;
      if (c && type === StreamType.Downstream && !c.closeDownstream) {
        c.continued = true;
        release(c.downstream);
      }
      if (c && type === StreamType.Upstream) release(c.upstream);
      return WasmStatus.Ok;
    },
    proxy_close_stream(type: number) {
      const s = state.effectiveStream();
      if (!s) return WasmStatus.NotFound;
      const c = s.connection;
      if (c && type === StreamType.Downstream) {
        // Envoy closes without flushing: what the module held is dropped.
        c.closeDownstream = true;
        c.downstream.held = new Uint8Array();
      }
      if (c && type === StreamType.Upstream) c.closeUpstream = true;
      return WasmStatus.Ok;
    },
    proxy_send_local_response(status: number, dPtr: number, dLen: number, bPtr: number, bLen: number, hPtr: number, hLen: number, grpcStatus: number) {
      const s = state.effectiveStream();
      if (!s) return WasmStatus.NotFound;
      s.localReply = {
        status,
        // Envoy replaces spaces in details so log parsers do not split them.
        details: memory.text(dPtr, dLen).replace(/ /g, "_"),
        body: memory.text(bPtr, bLen),
        headers: hLen > 0 ? decodePairs(memory.bytesAt(hPtr, hLen)) : [],
        grpcStatus,
      };
      return WasmStatus.Ok;
    },
  };
}

/** The held bytes of a connection's direction released for forwarding. */
export function release(direction: DataDirection): void {
  if (direction.held.length > 0) direction.released.push(direction.held);
  direction.held = new Uint8Array();
}

/** The parts as one array (the part itself when only one is not empty). */
export function concat(parts: Uint8Array[]): Uint8Array {
  const nonEmpty = parts.filter((p) => p.length > 0);
  if (nonEmpty.length === 1) return nonEmpty[0];
  const out = new Uint8Array(nonEmpty.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of nonEmpty) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The bytes released since the last call, as one array; the direction starts afresh. */
export function takeReleased(direction: DataDirection): Uint8Array {
  const out = concat(direction.released);
  direction.released = [];
  return out;
}
