import { WasmStatus } from "./abi_types.ts";
import type { ModuleMemory } from "./abi_memory.ts";
import type { ContextState, HostEnvironment } from "./abi_contexts.ts";
import { LOG_LEVELS } from "./filter_module.ts";

/** Logging, the clock, and the root context's tick period. */
export function loggingAndTimerImports(state: ContextState, memory: ModuleMemory, env: HostEnvironment) {
  let lastNow = -1n;
  let lastNowLow = 0;
  let lastNowHigh = 0;
  return {
    proxy_log(level: number, ptr: number, len: number) {
      if (level > 5) return WasmStatus.BadArgument;
      env.log(LOG_LEVELS[level], memory.text(ptr, len));
      return WasmStatus.Ok;
    },
    proxy_get_log_level(out: number) {
      memory.view.setUint32(out, env.logLevel ?? 2, true);
      return WasmStatus.Ok;
    },
    proxy_get_current_time_nanoseconds(out: number) {
      // The clock repeats its value (the sidecar's per millisecond): its
      // two 32-bit halves are kept, a store each, with no bigint write.
      const now = env.now();
      if (now !== lastNow) {
        lastNow = now;
        lastNowLow = Number(BigInt.asUintN(32, now));
        lastNowHigh = Number(BigInt.asUintN(32, now >> 32n));
      }
      const view = memory.view;
      view.setUint32(out, lastNowLow, true);
      view.setUint32(out + 4, lastNowHigh, true);
      return WasmStatus.Ok;
    },
    proxy_set_tick_period_milliseconds(ms: number) {
      env.tickPeriod(state.rootOf(state.current), ms);
      return WasmStatus.Ok;
    },
  };
}
