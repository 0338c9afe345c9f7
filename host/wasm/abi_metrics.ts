import { MetricKind, WasmStatus } from "./abi_types.ts";
import type { ModuleMemory } from "./abi_memory.ts";
import type { Metric } from "./abi_contexts.ts";

/** Metrics: counters, gauges and histograms the module defines by name, kept by id. */
export function metricImports(metrics: Map<number, Metric>, memory: ModuleMemory) {
  return {
    proxy_define_metric(kind: number, nPtr: number, nLen: number, outId: number) {
      const name = memory.text(nPtr, nLen);
      let id = [...metrics].find(([, m]) => m.name === name)?.[0];
      if (id === undefined) {
        id = metrics.size + 1;
        metrics.set(id, { name, kind: kind as MetricKind, value: 0n });
      }
      memory.view.setUint32(outId, id, true);
      return WasmStatus.Ok;
    },
    proxy_increment_metric(id: number, delta: bigint) {
      const m = metrics.get(id);
      if (!m) return WasmStatus.NotFound;
      if (m.kind === MetricKind.Counter && delta <= 0n) return WasmStatus.BadArgument;
      m.value += delta;
      return WasmStatus.Ok;
    },
    proxy_record_metric(id: number, value: bigint) {
      const m = metrics.get(id);
      if (!m) return WasmStatus.NotFound;
      m.value = m.kind === MetricKind.Gauge ? value : m.value + value;
      return WasmStatus.Ok;
    },
    proxy_get_metric(id: number, out: number) {
      const m = metrics.get(id);
      if (!m) return WasmStatus.NotFound;
      memory.view.setBigUint64(out, m.value, true);
      return WasmStatus.Ok;
    },
  };
}
