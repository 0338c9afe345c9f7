import { type BufferType, MapType, WasmStatus } from "./abi_types.ts";
import type { ModuleMemory } from "./abi_memory.ts";
import type { ContextState } from "./abi_contexts.ts";
import { HeaderMap } from "./header_map.ts";
import { decodePairs } from "./pairs.ts";
import { PairsCache } from "./pairs_cache.ts";

const NO_BYTES = new Uint8Array();

/**
 * Header maps and buffers: the effective stream's request and response
 * headers and trailers (read as pairs maps or by name, changed in place),
 * and the buffers a callback may read (configuration, body or TCP data, a
 * gRPC answer).
 */
export function headerImports(state: ContextState, memory: ModuleMemory) {
  const mapOf = (type: MapType): HeaderMap | undefined => {
    const s = state.effectiveStream();
    if (!s) return undefined;
    return (s.maps[type] ??= new HeaderMap([]));
  };
  // The last serialization of each kind of map: most of a request's headers are those of the one before.
  const lastPairs: PairsCache[] = [];
  return {
    proxy_get_buffer_status(type: number, outSize: number, outFlags: number) {
      const b = state.buffers.get(type as BufferType);
      if (!b) return WasmStatus.NotFound;
      memory.view.setUint32(outSize, b.length, true);
      memory.view.setUint32(outFlags, 0, true);
      return WasmStatus.Ok;
    },
    proxy_get_buffer_bytes(type: number, start: number, max: number, outPtr: number, outLen: number) {
      const b = state.buffers.get(type as BufferType);
      if (!b) return WasmStatus.NotFound;
      return memory.give(b.subarray(Math.min(start, b.length), Math.min(b.length, start + max)), outPtr, outLen);
    },
    proxy_get_header_map_pairs(type: number, outPtr: number, outLen: number) {
      const s = state.effectiveStream();
      if (!s) return WasmStatus.NotFound;
      // A map never given (no trailers) reads as empty, without being made.
      const map = s.maps[type];
      if (!map || map.size === 0) return memory.give(NO_BYTES, outPtr, outLen);
      // One pass: room for the longest encoding, then the length written.
      const ptr = memory.allocateOut(map.serializedCapacity(), outPtr, outLen);
      if (ptr === 0) return WasmStatus.InternalFailure;
      memory.view.setUint32(outLen, map.writeTo(memory.bytes, ptr, (lastPairs[type] ??= new PairsCache())), true);
      return WasmStatus.Ok;
    },
    proxy_set_header_map_pairs(type: number, ptr: number, len: number) {
      const map = mapOf(type as MapType);
      if (!map) return WasmStatus.NotFound;
      map.setAll(decodePairs(memory.bytesAt(ptr, len)).map(([k, v]) => [k.toLowerCase(), v] as [string, string]));
      return WasmStatus.Ok;
    },
    proxy_get_header_map_value(type: number, kPtr: number, kLen: number, outPtr: number, outLen: number) {
      const map = mapOf(type as MapType);
      const found = map?.get(memory.text(kPtr, kLen).toLowerCase());
      if (found === undefined) return WasmStatus.NotFound;
      return memory.giveValue(found, outPtr, outLen);
    },
    proxy_add_header_map_value(type: number, kPtr: number, kLen: number, vPtr: number, vLen: number) {
      const map = mapOf(type as MapType);
      if (!map) return WasmStatus.NotFound;
      map.add(memory.headerName(kPtr, kLen), memory.headerText(vPtr, vLen));
      return WasmStatus.Ok;
    },
    proxy_replace_header_map_value(type: number, kPtr: number, kLen: number, vPtr: number, vLen: number) {
      const map = mapOf(type as MapType);
      if (!map) return WasmStatus.NotFound;
      map.replace(memory.headerName(kPtr, kLen), memory.headerText(vPtr, vLen));
      return WasmStatus.Ok;
    },
    proxy_remove_header_map_value(type: number, kPtr: number, kLen: number) {
      const map = mapOf(type as MapType);
      if (!map) return WasmStatus.NotFound;
      map.remove(memory.text(kPtr, kLen).toLowerCase());
      return WasmStatus.Ok;
    },
    proxy_get_header_map_size(type: number, out: number) {
      const map = mapOf(type as MapType);
      if (!map) return WasmStatus.NotFound;
      memory.view.setUint32(out, map.serializedLength(), true);
      return WasmStatus.Ok;
    },
  };
}
